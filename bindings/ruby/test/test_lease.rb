# frozen_string_literal: true

# Bounded-load leases (Ring#acquire) against real rings and load boards, read back
# with `ringctl show --json`: released on every path out of the block, exactly once.
require_relative "helper"

class TestLease < Minitest::Test
  include RingDirectory

  def open(ctl)
    Shmring::Ring.new(ctl.name, directory: @ring_dir)
  end

  def in_flight(ctl)
    board_of(ctl)["in_flight"]
  end

  def assert_double_release(lease)
    error = assert_raises(Shmring::Error) { lease.release }
    assert_equal Shmring::Error, error.class
    assert_equal Shmring::ELEASE, error.code
    assert_equal(-1042, error.code)
    assert_equal "lease already released, or never acquired", error.message
  end

  def test_release_gives_the_count_back_once
    ctl = board_ring
    ring = open(ctl)
    lease = ring.acquire("user:42")
    assert_instance_of Shmring::Lease, lease
    assert_same ring.lookup("user:42"), lease.node
    assert_equal [1, true, true], [lease.candidates, lease.counted?, lease.held?]
    board = board_of(ctl)
    assert_equal [1, 1], [board["in_flight"], board["nodes"][lease.node.name]]
    assert_nil lease.release
    refute lease.held?
    assert_equal 0, in_flight(ctl)
    assert_double_release(lease)
    assert_equal [0, 1], board_of(ctl).values_at("in_flight", "acquires")
    assert_match(/\A#<Shmring::Lease node="node\d" candidates=1 released>\z/, lease.inspect)
    assert_raises(TypeError) { Shmring::Lease.new }
    held = ring.acquire("k")
    assert_raises(TypeError) { held.dup }
    held.release
    assert_equal 0, in_flight(ctl)
    ring.close
  end

  def test_block_releases_on_every_way_out
    ctl = board_ring
    ring = open(ctl)
    value = ring.acquire("user:42") do |node|
      assert_same ring.lookup("user:42"), node
      assert_equal 1, in_flight(ctl)
      "to #{node.name}"
    end
    assert_equal "to #{ring.lookup("user:42").name}", value
    assert_equal 0, in_flight(ctl)

    error = assert_raises(ArgumentError) { ring.acquire("k") { raise ArgumentError, "bad request" } }
    assert_equal "bad request", error.message
    assert_equal 0, in_flight(ctl)

    broke = ring.acquire("k") { break :early }
    assert_equal :early, broke
    assert_equal 0, in_flight(ctl)

    thrown = catch(:done) { ring.acquire("k") { throw :done, :thrown } }
    assert_equal :thrown, thrown
    assert_equal 0, in_flight(ctl)

    from_method = lambda do
      ring.acquire("k") { return :returned }
      :not_here
    end
    assert_equal :returned, from_method.call
    assert_equal 0, in_flight(ctl)

    fiber = Fiber.new { ring.acquire("k") { |node| Fiber.yield(node) } }
    fiber.resume
    assert_equal 1, in_flight(ctl)
    fiber.resume
    assert_equal 0, in_flight(ctl)
    assert_equal 6, board_of(ctl)["acquires"]
    ring.close
  end

  def test_candidates_by_hand
    # With N in flight every capacity is ceil(1.25 (N + 1) / 3): 1 1 2 2 3 3 3 4 for
    # N = 0..7, so one key takes its candidates in the order 0 1 0 1 0 1 2 0.
    ctl = board_ring
    ring = open(ctl)
    order = ring.lookup_n("hot", 3)
    leases = Array.new(8) { ring.acquire("hot") }
    assert_equal [0, 1, 0, 1, 0, 1, 2, 0], leases.map { |lease| order.index(lease.node) }
    assert_equal [1, 2, 1, 2, 1, 2, 3, 1], leases.map(&:candidates)
    board = board_of(ctl)
    assert_equal 8, board["in_flight"]
    assert_equal [4, 3, 1], order.map { |node| board["nodes"][node.name] }
    leases.each(&:release)
    assert_equal 0, in_flight(ctl)
    ring.close
  end

  def test_plain_lookup_without_a_board
    ctl = small_ring
    ring = open(ctl)
    100.times do |i|
      key = "key-#{i}"
      assert_same ring.lookup(key), ring.acquire(key) { |node| node }
    end
    lease = ring.acquire("k")
    assert_equal [false, 1], [lease.counted?, lease.candidates]
    lease.release
    assert_double_release(lease)
    ring.close
  end

  def test_errors_count_nothing
    ctl = board_ring
    ring = open(ctl)
    %w[node0 node1 node2].each { |name| ctl.call("down", name) }
    error = assert_raises(Shmring::AllNodesDown) { ring.acquire("k") }
    assert_equal Shmring::EALLDOWN, error.code
    assert_raises(Shmring::AllNodesDown) { ring.acquire("k") { flunk "called" } }
    assert_raises(TypeError) { ring.acquire(42) }
    assert_equal [0, 0], board_of(ctl).values_at("in_flight", "acquires")
    empty = ringctl
    empty.call("init")
    Shmring::Ring.open(empty.name, directory: @ring_dir) do |empty_ring|
      assert_equal Shmring::EEMPTY, assert_raises(Shmring::EmptyRing) { empty_ring.acquire("k") }.code
    end
    ring.close
    assert_raises(IOError) { ring.acquire("k") }
  end

  def test_closing_the_ring_gives_its_leases_back
    ctl = board_ring
    ring = open(ctl)
    lease = ring.acquire("k")
    assert_equal 1, in_flight(ctl)
    ring.close
    assert_equal 0, in_flight(ctl)
    refute lease.held?
    lease.release
    assert_double_release(lease)
    # A block whose ring is closed inside it ends without an error.
    ring = open(ctl)
    closed = ring.acquire("k") do
      ring.close
      :closed
    end
    assert_equal :closed, closed
    assert_equal 0, in_flight(ctl)
  end

  def test_threads_share_a_ring
    ctl = board_ring
    ring = open(ctl)
    threads = Array.new(8) do |t|
      Thread.new { 200.times { |i| ring.acquire("key-#{t}-#{i}") { Thread.pass } } }
    end
    threads.each(&:join)
    assert_equal [0, 1600], board_of(ctl).values_at("in_flight", "acquires")
    ring.close
  end
end
