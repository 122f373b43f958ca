--TEST--
Shmring\Ring::status() (present, destroyed, generation, fingerprint as ringctl shows it, error), and one Node object per node and version
--SKIPIF--
<?php require __DIR__ . '/skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/ring.inc';

function shown_fingerprint(string $ring): string
{
    return json_decode(ringctl($ring, '--json', 'show'), true)['fingerprint'];
}

function show_status(Shmring\Status $s, string $ring): void
{
    printf("present %s, destroyed %s, generation %d, fingerprint %s, error %d\n",
           var_export($s->present, true), var_export($s->destroyed, true), $s->generation,
           $s->fingerprint === shown_fingerprint($ring) ? 'as ringctl shows it'
               : var_export($s->fingerprint, true), $s->error);
}

$ring = test_ring('status', 4);
$r = new Shmring\Ring($ring);
echo "-- a published ring\n";
show_status($r->status(), $ring);
var_dump(strlen($r->status()->fingerprint), $r->status()->fingerprint === $r->fingerprint());
show_exception(function () use ($r) { $r->status()->present = false; });
show_exception(fn() => new Shmring\Status());

echo "-- one Node object per node and version\n";
$keys = [];
for ($i = 0; $i < 500; $i++) {
    $keys[] = "key-$i";
}
$first = [];
$same = 0;
foreach ($keys as $key) {
    $node = $r->lookup($key);
    $first[$node->id] ??= $node;
    $same += $first[$node->id] === $node ? 1 : 0;
}
ksort($first);
printf("%d of %d lookups returned their node's first object; %d nodes\n", $same,
       count($keys), count($first));
ringctl($ring, 'weight', 'node-1', '7');
$again = $r->lookup($keys[0]);
$fresh = [];
foreach ($keys as $key) {
    $node = $r->lookup($key);
    $fresh[$node->id] ??= $node;
}
var_dump($fresh[1] !== $first[1], $fresh[1]->weight, $fresh[1]->name,
         $fresh[$again->id] === $again);
$expected = ringctl_lookup($ring, $keys);
$bad = 0;
foreach ($keys as $key) {
    $node = $r->lookup($key);
    $bad += [$node->name, $node->address] !== $expected[$key] ? 1 : 0;
}
echo "$bad mismatches with ringctl lookup\n";
show_status($r->status(), $ring);

echo "-- destroyed\n";
$fingerprint = $r->fingerprint();
$before = $r->lookup('k');
ringctl($ring, 'destroy');
$s = $r->status();
printf("present %s, destroyed %s, generation %d, same fingerprint %s, error %d\n",
       var_export($s->present, true), var_export($s->destroyed, true), $s->generation,
       var_export($s->fingerprint === $fingerprint, true), $s->error);
var_dump($r->lookup('k') === $before);

echo "-- made again under the name\n";
ringctl($ring, 'init');
ringctl($ring, 'add', 'omega', '10.0.0.24:11211');
// Followed within the library's retry interval (100 ms); bounded at 10 s.
for ($i = 0; $i < 200 && $r->status()->destroyed; $i++) {
    usleep(50000);
}
show_status($r->status(), $ring);
var_dump($r->lookup('k')->name);

echo "-- large and sparse ids\n";
$sparse = test_ring('status-sparse');
$set = ['nodes' => []];
foreach ([3, 65535, 65536, 4294967294] as $i => $id) {
    $set['nodes'][] = ['name' => "n$i", 'address' => "a$i", 'id' => $id];
}
$file = tempnam(sys_get_temp_dir(), 'shmring');
file_put_contents($file, json_encode($set));
ringctl($sparse, 'load', $file);
unlink($file);
$s = new Shmring\Ring($sparse);
$expected = ringctl_lookup($sparse, $keys);
$seen = [];
$bad = 0;
foreach ($keys as $key) {
    $node = $s->lookup($key);
    $seen[$node->id] ??= $node;
    $bad += ($seen[$node->id] !== $node || [$node->name, $node->address] !== $expected[$key]) ? 1 : 0;
}
ksort($seen);
echo implode(' ', array_keys($seen)), "; $bad mismatches\n";
?>
--EXPECT--
-- a published ring
present true, destroyed false, generation 2, fingerprint as ringctl shows it, error 0
int(16)
bool(true)
Error(0): Cannot modify readonly property Shmring\Status::$present
Error(0): Call to private Shmring\Status::__construct() from global scope
-- one Node object per node and version
500 of 500 lookups returned their node's first object; 4 nodes
bool(true)
int(7)
string(6) "node-1"
bool(true)
0 mismatches with ringctl lookup
present true, destroyed false, generation 3, fingerprint as ringctl shows it, error 0
-- destroyed
present false, destroyed true, generation 3, same fingerprint true, error -2
bool(true)
-- made again under the name
present true, destroyed false, generation 2, fingerprint as ringctl shows it, error 0
string(5) "omega"
-- large and sparse ids
3 65535 65536 4294967294; 0 mismatches
