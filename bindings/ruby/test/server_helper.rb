# frozen_string_literal: true

# Real servers for the Puma and Unicorn tests: the test binds a loopback listener on a
# free port (port 0) and hands its descriptor to the server (Puma's PUMA_INHERIT_0,
# Unicorn's UNICORN_FD), so that no other process can take the port in between. Each
# worker writes its pid to a pipe once it booted. The server runs in its own process
# group, stopped at the end of the test whatever happens.
require_relative "helper"
require "net/http"
require "socket"

WORKERS = 4
KEYS = Array.new(1000) { |i| "key-#{i}" }.freeze

# The Rack app the server tests run: it routes the keys of each request's body (one a
# line) with one Ring, opened at load (SHMRING_TEST_OPEN=load: in the master, with
# preload) or by the worker's first request (SHMRING_TEST_OPEN=request), and answers
# JSON. Before the ring exists a request-opening worker answers 503.
APP = <<~'RUBY'
  require "json"
  require "shmring"

  name = ENV.fetch("SHMRING_TEST_RING")
  directory = ENV.fetch("SHMRING_TEST_DIR")
  ring = nil
  opened_by = nil
  refreshed_by = nil
  if ENV["SHMRING_TEST_OPEN"] == "load"
    ring = Shmring::Ring.new(name, directory: directory)
    opened_by = Process.pid
  end

  run(lambda do |env|
    begin
      if ring.nil?
        ring = Shmring::Ring.new(name, directory: directory)
        opened_by = Process.pid
      end
    rescue Shmring::RingNotFound => e
      next [503, { "content-type" => "text/plain" }, ["#{e.message}\n"]]
    end
    # SHMRING_TEST_REFRESH: each worker follows new versions from a thread of its own,
    # off the requests' path.
    if ENV["SHMRING_TEST_REFRESH"] && refreshed_by != Process.pid
      refreshed_by = Process.pid
      Thread.new do
        loop do
          sleep 0.02
          ring.refresh
        end
      end
    end
    keys = env["rack.input"].read.split("\n")
    clock = Process::CLOCK_MONOTONIC
    # The first lookup of a request is the one that maps and validates a version
    # published since the previous request: the switch stall, timed here.
    started = Process.clock_gettime(clock, :nanosecond)
    first_id = ring.lookup_id(keys[0])
    first_ns = Process.clock_gettime(clock, :nanosecond) - started
    started = Process.clock_gettime(clock, :nanosecond)
    ring.lookup_id(keys[0])
    second_ns = Process.clock_gettime(clock, :nanosecond) - started
    generation = ring.generation
    answers = keys.map { |key| ring.lookup(key) }
    body = JSON.generate({
      "pid" => Process.pid, "opened_by" => opened_by, "generation" => generation,
      "generation_after" => ring.generation, "first_id" => first_id,
      "answers" => answers.map { |node| [node.name, node.address] },
      "ids" => keys.map { |key| ring.lookup_id(key) }, "node_ids" => answers.map(&:id),
      "first_ns" => first_ns, "second_ns" => second_ns,
      "status" => ring.status.to_a
    })
    [200, { "content-type" => "application/json" }, [body]]
  end)
RUBY

# The Rack app of the lease tests: GET /?key=K&mode=M takes a lease of K on the ring
# SHMRING_TEST_RING (opened by each worker's first request) and ends as MODE says:
# `block` returns from the block, `raise` raises out of it (the server answers 500),
# `break`, `throw` and `return` leave it so, `ensure` releases a lease taken without
# a block in an ensure clause. Each answers the worker's pid and the node's name.
LEASE_APP = <<~'RUBY'
  require "json"
  require "shmring"

  ring = nil
  modes = {
    "block" => ->(key) { ring.acquire(key) { |node| node.name } },
    "raise" => ->(key) { ring.acquire(key) { raise "the backend failed" } },
    "break" => ->(key) { ring.acquire(key) { |node| break node.name } },
    "throw" => ->(key) { catch(:done) { ring.acquire(key) { |node| throw :done, node.name } } },
    "return" => lambda do |key|
      ring.acquire(key) { |node| return node.name }
      raise "not reached"
    end,
    "ensure" => lambda do |key|
      lease = ring.acquire(key)
      begin
        lease.node.name
      ensure
        lease.release
      end
    end
  }
  run(lambda do |env|
    ring ||= Shmring::Ring.new(ENV.fetch("SHMRING_TEST_RING"), directory: ENV.fetch("SHMRING_TEST_DIR"))
    query = Rack::Utils.parse_query(env["QUERY_STRING"])
    node = modes.fetch(query["mode"]).call(query["key"])
    [200, { "content-type" => "application/json" }, [JSON.generate({ "pid" => Process.pid, "node" => node })]]
  end)
