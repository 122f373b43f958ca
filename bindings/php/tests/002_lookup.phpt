--TEST--
Shmring\Ring: every lookup method answers as ringctl lookup does
--SKIPIF--
<?php require __DIR__ . '/skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/ring.inc';

$ring = test_ring('lookup', 20);
ringctl($ring, 'add', 'heavy', '10.9.9.9:11211', '--weight', '5');
$r = new Shmring\Ring($ring);

$keys = ['', 'a', 'user:42', "k\xc3\xa9y", str_repeat('x', 10000)];
for ($i = 0; $i < 300; $i++) {
    $keys[] = "key-$i";
}
$expected = ringctl_lookup($ring, $keys);

$mismatches = 0;
$ids = $r->lookupIds($keys);
var_dump(array_keys($ids) === array_keys($keys));
foreach ($keys as $i => $key) {
    $node = $r->lookup($key);
    $id = $r->lookupId($key);
    $first = $r->lookupN($key, 1)[0];
    if ([$node->name, $node->address] !== $expected[$key] || $node->id !== $id
        || $ids[$i] !== $id || $first != $node || $r->node($id) != $node) {
        $mismatches++;
    }
}
echo "mismatches: $mismatches\n";

// lookupIds keeps the keys of its argument, string keys too.
var_dump($r->lookupIds(['x' => 'a', 7 => 'user:42']) ===
         ['x' => $r->lookupId('a'), 7 => $r->lookupId('user:42')]);

// lookupN: distinct nodes in ringctl's preference order, at most 64, at most all up.
// ringctl lookup -n prints the key, then each node's name and address, on one line.
$out = explode("\t", rtrim(ringctl($ring, 'lookup', '-n', '5', 'user:42')));
$n5 = $r->lookupN('user:42', 5);
var_dump(count($n5));
foreach ($n5 as $i => $node) {
    var_dump($node->name === $out[1 + 2 * $i] && $node->address === $out[2 + 2 * $i]);
}
var_dump(count($r->lookupN('user:42', 21)), count($r->lookupN('user:42', 1000)),
         count($r->lookupN('user:42', PHP_INT_MAX)));

// nodes(), node(), generation(), fingerprint() against ringctl --json show.
$show = json_decode(ringctl($ring, '--json', 'show'), true);
$nodes = $r->nodes();
var_dump(count($nodes));
$same = true;
foreach ($show['nodes'] as $i => $n) {
    $node = $nodes[$i];
    $same = $same && $node instanceof Shmring\Node && $node->id === $n['id']
        && $node->name === $n['name'] && $node->address === $n['address']
        && $node->weight === $n['weight'] && $r->node($n['id']) == $node;
}
var_dump($same);
var_dump($r->node(20));
var_dump($r->generation() === $show['generation'], $r->generation());
var_dump($r->fingerprint() === $show['fingerprint'], strlen($r->fingerprint()));
?>
--EXPECTF--
bool(true)
mismatches: 0
bool(true)
int(5)
bool(true)
bool(true)
bool(true)
bool(true)
bool(true)
int(21)
int(21)
int(21)
int(21)
bool(true)
object(Shmring\Node)#%d (4) {
  ["id"]=>
  int(20)
  ["name"]=>
  string(5) "heavy"
  ["address"]=>
  string(14) "10.9.9.9:11211"
  ["weight"]=>
  int(5)
}
bool(true)
int(3)
bool(true)
int(16)
