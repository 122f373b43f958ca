# frozen_string_literal: true

# What every test file of the Ruby binding shares: minitest, the extension, and real
# rings in real shared memory made with the built ringctl (SHMRING_RINGCTL, or ringctl
# on PATH). Each test gets its own directory under /dev/shm (mode 0700, removed
# afterwards) and a ring name with the pid and a counter, so that tests may run in
# parallel and leave /dev/shm clean.
require "minitest/autorun"
require "fileutils"
require "json"
require "open3"
require "tmpdir"

require "shmring"

# Runs ringctl against one ring in one directory.
class RingCtl
  attr_reader :directory, :name

  @counter = 0
  class << self
    attr_accessor :counter
  end

  def initialize(directory, name = nil)
    @directory = directory
    @name = name || "rb#{Process.pid}-#{RingCtl.counter += 1}"
    @binary = ENV["SHMRING_RINGCTL"] || "ringctl"
  end

  # Runs `ringctl --dir DIR -r NAME ARGS...`; raises unless it succeeds. Returns stdout.
  def call(*args, input: nil)
    out, err, status = Open3.capture3(@binary, "--dir", @directory, "-r", @name, *args,
                                      stdin_data: input || "", binmode: true)
    raise "ringctl #{args.join(" ")} failed (#{status.exitstatus}): #{err}" unless status.success?

    out
  end

  # Maps each key to ringctl's answer: an array of [name, address] pairs (N of them
  # with N). Keys go through --stdin, one a line, so that many fit in one run.
  def lookup(keys, n: nil)
    args = ["lookup"] + (n ? ["-n", n.to_s] : []) + ["--stdin"]
    lines = call(*args, input: keys.join("\n") + "\n").force_encoding(Encoding::UTF_8).lines
    raise "ringctl answered #{lines.size} keys of #{keys.size}" unless lines.size == keys.size

    keys.zip(lines).to_h { |key, line| [key, line.chomp.split("\t").drop(1).each_slice(2).to_a] }
  end

  def show
    JSON.parse(call("show", "--json"))
  end

  # Replaces the node set with COUNT nodes (node0, node1, ...) through one `ringctl load`.
  def load_nodes(count, prefix: "node")
    nodes = Array.new(count) do |i|
      { "name" => "#{prefix}#{i}",
        "address" => format("10.%d.%d.%d:11211", (i >> 16) & 255, (i >> 8) & 255, i & 255) }
    end
    call("load", "-", input: JSON.generate({ "nodes" => nodes }))
  end
end

# A fresh directory under /dev/shm for each test, removed after it.
module RingDirectory
  def setup
    super
    @ring_dir = Dir.mktmpdir("shmring-rb-", "/dev/shm")
  end

  def teardown
    # A ring with a load board is destroyed first: that removes the board's segment,
    # which removing the directory would leave behind.
    @board_rings&.each { |ctl| ctl.call("destroy") }
    FileUtils.rm_rf(@ring_dir)
    super
  end

  # A ring with a load board for this process's group, balance factor 1.25, and
  # COUNT nodes (node0, node1, ...); destroyed in teardown.
  def board_ring(count = 3)
    ctl = ringctl
    ctl.call("init", "--workers-group", Process.gid.to_s, "--balance-factor", "1.25")
    (@board_rings ||= []) << ctl
    ctl.load_nodes(count)
    ctl
  end

  # What `ringctl show --json` says of the board, with each node's in-flight count
  # by name under "nodes".
  def board_of(ctl)
    shown = ctl.show
    shown["board"].merge("nodes" => shown["nodes"].to_h { |n| [n["name"], n["in_flight"]] })
  end

  def ringctl(name = nil)
    RingCtl.new(@ring_dir, name)
  end

  # A ring of three nodes: a (weight 1), b (weight 2), c (weight 1), generation 4.
  def small_ring
    ctl = ringctl
    ctl.call("init")
    ctl.call("add", "a", "10.0.0.1:11211")
    ctl.call("add", "b", "10.0.0.2:11211", "--weight", "2")
    ctl.call("add", "c", "10.0.0.3:11211")
    ctl
  end

  # Waits (up to 60 s) until the block returns a true value, and returns it.
  def wait_until(what, timeout: 60)
    deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout
    loop do
      value = yield
      return value if value
      raise "timed out waiting for #{what}" if Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline

      sleep 0.02
    end
  end
end