RUBY

# One server, started by #start and always stopped by #stop.
class ServerProcess
  attr_reader :pid, :port, :log

  def initialize(dir)
    @dir = dir
    @listener = TCPServer.new("127.0.0.1", 0)
    @listener.listen(64)
    @port = @listener.addr[1]
    @log = File.join(dir, "server.log")
  end

  # Spawns ARGV with ENV plus SHMRING_TEST_READY_FD, the write end of the ready pipe,
  # and (through the block) the listener's descriptor.
  def start(argv, env)
    @ready, ready_write = IO.pipe
    env = env.merge(yield(@listener.fileno)).merge("SHMRING_TEST_READY_FD" => ready_write.fileno.to_s)
    @pid = Process.spawn(env, *argv, chdir: @dir, pgroup: true, in: File::NULL,
                                     out: [@log, "w"], err: [:child, :out],
                                     @listener.fileno => @listener.fileno,
                                     ready_write.fileno => ready_write.fileno)
    ready_write.close
    @listener.close
    @ready_pids = []
    self
  end

  # Waits until COUNT more workers wrote their pid; returns them.
  def wait_for_workers(count = WORKERS)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 120
    pids = []
    while pids.size < count
      left = deadline - Process.clock_gettime(Process::CLOCK_MONOTONIC)
      raise "workers did not start within 120 s:\n#{File.read(@log)}" unless left.positive? && @ready.wait_readable(left)

      line = @ready.gets
      raise "the server exited before its workers were ready:\n#{File.read(@log)}" unless line

      pids << Integer(line)
    end
    pids
  end

  def alive?
    Process.waitpid(@pid, Process::WNOHANG).nil?
  end

  def stop
    return unless @pid

    begin
      Process.kill(:TERM, -@pid)
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 60
      sleep 0.05 while Process.waitpid(@pid, Process::WNOHANG).nil? &&
                       Process.clock_gettime(Process::CLOCK_MONOTONIC) < deadline
    rescue Errno::ESRCH, Errno::ECHILD
      nil
    ensure
      begin
        Process.kill(:KILL, -@pid)
      rescue Errno::ESRCH
        nil
      end
      begin
        Process.wait(@pid)
      rescue Errno::ECHILD
        nil
      end
      @ready&.close
      @pid = nil
    end
  end

  def get(path)
    Net::HTTP.start("127.0.0.1", @port, read_timeout: 120, open_timeout: 120) do |http|
      response = http.get(path)
      [response.code.to_i, response.body]
    end
  end

  # Sends WORKERS requests at once, each held open (its last byte unsent) until all are
  # sent, so that each goes to another worker (a worker serves one connection at a
  # time), and returns their [status, body] answers.
  def one_round(keys = KEYS)
    body = keys.join("\n")
    head = "POST / HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\n" \
           "Content-Length: #{body.bytesize}\r\n\r\n"
    sockets = Array.new(WORKERS) do
      socket = TCPSocket.new("127.0.0.1", @port)
      socket.write(head + body[0...-1])
      socket
    end
    sockets.each { |socket| socket.write(body[-1]) }
    sockets.map do |socket|
      raise "no answer within 120 s" unless socket.wait_readable(120)

      response = socket.read
      status = response[%r{\AHTTP/1\.[01] (\d+)}, 1].to_i
      [status, response.split("\r\n\r\n", 2)[1]]
    end
  ensure
    sockets&.each(&:close)
    raise "the server exited:\n#{File.read(@log)}" unless alive?
  end
