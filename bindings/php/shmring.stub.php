<?php

/**
 * @generate-class-entries
 * @strict-properties
 */

namespace Shmring {
    /** One node of a ring, as a lookup answers it: a copy, valid whatever is published later. */
    final class Node
    {
        public readonly int $id;
        public readonly string $name;
        public readonly string $address;
        public readonly int $weight;

        private function __construct() {}
    }

    /** What a Ring answers from, as Ring::status() returns it. */
    final class Status
    {
        /** The ring exists and the Ring answers from a published version of it. */
        public readonly bool $present;
        /** The ring was destroyed: lookups answer from its last version until a ring made again under its name is followed. */
        public readonly bool $destroyed;
        public readonly int $generation;
        /** 16 lowercase hex digits, as `ringctl show` prints it; null when nothing was published. */
        public readonly ?string $fingerprint;
        /** The SHMRING_E* code of the last failed switch to a newer version (-2 once the ring was destroyed), 0 when none failed. */
        public readonly int $error;
        /** The snapshot format of a version refused as newer than this reader (error SHMRING_ENEWFORMAT or SHMRING_EFEATURE: upgrade, then restart the worker), 0 otherwise. */
        public readonly int $failedFormat;

        private function __construct() {}
    }

    /**
     * A bounded-load lease of one request on a node, as Ring::acquire() returns it:
     * counted on the ring's load board until release(), the object's destruction or
     * the end of the request, whichever comes first.
     * @not-serializable
     */
    final class Lease
    {
        public readonly Node $node;
        /** How many of the key's candidates were tried: 1 when its first took it. */
        public readonly int $candidates;
        /** Whether the ring's load board counts the lease (false: a plain lookup's answer). */
        public readonly bool $counted;

        private function __construct() {}

        public function release(): void {}

        public function isHeld(): bool {}
    }

    /**
     * A reader of the ring NAME. The underlying handle is opened once per process and
     * shared by every Ring of the same name, directory and trusted owner.
     * @not-serializable
     */
    final class Ring
    {
        public function __construct(string $name, ?string $directory = null, ?int $trustedOwner = null) {}

        public function lookup(string $key): Node {}

        public function lookupId(string $key): int {}

        /** @param array<array-key, string> $keys @return array<array-key, int> */
        public function lookupIds(array $keys): array {}

        /** @return list<Node> */
        public function lookupN(string $key, int $n): array {}

        /** @return list<Node> */
        public function nodes(): array {}

        public function node(int $id): Node {}

        public function generation(): int {}

        /** 16 lowercase hex digits, or null when nothing is published yet. */
        public function fingerprint(): ?string {}

        public function status(): Status {}

        public function acquire(string $key): Lease {}
    }

    class Exception extends \RuntimeException {}

    class RingNotFoundException extends Exception {}

    class PermissionException extends Exception {}

    class InvalidRingException extends Exception {}

    class EmptyRingException extends Exception {}

    class AllNodesDownException extends Exception {}

    class NodeNotFoundException extends Exception {}
}
