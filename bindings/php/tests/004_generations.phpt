--TEST--
Shmring\Ring follows the new generation that ringctl add, remove, weight, down and load publish
--SKIPIF--
<?php require __DIR__ . '/skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/ring.inc';

$ring = test_ring('generations', 4);
$r = new Shmring\Ring($ring);
$keys = [];
for ($i = 0; $i < 500; $i++) {
    $keys[] = "key-$i";
}

function check(Shmring\Ring $r, string $ring, array $keys, string $step): void
{
    $expected = ringctl_lookup($ring, $keys);
    $ids = $r->lookupIds($keys);
    $bad = 0;
    foreach ($keys as $i => $key) {
        $node = $r->node($ids[$i]);
        $bad += [$node->name, $node->address] !== $expected[$key] ? 1 : 0;
    }
    $show = json_decode(ringctl($ring, '--json', 'show'), true);
    printf("%s: generation %d (ringctl %d), %d nodes, fingerprint %s, %d mismatches\n",
           $step, $r->generation(), $show['generation'], count($r->nodes()),
           $r->fingerprint() === $show['fingerprint'] ? 'same' : 'differs', $bad);
}

check($r, $ring, $keys, 'load');
$before = $r->fingerprint();
ringctl($ring, 'add', 'new-node', '10.1.1.1:11211');
check($r, $ring, $keys, 'add');
var_dump($r->node(4)->name, $r->fingerprint() !== $before);
ringctl($ring, 'remove', 'node-0');
check($r, $ring, $keys, 'remove');
show_exception(fn() => $r->node(0));
ringctl($ring, 'weight', 'node-1', '300');
check($r, $ring, $keys, 'weight');
var_dump($r->node(1)->weight);
ringctl($ring, 'down', 'node-2');
check($r, $ring, $keys, 'down');
// A second Ring object of the same name shares the process's handle.
$again = new Shmring\Ring($ring);
var_dump($again->generation() === $r->generation());
?>
--EXPECT--
load: generation 2 (ringctl 2), 4 nodes, fingerprint same, 0 mismatches
add: generation 3 (ringctl 3), 5 nodes, fingerprint same, 0 mismatches
string(8) "new-node"
bool(true)
remove: generation 4 (ringctl 4), 4 nodes, fingerprint same, 0 mismatches
Shmring\NodeNotFoundException(-1015): no such node
weight: generation 5 (ringctl 5), 4 nodes, fingerprint same, 0 mismatches
int(300)
down: generation 6 (ringctl 6), 4 nodes, fingerprint same, 0 mismatches
bool(true)
