# frozen_string_literal: true

# Lookups per second of Shmring::Ring against Dalli's ring (Debian's ruby-dalli), in the
# same process, on a stream of distinct keys, for rings of 10, 100, 1,000 and 10,000
# nodes, next to a no-op call into the extension (Shmring._noop(key): the floor of any
# native call from Ruby) and the empty loop; then the ratios, among them
# ring.lookup / ring.lookup_id with its target (a lookup returning a Node costs at most
# 1.3x one returning an id; reported, never enforced).
#
# Dalli's ring is built as Dalli's client builds it (Dalli::Client#ring, one
# Dalli::Protocol::Binary a server), and asked as the client asks it for every key
# (Dalli::Ring#server_for_key: its continuum, then the server's alive? check). alive?
# needs a connected server, so every server of the list is a real connection to one
# memcached started here on a Unix socket, each under a name of its own (a symbolic
# link to the socket): the servers differ by name, which is all the continuum hashes.
# At 10,000 nodes that would be 10,000 connections, so Dalli sits that size out.
#
# The contenders take turns by chunks of about 1,000 keys rather than by whole passes,
# in an order where each follows every other equally often (balanced_order), so that
# none always runs on the caches another has just swept. A contender's pass is the sum
# of its chunks' times over the whole key stream; the best of PASSES passes is printed.
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

options = { passes: 11, keys: 100_000, sizes: [10, 100, 1000, 10_000] }
OptionParser.new do |parser|
  parser.on("--quick", "a smoke run: few keys, one pass") do
    options.merge!(passes: 1, keys: 2_000)
  end
  parser.on("--passes N", Integer) { |n| options[:passes] = n }
  parser.on("--keys N", Integer) { |n| options[:keys] = n }
end.parse!

RINGCTL = ENV["SHMRING_RINGCTL"] || "ringctl"
KEYS = Array.new(options[:keys]) { |i| "user:#{i}:profile" }.freeze
CHUNK = 1_000
# Dalli's ring holds one connection a server: more servers than this are not run.
DALLI_MAX_SERVERS = 1_000
TARGET = 1.3 # ring.lookup / ring.lookup_id at most: a Node costs little

def ringctl(directory, name, *args, input: nil)
  out, err, status = Open3.capture3(RINGCTL, "--dir", directory, "-r", name, *args,
                                    stdin_data: input || "")
  abort "ringctl #{args.join(" ")}: #{err}" unless status.success?
  out
end

def clock
  Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
end

# The ns one chunk of the block over keys[from...to] takes (the loop included).
def run_chunk(keys, from, to)
  i = from
  started = clock
  while i < to
    yield keys[i]
    i += 1
  end
  clock - started
end

# An order of count contenders, as a cycle of count * (count - 1) turns, in which each
# contender takes count - 1 turns and follows every other exactly once: an Eulerian
# circuit of the complete directed graph on the contenders (Hierholzer's algorithm).
# Taking turns in a fixed round (0, 1, ..., count - 1) would put the same contender
# after the one that sweeps the caches every time.
def balanced_order(count)
  return [0] if count == 1

  unused = Array.new(count) { |from| (0...count).reject { |to| to == from } }
  stack = [0]
  circuit = []
  until stack.empty?
    from = stack.last
    if unused[from].empty?
      circuit << stack.pop
    else
      stack << unused[from].shift
    end
  end
  circuit.reverse.drop(1) # it starts and ends at 0: as a cycle, one 0 is enough
end

