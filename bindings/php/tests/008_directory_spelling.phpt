--TEST--
Shmring\Ring: one handle per ring and directory, however the directory is spelled
--SKIPIF--
<?php require __DIR__ . '/skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/ring.inc';

$dir = sys_get_temp_dir() . '/shmring-phpt-spelling-' . getmypid();
mkdir($dir, 0755);
chmod($dir, 0755);
$ring = sprintf('phpt-spelling-%d', getmypid());
ringctl($ring, '--dir', $dir, 'init');
ringctl($ring, '--dir', $dir, 'add', 'a', '10.0.0.1:11211');
$rings = function () {
    ob_start();
    phpinfo(INFO_MODULES);
    preg_match('/rings open in this process => (\d+)/', ob_get_clean(), $m);
    return (int)$m[1];
};
$before = $rings();
$r = new Shmring\Ring($ring, $dir);
var_dump($rings() - $before);
// The ring is destroyed: only a handle opened before can still answer, so each
// spelling below answers only if it found the handle above.
ringctl($ring, '--dir', $dir, 'destroy');
rmdir($dir);
foreach (["$dir/", "/$dir", str_replace('/', '//', $dir), "$dir/.", "/./$dir/./",
          "$dir//.//"] as $spelling) {
    $s = new Shmring\Ring($ring, $spelling);
    echo $s->lookup('k')->name, ' ', $s->generation(), "\n";
}
var_dump($rings() - $before);
// The default directory has one spelling too.
try {
    new Shmring\Ring($ring, '/dev/shm//');
} catch (Shmring\RingNotFoundException $e) {
    echo get_class($e), ' ', $e->getCode(), "\n";
}
?>
--EXPECT--
int(1)
a 2
a 2
a 2
a 2
a 2
a 2
int(1)
Shmring\RingNotFoundException -2
