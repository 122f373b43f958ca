# frozen_string_literal: true

# Shmring routes keys with a consistent-hash ring that ringctl publishes in shared
# memory. The extension (shmring/shmring) defines Shmring::Ring, Shmring::Node,
# Shmring::Status, the errors under Shmring::Error and the SHMRING_E* codes; this file
# adds what Ruby code expects around them.
require "shmring/version"
require "shmring/shmring"

module Shmring
  class Ring
    # Opens ring NAME (as Ring.new does) and, given a block, yields it and closes it
    # when the block ends, returning the block's value; without a block, returns the
    # ring, as File.open does.
    def self.open(name, **options)
      ring = new(name, **options)
      return ring unless block_given?

      begin
        yield ring
      ensure
        ring.close
      end
    end

    # Leases the node for KEY under the ring's balance factor (docs/bounded-loads.md),
    # counting one request in flight on it, shared with every worker process of the
    # host. Given a block, yields the node and releases the lease when the block ends,
    # however it ends (a value, an exception, break, throw), returning the block's
    # value; without a block, returns the Shmring::Lease, to release yourself.
    def acquire(key)
      lease = acquire_lease(key)
      return lease unless block_given?

      begin
        yield lease.node
      ensure
        lease.release
      end
    end

    def inspect
      "#<#{self.class} #{name.inspect} directory=#{directory.inspect}#{closed? ? " closed" : ""}>"
    end
  end

  # A bounded-load lease of one request on a node, as Ring#acquire returns it: node,
  # candidates (how many of the key's candidates were tried, 1 when its first took
  # it), counted? (false for a plain lookup's answer: the ring has no board, or this
  # process is not in its group), held?, release.
  class Lease
    def inspect
      "#<#{self.class} node=#{node.name.inspect} candidates=#{candidates}#{held? ? "" : " released"}>"
    end
  end

  # One node of a ring, as a lookup answers it: id, name, address, weight. Frozen, and
  # unaffected by later versions of the ring.
  class Node
  end

  # What a Ring answers from, as Ring#status returns it.
  class Status
    # The ring exists and a published version of it answers.
    def present?
      present
    end

    # The ring was destroyed: lookups answer from its last version.
    def destroyed?
      destroyed
    end
  end
end
