--TEST--
Shmring\Ring: one handle per process and ring, shared by every Ring object, inherited by forked children
--SKIPIF--
<?php
require __DIR__ . '/skipif.inc';
if (!function_exists('pcntl_fork')) die('skip pcntl not available');
?>
--FILE--
<?php
require __DIR__ . '/ring.inc';

function open_rings(): string
{
    ob_start();
    phpinfo(INFO_MODULES);
    preg_match('/rings open in this process => (\d+)/', ob_get_clean(), $m);
    return $m[1];
}

function ring_mappings(string $ring): int
{
    $count = 0;
    foreach (file('/proc/self/maps') as $line) {
        $count += str_contains($line, "/shmring.$ring/") ? 1 : 0;
    }
    return $count;
}

$ring = test_ring('registry', 8);
echo "open before: ", open_rings(), "\n";
$a = new Shmring\Ring($ring);
$b = new Shmring\Ring($ring);
unset($a, $b);
$c = new Shmring\Ring($ring);
echo "open after three objects of one ring: ", open_rings(), "\n";
$mappings = ring_mappings($ring);
echo "mappings: ", $mappings > 0 ? "some" : "none", "\n";
// The default directory named is the default directory; another trusted owner is
// another registry entry.
$d = new Shmring\Ring($ring, '/dev/shm');
$e = new Shmring\Ring($ring, null, 0);
echo "open with other options: ", open_rings(), "\n";
// A failed open leaves nothing behind.
try { new Shmring\Ring($ring . '-missing'); } catch (Shmring\RingNotFoundException $x) {}
echo "open after a failed open: ", open_rings(), "\n";

$keys = [];
for ($i = 0; $i < 200; $i++) {
    $keys[] = "fork-key-$i";
}
$before = $c->lookupIds($keys);

// A child forked after the parent opened the ring inherits the handle and the
// registry: it opens nothing more, and follows new generations on its own.
$sync = tempnam(sys_get_temp_dir(), 'shmring');
$pid = pcntl_fork();
if ($pid === 0) {
    $child = new Shmring\Ring($ring);
    $same = $child->lookupIds($keys) === $before;
    $opened = open_rings();
    ringctl($ring, 'add', 'from-child', '10.2.2.2:11211');
    $expected = ringctl_lookup($ring, $keys);
    $bad = 0;
    foreach ($child->lookupIds($keys) as $i => $id) {
        $node = $child->node($id);
        $bad += [$node->name, $node->address] !== $expected[$keys[$i]] ? 1 : 0;
    }
    file_put_contents($sync, "child: same answers $same, open $opened, generation "
        . $child->generation() . ", $bad mismatches\n");
    exit(0);
}
pcntl_waitpid($pid, $status);
echo file_get_contents($sync);
unlink($sync);
$expected = ringctl_lookup($ring, $keys);
$bad = 0;
foreach ($c->lookupIds($keys) as $i => $id) {
    $node = $c->node($id);
    $bad += [$node->name, $node->address] !== $expected[$keys[$i]] ? 1 : 0;
}
echo "parent: generation ", $c->generation(), ", $bad mismatches\n";
?>
--EXPECT--
open before: 0
open after three objects of one ring: 1
mappings: some
open with other options: 2
open after a failed open: 2
child: same answers 1, open 2, generation 3, 0 mismatches
parent: generation 3, 0 mismatches
