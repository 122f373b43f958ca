--TEST--
The README's health.php, as the README shows it: the ring missing, live, then destroyed
--SKIPIF--
<?php
require __DIR__ . '/skipif.inc';
if (!function_exists('pcntl_fork')) die('skip pcntl not available');
if (getenv('SHMRING_PHP_SOURCE') === false) die('skip SHMRING_PHP_SOURCE does not name bindings/php');
?>
--FILE--
<?php
require __DIR__ . '/ring.inc';

// The README's example, with the test's ring name for 'cache'.
$readme = file_get_contents(getenv('SHMRING_PHP_SOURCE') . '/README.md');
$start = strpos($readme, "```php\n<?php\n// health.php");
$code = substr($readme, $start + strlen("```php\n"),
               strpos($readme, "```", $start + 7) - $start - strlen("```php\n"));
$ring = sprintf('phpt-health-%d', getmypid());
$script = tempnam(sys_get_temp_dir(), 'health');
file_put_contents($script, str_replace("'cache'", "'$ring'", $code));

// Each request runs in a child of its own, as a worker's request would: the
// script ends with exit().
function request(string $script, string $ring): void
{
    $pid = pcntl_fork();
    if ($pid === 0) {
        ob_start(function (string $out) use ($ring) {
            return str_replace($ring, 'RING', $out);
        });
        include $script;
        exit(0);
    }
    pcntl_waitpid($pid, $status);
}

request($script, $ring);
ringctl($ring, 'init');
ringctl($ring, 'add', 'a', '10.0.0.1:11211');
$fingerprint = json_decode(ringctl($ring, '--json', 'show'), true)['fingerprint'];
ob_start(fn($out) => str_replace($fingerprint, 'FINGERPRINT', $out));
request($script, $ring);
ob_end_flush();
// Opened in this process, which the children inherit, so they see it destroyed.
$r = new Shmring\Ring($ring);
ringctl($ring, 'destroy');
request($script, $ring);
unlink($script);
?>
--EXPECT--
ring 'RING' does not exist yet
generation 2, fingerprint FINGERPRINT
ring 'RING' was destroyed; answering from generation 2
