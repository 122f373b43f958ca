--TEST--
Shmring\Ring in another directory, with a trusted owner
--SKIPIF--
<?php require __DIR__ . '/skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/ring.inc';

$dir = sys_get_temp_dir() . '/shmring-phpt-' . getmypid();
mkdir($dir, 0755);
chmod($dir, 0755);
$ring = test_ring('directory', 5, $dir);
// Registered after test_ring()'s, so it runs after the ring is destroyed.
register_shutdown_function(fn() => rmdir($dir));

$r = new Shmring\Ring($ring, $dir, fileowner("$dir/shmring.$ring"));
$expected = explode("\t", rtrim(ringctl($ring, '--dir', $dir, 'lookup', 'some-key')));
$node = $r->lookup('some-key');
var_dump([$node->name, $node->address] === [$expected[1], $expected[2]]);
var_dump(count($r->nodes()), $r->generation());
// The same name in the default directory is another ring (here: none).
try {
    new Shmring\Ring($ring);
} catch (Shmring\RingNotFoundException $e) {
    echo get_class($e), ' ', $e->getCode(), "\n";
}
?>
--EXPECT--
bool(true)
int(5)
int(2)
Shmring\RingNotFoundException -2