# The best of passes passes of each row, in ns per key. A pass cuts the keys into
# chunks of about CHUNK, as many as whole cycles of balanced_order need, and runs every
# row once over every chunk, the rows taking turns chunk by chunk in that order; a
# row's pass is the sum of its chunks. Each row walks the chunks from its own place in
# the key stream, evenly spaced, so that none runs on keys another has just brought
# into the caches. Each pass starts one turn further into the cycle, so that no row
# always opens a pass.
def measure(rows, passes, keys)
  labels = rows.keys
  blocks = rows.values
  order = balanced_order(labels.size)
  turns_per_row = labels.size - 1 # in one cycle of order
  chunks = (keys.size + CHUNK - 1) / CHUNK
  chunks = ((chunks + turns_per_row - 1) / turns_per_row) * turns_per_row
  bounds = Array.new(chunks + 1) { |c| c * keys.size / chunks }
  first_chunk = Array.new(labels.size) { |row| row * chunks / labels.size }
  best = Array.new(labels.size, Float::INFINITY)
  passes.times do |pass|
    elapsed = Array.new(labels.size, 0)
    next_chunk = Array.new(labels.size, 0)
    (labels.size * chunks).times do |turn|
      row = order[(turn + pass) % order.size]
      c = (first_chunk[row] + next_chunk[row]) % chunks
      next_chunk[row] += 1
      elapsed[row] += run_chunk(keys, bounds[c], bounds[c + 1], &blocks[row])
    end
    elapsed.each_with_index { |ns, row| best[row] = [best[row], ns.fdiv(keys.size)].min }
  end
  labels.zip(best).to_h
end

# A ratio row, with the target where the row has one.
def ratio_line(label, ratio, target: nil)
  line = format("  %-34s %9.2fx", label, ratio)
  line += format("  (target <= %.1fx: %s)", target, ratio <= target ? "met" : "NOT met") if target
  line
end

work = Dir.mktmpdir("shmring-rb-bench-")
ring_dir = Dir.mktmpdir("shmring-rb-bench-", "/dev/shm")
socket = File.join(work, "memcached.sock")
# One connection a server, at most DALLI_MAX_SERVERS, and this process's other
# descriptors.
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
  puts "#{KEYS.size} distinct keys; ns per key, best of #{options[:passes]} passes, " \
       "the contenders taking turns by chunks of about #{CHUNK} keys"
  options[:sizes].each do |size|
    name = "bench#{size}"
    nodes = Array.new(size) do |i|
      { "name" => "node#{i}", "address" => format("10.0.%d.%d:11211", i >> 8, i & 255) }
    end
    ringctl(ring_dir, name, "load", "-", input: JSON.generate({ "nodes" => nodes }))
    ring = Shmring::Ring.new(name, directory: ring_dir)

    client = nil
    dalli = nil
    if size <= DALLI_MAX_SERVERS
      servers = Array.new(size) do |i|
        path = File.join(work, "server-#{size}-#{i}.sock")
        File.symlink(socket, path)
        path
      end
      client = Dalli::Client.new(servers)
      dalli = client.send(:ring) # built as the client builds it
      # Connect every server first, as a client's first requests would.
      dalli.servers.each { |server| abort "#{server.name} is down" unless server.alive? }
    end
    # Fills the ring's Node cache, as a worker's is after its first lookups, so that no
    # pass pays for the first lookup of a node (the version is already mapped).
    KEYS.each { |key| ring.lookup(key) }

    rows = {
      "empty loop" => proc { |_key| },
      "Shmring._noop(key)" => proc { |key| Shmring._noop(key) },
      "ring.lookup_id(key)" => proc { |key| ring.lookup_id(key) },
      "ring.lookup(key)" => proc { |key| ring.lookup(key) }
    }
    rows["Dalli::Ring#server_for_key(key)"] = proc { |key| dalli.server_for_key(key) } if dalli
    best = measure(rows, options[:passes], KEYS)
    puts
    dalli_note = if dalli
                   "Dalli: #{dalli.continuum.size} continuum entries"
                 else
                   "Dalli: not run"
                 end
    puts "#{size} nodes (shmring: ring, xxh3, 160 points a node; #{dalli_note})"
    best.each { |label, ns| puts format("  %-34s %9.1f ns  %12.0f /s", label, ns, 1e9 / ns) }
    unless dalli
      puts "  Dalli's ring not run: one memcached connection a server, " \
           "and this benchmark opens at most #{DALLI_MAX_SERVERS}"
    end
    lookup = best["ring.lookup(key)"]
    lookup_id = best["ring.lookup_id(key)"]
    noop = best["Shmring._noop(key)"]
    puts ratio_line("Dalli / ring.lookup", best["Dalli::Ring#server_for_key(key)"] / lookup) if dalli
    puts ratio_line("ring.lookup / ring.lookup_id", lookup / lookup_id, target: TARGET)
    puts ratio_line("ring.lookup / _noop", lookup / noop)
    puts ratio_line("ring.lookup_id / _noop", lookup_id / noop)
    client&.close
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