end

# What the Puma and Unicorn tests check alike, for a server that runs APP.
module ServerChecks
  include RingDirectory

  def teardown
    @server&.stop
    puts File.read(@server.log) if @server && !passed? && File.exist?(@server.log)
    FileUtils.rm_rf(@work) if @work
    super
  end

  def work_dir
    @work ||= Dir.mktmpdir("shmring-rb-server-")
  end

  def app_env(ctl, open, refresh)
    { "SHMRING_TEST_RING" => ctl.name, "SHMRING_TEST_DIR" => ctl.directory,
      "SHMRING_TEST_OPEN" => open, "SHMRING_TEST_REFRESH" => refresh ? "1" : nil,
      "RUBYLIB" => ENV["RUBYLIB"] }
  end

  # Makes rounds until every worker answered; every answer (each worker's first after
  # a change included) must be ringctl's, from GENERATION. Returns {pid => answer}.
  def check_workers(ctl, generation, opened_in_master:)
    expected = ctl.lookup(KEYS).values_at(*KEYS).map(&:first)
    seen = {}
    100.times do
      @server.one_round.each do |status, body|
        assert_equal 200, status, body
        answer = JSON.parse(body)
        if opened_in_master
          assert_equal @server.pid, answer["opened_by"]
        else
          assert_equal answer["pid"], answer["opened_by"]
        end
        refute_equal @server.pid, answer["pid"]
        assert_equal [generation, generation], answer.values_at("generation", "generation_after")
        assert_equal expected, answer["answers"]
        assert_equal answer["node_ids"], answer["ids"]
        assert_equal answer["ids"][0], answer["first_id"]
        seen[answer["pid"]] ||= answer
      end
      return seen if seen.size == WORKERS
    end
    flunk "only #{seen.size} of #{WORKERS} workers answered in 100 rounds"
  end

  def generation_of(ctl)
    ctl.show["generation"]
  end

  # Every worker answers 1,000 keys as ringctl does, and follows `ringctl add` and
  # `ringctl remove` on its next request.
  def check_follows_changes(ctl, opened_in_master:)
    generation = generation_of(ctl)
    pids = check_workers(ctl, generation, opened_in_master: opened_in_master).keys.sort
    ctl.call("add", "extra", "10.9.9.9:11211", "--weight", "20")
    assert_equal pids, check_workers(ctl, generation + 1, opened_in_master: opened_in_master).keys.sort
    ctl.call("remove", "node3")
    assert_equal pids, check_workers(ctl, generation + 2, opened_in_master: opened_in_master).keys.sort
    pids
  end

  # Workers started before the ring exists answer 503, then route as ringctl once it
  # is published; after `ringctl destroy` they answer from the last version and say
  # so in their status; a ring made again under the name is followed.
  def check_ring_lifecycle(ctl)
    4.times do
      @server.one_round.each { |status, body| assert_equal [503, "no such ring: #{ctl.name.inspect}\n"], [status, body] }
    end
    ctl.load_nodes(40)
    check_follows_changes(ctl, opened_in_master: false)
    last = generation_of(ctl)
    ctl.call("destroy")
    seen = {}
    100.times do
      @server.one_round.each do |status, body|
        assert_equal 200, status
        answer = JSON.parse(body)
        assert_equal [false, true, last], answer["status"][0, 3]
        assert_equal Shmring::ENOENT, answer["status"][4]
        seen[answer["pid"]] = true
      end
      break if seen.size == WORKERS
    end
    assert_equal WORKERS, seen.size
    ctl.load_nodes(25, prefix: "again")
    # A destroyed ring's name is tried again every 100 ms or so: each worker follows
    # the new ring within a few requests, from generation 1.
    expected = ctl.lookup(KEYS).values_at(*KEYS).map(&:first)
    followed = {}
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 120
    while followed.size < WORKERS
      flunk "workers did not follow the ring made again" if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline
      @server.one_round.each do |status, body|
        assert_equal 200, status
        answer = JSON.parse(body)
        next unless answer["status"][0]

        assert_equal 1, answer["status"][2]
        assert_equal expected, answer["answers"]
        followed[answer["pid"]] = true
      end
      sleep 0.05
    end
  end

  # A batch of requests under leases (LEASE_APP), 8 at a time, ending every way a
  # block can end, a raise among them: each counted one lease, and the board shows 0
  # in flight after them, with every worker alive and holding its slot.
  def check_leases(ctl)
    modes = %w[block raise break throw return ensure]
    pids = {}
    requests = 0
    # Batches until every worker served some (the kernel chooses which worker
    # accepts a connection).
    50.times do
      lease_batch(modes, 60, requests).each do |mode, status, body|
        if mode == "raise"
          assert_equal 500, status, body
        else
          assert_equal 200, status, body
          pids[JSON.parse(body)["pid"]] = true
        end
      end
      requests += 60
      break if pids.size == WORKERS
    end
    assert_equal WORKERS, pids.size
    assert @server.alive?
    board = ctl.show["board"]
    assert_equal({ "in_flight" => 0, "acquires" => requests, "workers" => WORKERS, "reclaimed" => 0 },
                 board.slice("in_flight", "acquires", "workers", "reclaimed"))
    puts format("leases (%s): %d requests (%s) on %d workers, 0 in flight after them",
                self.class.name, requests, modes.join(", "), pids.size)
  end

  # COUNT requests of LEASE_APP, 8 at a time, their modes in turn; returns their
  # [mode, status, body] answers.
  def lease_batch(modes, count, first)
    queue = Queue.new
    count.times { |i| queue << [first + i, modes[i % modes.size]] }
    queue.close
    answers = Queue.new
    Array.new(8) do
      Thread.new do
        while (job = queue.pop)
          i, mode = job
          answers << [mode, *@server.get("/?key=key-#{i % 40}&mode=#{mode}")]
        end
      end
    end.each(&:join)
    Array.new(count) { answers.pop }
  end

  # The switch stall: after a publication at 10,000 nodes, the first lookup of each
  # worker's next request maps and validates the new version, unless the worker's
  # refresher thread did (REFRESHED: the requests are sent once `ringctl readers` shows
  # every worker on the new version). Printed, not asserted (timings belong to
  # benchmarks); the answers are checked as ever.
  def measure_switch_stall(ctl, opened_in_master:, refreshed: false)
    ctl.load_nodes(10_000)
    generation = generation_of(ctl)
    pids = check_workers(ctl, generation, opened_in_master: opened_in_master).keys
    ctl.call("add", "extra", "10.9.9.9:11211")
    if refreshed
      # A worker is on the new version once it maps no other: its refresher maps the
      # new version before it validates it and swaps the handle's view, and only
      # unmaps the old one after that swap. A worker mapping both may still answer
      # from the old one (a lookup never waits for a refresher).
      wait_until("every worker on generation #{generation + 1} alone", timeout: 120) do
        readers = JSON.parse(ctl.call("readers", "--json"))["readers"]
        pids.all? do |pid|
          mapped = readers.select { |r| r["pid"] == pid }.map { |r| r["generation"] }
          mapped == [generation + 1]
        end
      end
    end
    answers = check_workers(ctl, generation + 1, opened_in_master: opened_in_master).values
    stalls = answers.map { |a| a["first_ns"] / 1e6 }.sort
    steady = answers.map { |a| a["second_ns"] / 1e3 }.sort
    puts format("switch stall at 10,000 nodes (%s, %s): first lookup after the " \
                "publication %s ms in the %d workers; the next lookup %s us; load average %s",
                self.class.name, refreshed ? "refreshed by a thread" : "on the request",
                stalls.map { |v| format("%.3f", v) }.join(", "), WORKERS,
                steady.map { |v| format("%.1f", v) }.join(", "),
                File.read("/proc/loadavg").split.first)
  end
end
