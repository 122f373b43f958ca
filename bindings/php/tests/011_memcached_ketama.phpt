--TEST--
php-memcached with OPT_LIBKETAMA_COMPATIBLE and a ketama ring from its server list, as the README's "Coming from php-memcached" writes it: getServerByKey() and lookup() agree on every key
--SKIPIF--
<?php
require __DIR__ . '/skipif.inc';
if (!extension_loaded('memcached')) {
    die('skip the memcached extension (Debian: php8.2-memcached) is not loaded');
}
?>
--FILE--
<?php
require __DIR__ . '/ring.inc';

/* The README's rule: a server added as addServer($host, $port, $weight) is the node
 * at "$host:$port" ("[$host]:$port" for an IPv6 address, the path alone for a Unix
 * socket; port 0 is 11211) with weight max($weight, 1), in addServer order. */
function node_address(string $host, int $port): string
{
    if ($host[0] === '/') {
        return $host;
    }
    $port = $port === 0 ? 11211 : $port;
    return str_contains($host, ':') ? "[$host]:$port" : "$host:$port";
}

/* 100 servers (libmemcached 1.1 asserts beyond 100 in a ketama continuum): IPv4
 * addresses on the default port and on others, host names, IPv6 addresses, a Unix
 * socket and a port 0, with weights 0 (libmemcached's default, weight 1) to 9. */
$servers = [];
for ($i = 0; $i < 100; $i++) {
    $weight = ($i * 37) % 10;
    if ($i === 7) {
        $servers[] = ["/run/memcached/memcached-$i.sock", 0, $weight];
    } elseif ($i === 11) {
        $servers[] = ["10.0.1.$i", 0, $weight];
    } elseif ($i % 10 === 3) {
        $servers[] = ["cache-$i.example.com", 11211, $weight];
    } elseif ($i % 10 === 5) {
        $servers[] = [sprintf('2001:db8::%x', $i), 11300 + $i, $weight];
    } else {
        $servers[] = ["10.0.1.$i", $i % 3 === 0 ? 12000 + $i : 11211, $weight];
    }
}

$memcached = new Memcached();
$memcached->setOptions([Memcached::OPT_LIBKETAMA_COMPATIBLE => true]);
$nodes = [];
foreach ($servers as $i => [$host, $port, $weight]) {
    $memcached->addServer($host, $port, $weight);
    $nodes[] = ['name' => "mc-$i", 'address' => node_address($host, $port),
                'weight' => max($weight, 1)];
}

$ring = test_ring('memcached');
$file = tempnam(sys_get_temp_dir(), 'shmring');
file_put_contents($file, json_encode(['algorithm' => 'ketama', 'nodes' => $nodes]));
ringctl($ring, 'load', $file);
unlink($file);
$r = new Shmring\Ring($ring);

/* Keys of several shapes; every server must answer some of them, or a mismatch in
 * a server's points could go unseen. */
$keys = [];
for ($i = 0; $i < 6000; $i++) {
    $keys[] = match ($i % 3) {
        0 => "user:$i",
        1 => "session:" . md5("k$i"),
        2 => "page:/articles/" . ($i * 7919) . "?lang=de",
    };
}
$mismatches = 0;
$answered = [];
foreach ($keys as $key) {
    $server = $memcached->getServerByKey($key);
    $node = $r->lookup($key);
    $mismatches += node_address($server['host'], $server['port']) !== $node->address ? 1 : 0;
    $answered[$node->name] = true;
}
printf("%d servers, weights %d to %d; %d keys, %d mismatches; %d servers answered\n",
       count($servers), min(array_column($nodes, 'weight')),
       max(array_column($nodes, 'weight')), count($keys), $mismatches, count($answered));
?>
--EXPECT--
100 servers, weights 1 to 9; 6000 keys, 0 mismatches; 100 servers answered
