# frozen_string_literal: true

# Shmring::Ring against ringctl: every method, exact error classes and codes, bad
# input, following new versions, the node cache, fork and threads.
require_relative "helper"
require "pathname"

class TestVersion < Minitest::Test
  # One version everywhere: CMake's project(VERSION) (which ctest passes as
  # SHMRING_VERSION), the gem's, the gemspec's, the headers' and the library's.
  def test_one_version
    gemspec = Gem::Specification.load(File.expand_path("../shmring.gemspec", __dir__))
    versions = [Shmring::VERSION, gemspec.version.to_s, Shmring::HEADER_VERSION,
                Shmring::LIBRARY_VERSION]
    assert_equal [ENV.fetch("SHMRING_VERSION")] * 4, versions
  end
end

class TestRing < Minitest::Test
  include RingDirectory

  KEYS = (Array.new(1000) { |i| "key-#{i}" } + ["", "é", "user:42", "\u{1F600}"]).freeze

  def test_lookup_answers_as_ringctl
    ctl = ringctl
    ctl.load_nodes(50)
    expected = ctl.lookup(KEYS)
    Shmring::Ring.open(ctl.name, directory: @ring_dir) do |ring|
      KEYS.each do |key|
        node = ring.lookup(key)
        assert_equal expected[key], [[node.name, node.address]], key
        assert_equal node.id, ring.lookup_id(key)
        assert_equal 1, node.weight
      end
    end
  end

  def test_keys_are_bytes_whatever_their_encoding
    ctl = small_ring
    ring = Shmring::Ring.new(ctl.name, directory: @ring_dir)
    binary = "é".b
    assert_equal ring.lookup_id("é"), ring.lookup_id(binary)
    assert_equal ring.lookup_id("é"), ring.lookup_id("é".encode("UTF-16LE").encode("UTF-8"))
    latin1 = "\xE9".dup.force_encoding(Encoding::ISO_8859_1)
    assert_equal ring.lookup_id("\xE9".b), ring.lookup_id(latin1)
  end

  def test_lookup_n_answers_as_ringctl
    ctl = ringctl
    ctl.load_nodes(20)
    expected = ctl.lookup(KEYS.first(200), n: 3)
    ring = Shmring::Ring.new(ctl.name, directory: @ring_dir)
    KEYS.first(200).each do |key|
      assert_equal expected[key], ring.lookup_n(key, 3).map { |n| [n.name, n.address] }
      assert_equal ring.lookup(key), ring.lookup_n(key, 1).first
    end
    assert_equal 20, ring.lookup_n("x", 1000).size
    assert_equal Shmring::LOOKUP_N_MAX, 64
  end

  def test_node_struct
    ctl = small_ring
    ring = Shmring::Ring.new(ctl.name, directory: @ring_dir)
    node = ring.node(1)
    assert_equal Shmring::Node.new(1, "b", "10.0.0.2:11211", 2), node
    assert_equal %i[id name address weight], Shmring::Node.members
    assert node.frozen?
    assert node.name.frozen?
    assert node.address.frozen?
    assert_equal Encoding::UTF_8, node.name.encoding
    id, name, address, weight = *node
    assert_equal [1, "b", "10.0.0.2:11211", 2], [id, name, address, weight]
    assert_raises(FrozenError) { node.name = "x" }
  end

  # A lookup returns the Node its version made on that node's first lookup: the same
  # object, and no object allocated by the lookup.
  def test_lookup_allocates_nothing_once_each_node_was_seen
    ctl = ringctl
    ctl.load_nodes(10)
    ring = Shmring::Ring.new(ctl.name, directory: @ring_dir)
    keys = KEYS.first(500)
    first = keys.map { |key| ring.lookup(key) }
    nothing = lookups = nil
    # The first GC.stat call may allocate, and so may the first run of a call site
    # (Ruby's call caches are objects): measure nothing, and the loop, a second time.
    2.times { nothing = allocations {} }
    2.times { lookups = allocations { lookup_all(ring, keys) } }
    assert_equal nothing, lookups
    keys.each_with_index { |key, j| assert_same first[j], ring.lookup(key) }
    assert_same ring.node(3), ring.node(3)
  end

  def lookup_all(ring, keys)
    i = 0
    while i < keys.size
      ring.lookup(keys[i])
      ring.lookup_id(keys[i])
      i += 1
    end
  end

  def allocations
    before = GC.stat(:total_allocated_objects)
    yield
    GC.stat(:total_allocated_objects) - before
  end

  # A new version has new Node objects (equal when the node did not change).
  def test_node_cache_follows_versions
    ctl = small_ring
    ring = Shmring::Ring.new(ctl.name, directory: @ring_dir)
    before = ring.node(0)
    ctl.call("weight", "a", "5")
    after = ring.node(0)
    assert_equal Shmring::Node.new(0, "a", "10.0.0.1:11211", 5), after
    assert_equal Shmring::Node.new(0, "a", "10.0.0.1:11211", 1), before
    ctl.call("add", "d", "10.0.0.4:11211")
    refute_same after, ring.node(0)
    assert_equal after, ring.node(0)
  end

  def test_follows_add_and_remove
    ctl = small_ring
    ring = Shmring::Ring.new(ctl.name, directory: @ring_dir)
    assert_equal 4, ring.generation
    ctl.call("add", "d", "10.0.0.4:11211", "--weight", "30")
    expected = ctl.lookup(KEYS.first(300))
    KEYS.first(300).each { |key| assert_equal expected[key], [ring.lookup(key).to_a[1, 2]] }
    assert_equal 5, ring.generation
    ctl.call("remove", "b")
    expected = ctl.lookup(KEYS.first(300))
    KEYS.first(300).each { |key| assert_equal expected[key], [ring.lookup(key).to_a[1, 2]] }
    assert_equal 6, ring.generation
  end

  # refresh follows a new version at once (without the GVL); later lookups answer
  # from it.
  def test_refresh
    ctl = small_ring
    ring = Shmring::Ring.new(ctl.name, directory: @ring_dir)
    assert_equal 4, ring.refresh
    ctl.call("add", "d", "10.0.0.4:11211", "--weight", "40")
    assert_equal 5, ring.refresh
    assert_equal [true, false, 5, ctl.show["fingerprint"], 0, 0], ring.status.to_a
    expected = ctl.lookup(KEYS.first(300))
    KEYS.first(300).each { |key| assert_equal expected[key], [ring.lookup(key).to_a[1, 2]] }
    # Threads look up while another refreshes: every answer is one of a version's.
    refresher = Thread.new { 200.times { ring.refresh } }
    lookups = Thread.new { 50.times { KEYS.first(300).each { |key| assert_equal expected[key], [ring.lookup(key).to_a[1, 2]] } } }
    [refresher, lookups].each(&:join)
    ring.close
    assert_raises(IOError) { ring.refresh }
  end

  def test_fingerprint_and_status_as_ringctl_show
    ctl = small_ring
    ring = Shmring::Ring.new(ctl.name, directory: @ring_dir)
    show = ctl.show
    assert_match(/\A[0-9a-f]{16}\z/, ring.fingerprint)
    assert_equal show["fingerprint"], ring.fingerprint
    status = ring.status
    assert_equal Shmring::Status.new(true, false, 4, show["fingerprint"], 0, 0), status
    assert status.present?
    refute status.destroyed?
    assert status.frozen?
  end

  def test_status_of_a_destroyed_ring_and_of_one_made_again
    ctl = small_ring
    ring = Shmring::Ring.new(ctl.name, directory: @ring_dir)
    fingerprint = ring.fingerprint
    ctl.call("destroy")
    status = ring.status
    assert_equal Shmring::Status.new(false, true, 4, fingerprint, Shmring::ENOENT, 0), status
    assert_equal "b", ring.lookup("user:42").name # the last version still answers
    ctl.call("init")
    ctl.call("add", "z", "10.0.0.9:11211")
    # A destroyed ring's name is tried again every 100 ms or so.
    status = wait_until("the ring made again") { (s = ring.status).present? && s }
    assert_equal Shmring::Status.new(true, false, 2, ctl.show["fingerprint"], 0, 0), status
    assert_equal "z", ring.lookup("user:42").name
  end

  def test_empty_ring
    ctl = ringctl
    ctl.call("init")
    ring = Shmring::Ring.new(ctl.name, directory: @ring_dir)
    assert_equal ctl.show["fingerprint"], ring.fingerprint
    error = assert_raises(Shmring::EmptyRing) { ring.lookup("x") }
    assert_equal Shmring::EEMPTY, error.code
    assert_equal(-1000, error.code)
    assert_equal "ring has no nodes", error.message
  end

  def test_all_nodes_down
    ctl = small_ring
    %w[a b c].each { |n| ctl.call("down", n) }
    ring = Shmring::Ring.new(ctl.name, directory: @ring_dir)
    [-> { ring.lookup("x") }, -> { ring.lookup_id("x") }, -> { ring.lookup_n("x", 2) }].each do |call|
      error = assert_raises(Shmring::AllNodesDown) { call.call }
      assert_equal(-1001, error.code)
    end
  end

  def test_errors_carry_the_code
    error = assert_raises(Shmring::RingNotFound) { Shmring::Ring.new("nope", directory: @ring_dir) }
    assert_equal [-2, 'no such ring: "nope"'], [error.code, error.message]
    error = assert_raises(Shmring::RingNotFound) { Shmring::Ring.new("x", directory: "/nonexistent-shmring") }
    assert_equal [Shmring::ENODIR, 'no such ring directory: "/nonexistent-shmring"'],
                 [error.code, error.message]
    error = assert_raises(Shmring::InvalidArgument) { Shmring::Ring.new("a/b", directory: @ring_dir) }
    assert_equal [Shmring::EBADRING, 'invalid ring name: "a/b"'], [error.code, error.message]
    error = assert_raises(Shmring::InvalidArgument) { Shmring::Ring.new("a", directory: "relative") }
    assert_equal Shmring::EBADDIR, error.code
    error = assert_raises(Shmring::InvalidArgument) { Shmring::Ring.new("a", directory: "/proc") }
    assert_equal Shmring::ENOTRINGDIR, error.code
    error = assert_raises(Shmring::InvalidArgument) { Shmring::Ring.new("a", directory: @ring_dir, trusted_owner: -1) }
    assert_equal [Shmring::EINVAL, "invalid argument: -1"], [error.code, error.message]
    assert_raises(Shmring::InvalidArgument) { Shmring::Ring.new("a", directory: @ring_dir, trusted_owner: 2**32 - 1) }
    assert_raises(Shmring::InvalidArgument) { Shmring::Ring.new("a", directory: @ring_dir, trusted_owner: 2**70) }
    ctl = small_ring
    ring = Shmring::Ring.new(ctl.name, directory: @ring_dir)
    error = assert_raises(Shmring::NoSuchNode) { ring.node(99) }
    assert_equal [Shmring::ENODE, "no such node: 99"], [error.code, error.message]
    assert_raises(Shmring::NoSuchNode) { ring.node(-1) }
    assert_raises(Shmring::NoSuchNode) { ring.node(2**40) }
  end

  def test_error_classes
    assert_equal StandardError, Shmring::Error.superclass
    assert_equal Shmring::PermissionDenied, Shmring::NotTrusted.superclass
    %i[RingNotFound PermissionDenied EmptyRing AllNodesDown NoSuchNode InvalidArgument
       CorruptRing OutOfMemory].each do |name|
      assert_equal Shmring::Error, Shmring.const_get(name).superclass, name
    end
    assert_equal "ring has no nodes", Shmring.strerror(Shmring::EEMPTY)
    assert_equal(-1037, Shmring::ERENUMBER)
  end

  def test_ruby_argument_errors
    ctl = small_ring
    ring = Shmring::Ring.new(ctl.name, directory: @ring_dir)
    assert_raises(TypeError) { ring.lookup(42) }
    assert_raises(TypeError) { ring.lookup_id(nil) }
    assert_raises(TypeError) { ring.lookup_n("x", "2") }
    assert_raises(TypeError) { ring.node("1") }
    assert_raises(ArgumentError) { ring.lookup_n("x", 0) }
    assert_raises(ArgumentError) { ring.lookup_n("x", -(2**70)) }
    assert_equal 3, ring.lookup_n("x", 2**70).size
    assert_raises(ArgumentError) { Shmring::Ring.new("a\0b", directory: @ring_dir) }
    assert_raises(ArgumentError) { Shmring::Ring.new(ctl.name, directory: "/dev/shm\0x") }
    assert_raises(TypeError) { Shmring::Ring.new(ctl.name, directory: @ring_dir, trusted_owner: "0") }
    assert_raises(ArgumentError) { Shmring::Ring.new(ctl.name, dir: @ring_dir) }
    assert_raises(RuntimeError) { ring.send(:initialize, ctl.name, directory: @ring_dir) }
    # A key that converts itself (#to_str) is looked up as the String it becomes.
    key = Object.new
    def key.to_str
      "user:42"
    end
    assert_equal ring.lookup("user:42"), ring.lookup(key)
  end

  def test_directory_forms
    ctl = small_ring
    ring = Shmring::Ring.new(ctl.name, directory: Pathname.new(@ring_dir))
    assert_equal [ctl.name, @ring_dir], [ring.name, ring.directory]
    assert ring.name.frozen?
    assert_equal "#<Shmring::Ring #{ctl.name.inspect} directory=#{@ring_dir.inspect}>", ring.inspect
    assert_equal Shmring::DEFAULT_DIRECTORY, "/dev/shm"
  end

  def test_close_and_open_with_a_block
    ctl = small_ring
    ring = Shmring::Ring.new(ctl.name, directory: @ring_dir)
    node = ring.lookup("x")
    refute ring.closed?
    assert_nil ring.close
    assert ring.closed?
    assert_nil ring.close
    %i[lookup lookup_id].each { |m| assert_raises(IOError) { ring.public_send(m, "x") } }
    assert_raises(IOError) { ring.lookup_n("x", 1) }
    assert_raises(IOError) { ring.node(0) }
    %i[generation fingerprint status].each { |m| assert_raises(IOError) { ring.public_send(m) } }
    assert_equal "10.0.0.2:11211", node.address # nodes stay valid
    assert_match(/ closed>\z/, ring.inspect)

    kept = nil
    value = Shmring::Ring.open(ctl.name, directory: @ring_dir) { |r| (kept = r).lookup("x").name }
    assert_equal ["b", true], [value, kept.closed?]
    assert_raises(ZeroDivisionError) do
      Shmring::Ring.open(ctl.name, directory: @ring_dir) { |r| (kept = r) && 1 / 0 }
    end
    assert kept.closed?
    ring = Shmring::Ring.open(ctl.name, directory: @ring_dir)
    refute ring.closed?
    assert_raises(NoMethodError) { ring.dup }
  end

  # A forked child uses the parent's handle, answers as it does and follows a new
  # version on its own.
  def test_fork
    ctl = small_ring
    ring = Shmring::Ring.new(ctl.name, directory: @ring_dir)
    parent = KEYS.first(200).map { |key| ring.lookup(key).name }
    reader, writer = IO.pipe
    go_read, go_write = IO.pipe
    pid = fork do
      reader.close
      go_write.close
      first = KEYS.first(200).map { |key| ring.lookup(key).name }
      go_read.read(1) # the parent added d
      writer.write(JSON.generate([first, ring.generation, ring.lookup_n("x", 4).map(&:name)]))
      writer.close
      exit!(0)
    end
    writer.close
    go_read.close
    ctl.call("add", "d", "10.0.0.4:11211")
    go_write.write("x")
    go_write.close
    first, generation, names = JSON.parse(reader.read)
    Process.wait(pid)
    assert_equal 0, $?.exitstatus
    assert_equal parent, first
    assert_equal 5, generation
    assert_equal ctl.lookup(["x"], n: 4)["x"].map(&:first), names
  end

  # Threads share one handle: every call holds the GVL, so they take turns.
  def test_threads_share_a_ring
    ctl = ringctl
    ctl.load_nodes(30)
    expected = ctl.lookup(KEYS)
    ring = Shmring::Ring.new(ctl.name, directory: @ring_dir)
    answers = Array.new(4) do
      Thread.new { 20.times.flat_map { KEYS.map { |key| ring.lookup(key).name } } }
    end.map(&:value)
    answers.each { |names| assert_equal KEYS.map { |k| expected[k][0][0] } * 20, names }
  end
end
