--TEST--
Shmring versions: the extension's, the library's and the headers' are CMake's project version
--SKIPIF--
<?php require __DIR__ . '/skipif.inc'; ?>
--FILE--
<?php
// CMake's project(VERSION), the one place the version is written, as ctest passes it.
$expected = getenv('SHMRING_VERSION');
printf("CMake's version given: %s\n",
       is_string($expected) && preg_match('/^[0-9]+\.[0-9]+\.[0-9]+$/', $expected) ? 'yes' : 'no');
$version = phpversion('shmring');
echo 'extension: ', $version === $expected ? 'same' : "differs ($version)", "\n";

// The module's information shows the library's own version call (shmring_version())
// and the version of the headers the extension was compiled against.
ob_start();
(new ReflectionExtension('shmring'))->info();
$info = ob_get_clean();
foreach (['extension version', 'libshmring version', 'libshmring headers version'] as $row) {
    $shown = preg_match('/^' . preg_quote($row, '/') . ' => (.*)$/m', $info, $m) ? $m[1] : null;
    echo "$row: ", $shown === $expected ? 'same' : 'differs (' . var_export($shown, true) . ')', "\n";
}
?>
--EXPECT--
CMake's version given: yes
extension: same
extension version: same
libshmring version: same
libshmring headers version: same
