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

    def inspect
      "#<#{self.class} #{name.inspect} directory=#{directory.inspect}#{closed? ? " closed" : ""}>"
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
