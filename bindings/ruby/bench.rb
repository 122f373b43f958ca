# frozen_string_literal: true

# Lookups per second of Shmring::Ring against Dalli's ring (Debian's ruby-dalli), in the
# same process, on a stream of distinct keys, for rings of 10, 100 and 1,000 nodes, next
# to a no-op call into the extension (Shmring._noop(key): the floor of any native call
# from Ruby) and the empty loop.
#
# Dalli's ring is built as Dalli's client builds it (Dalli::Client#ring, one
# Dalli::Protocol::Binary a server), and asked as the client asks it for every key
# (Dalli::Ring#server_for_key: its continuum, then the server's alive? check). alive?
# needs a connected server, so every server of the list is a real connection to one
# memcached started here on a Unix socket, each under a name of its own (a symbolic
# link to the socket): the servers differ by name, which is all the continuum hashes.
#
# Usage: ruby bench.rb [--quick] [--passes N] [--keys N]
#   SHMRING_RINGCTL names ringctl and SHMRING_MEMCACHED memcached (default: both
#   from PATH; Debian: memcached).
require "dalli"
require "etc"
require "fileutils"
require "json"
require "open3"
require "optparse"
require "tmpdir"

require "shmring"

options = { passes: 11, keys: 100_000, sizes: [10, 100, 1000] }
OptionParser.new do |parser|
  parser.on("--quick", "a smoke run: few keys, one pass") do
    options.merge!(passes: 1, keys: 2_000)
  end
  parser.on("--passes N", Integer) { |n| options[:passes] = n }
  parser.on("--keys N", Integer) { |n| options[:keys] = n }
end.parse!

RINGCTL = ENV["SHMRING_RINGCTL"] || "ringctl"
KEYS = Array.new(options[:keys]) { |i| "user:#{i}:profile" }.freeze

def ringctl(directory, name, *args, input: nil)
  out, err, status = Open3.capture3(RINGCTL, "--dir", directory, "-r", name, *args,
                                    stdin_data: input || "")
  abort "ringctl #{args.join(" ")}: #{err}" unless status.success?
  out
end

def clock
  Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
end

# ns per key of one pass of the block over KEYS (the loop included).
def pass
  keys = KEYS
  started = clock
  i = 0
  n = keys.size
  while i < n
    yield keys[i]
    i += 1
  end
  (clock - started).fdiv(n)
end

# The best of PASSES interleaved passes of each row: rows run in turn, so a slow phase
# of the machine hits every row, and the best pass is each row's own cost.
def measure(rows, passes)
  best = rows.transform_values { Float::INFINITY }
  passes.times do
    rows.each { |label, row| best[label] = [best[label], pass(&row)].min }
  end
  best
end

work = Dir.mktmpdir("shmring-rb-bench-")
ring_dir = Dir.mktmpdir("shmring-rb-bench-", "/dev/shm")
socket = File.join(work, "memcached.sock")
# One connection a server, at most 1,000 servers, and this process's other descriptors.
limit = Process.getrlimit(:NOFILE)[1]
Process.setrlimit(:NOFILE, [limit, 4096].min, limit)
# -u: memcached refuses to run as root unless told whom to run as; it ignores it
# otherwise.
memcached = Process.spawn(ENV.fetch("SHMRING_MEMCACHED", "memcached"),
                          "-u", Etc.getpwuid.name, "-s", socket, "-c", "2048", "-t", "1",
                          "-m", "8", pgroup: true, out: File::NULL,
                          err: File.join(work, "memcached.log"))
begin
  deadline = clock + 60_000_000_000
  sleep 0.02 until File.socket?(socket) || clock > deadline
  abort "memcached did not start: #{File.read(File.join(work, "memcached.log"))}" unless File.socket?(socket)

  puts "shmring #{Shmring::VERSION} (library #{Shmring::LIBRARY_VERSION}), " \
       "ruby #{RUBY_VERSION}, dalli #{Dalli::VERSION}"
  puts "#{KEYS.size} distinct keys; ns per key, best of #{options[:passes]} interleaved passes"
  options[:sizes].each do |size|
    name = "bench#{size}"
    nodes = Array.new(size) do |i|
      { "name" => "node#{i}", "address" => format("10.0.%d.%d:11211", i >> 8, i & 255) }
    end
    ringctl(ring_dir, name, "load", "-", input: JSON.generate({ "nodes" => nodes }))
    ring = Shmring::Ring.new(name, directory: ring_dir)

    servers = Array.new(size) do |i|
      path = File.join(work, "server-#{size}-#{i}.sock")
      File.symlink(socket, path)
      path
    end
    client = Dalli::Client.new(servers)
    dalli = client.send(:ring) # built as the client builds it
    # Connect every server first, as a client's first requests would.
    dalli.servers.each { |server| abort "#{server.name} is down" unless server.alive? }
    ring.lookup(KEYS[0]) # maps nothing more; the version is already mapped

    rows = {
      "empty loop" => proc { |_key| },
      "Shmring._noop(key)" => proc { |key| Shmring._noop(key) },
      "ring.lookup_id(key)" => proc { |key| ring.lookup_id(key) },
      "ring.lookup(key)" => proc { |key| ring.lookup(key) },
      "Dalli::Ring#server_for_key(key)" => proc { |key| dalli.server_for_key(key) }
    }
    best = measure(rows, options[:passes])
    puts
    puts "#{size} nodes (shmring: ring, xxh3, 160 points a node; " \
         "Dalli: #{dalli.continuum.size} continuum entries)"
    best.each { |label, ns| puts format("  %-34s %9.1f ns  %12.0f /s", label, ns, 1e9 / ns) }
    dalli_ns = best["Dalli::Ring#server_for_key(key)"]
    puts format("  %-34s %9.2fx", "Dalli / ring.lookup", dalli_ns / best["ring.lookup(key)"])
    puts format("  %-34s %9.2fx", "ring.lookup / _noop", best["ring.lookup(key)"] / best["Shmring._noop(key)"])
    puts format("  %-34s %9.2fx", "ring.lookup_id / _noop", best["ring.lookup_id(key)"] / best["Shmring._noop(key)"])
    client.close
    ring.close
  end
ensure
  begin
    Process.kill(:TERM, -memcached)
    Process.wait(memcached)
  rescue Errno::ESRCH, Errno::ECHILD
    nil
  end
  FileUtils.rm_rf(work)
  FileUtils.rm_rf(ring_dir)
end
