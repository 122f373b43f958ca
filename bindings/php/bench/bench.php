<?php
/*
 * The per-request cost of routing one key at 10,000 nodes, three ways:
 *   (a) the extension: `new Shmring\Ring($name)` (a registry hit after the worker's
 *       first request) and lookupId(), as each PHP-FPM request would run them;
 *   (b) PHP FFI over libshmring, which cannot keep a handle between requests: each
 *       request opens the ring (map and validate 10,000 x 160 points), looks the key
 *       up and closes it (FFI::cdef itself is left out of the loop);
 *   (c) a pure-PHP ring: crc32 and binary search over the same number of sorted
 *       points, built once (as if kept in opcache), lookup only; building it, which a
 *       request would have to do without such a cache, is timed separately.
 * Then, over 100,000 distinct keys, at 10,000 nodes and at 100: lookup() (a Node
 * object) against lookupId() (an int; target: lookup() at most 1.3x, since it
 * returns the Node made on the node's first lookup in the version), and at 100
 * nodes php-memcached's getServerByKey() over the same 100 servers (libmemcached's
 * ketama, Memcached::OPT_LIBKETAMA_COMPATIBLE), the usual way PHP picks a server by
 * key (libmemcached 1.1 refuses more than 100 servers in a ketama continuum: it
 * asserts); its row says so when the memcached extension (Debian:
 * php8.2-memcached) is not loaded.
 * One run; timings from hrtime(). Environment: SHMRING_RINGCTL (the built ringctl),
 * SHMRING_LIBRARY (libshmring.so for FFI). Run through the CMake target
 * shmring_php_bench, or:
 *   php -n -d extension=.../shmring.so -d extension=ffi -d ffi.enable=1 \
 *       -d extension=igbinary -d extension=msgpack -d extension=memcached bench.php
 */
const NODES = 10000;
const VNODES = 160;

ini_set('memory_limit', '-1');
$ringctl = getenv('SHMRING_RINGCTL');
$library = getenv('SHMRING_LIBRARY');
$ring = 'bench-php-' . getmypid();

function run(array $argv): void
{
    $proc = proc_open($argv, [1 => ['pipe', 'w']], $pipes);
    stream_get_contents($pipes[1]);
    fclose($pipes[1]);
    if (proc_close($proc) !== 0) {
        throw new RuntimeException('failed: ' . implode(' ', $argv));
    }
}

/* Runs BODY(i) for at least MIN_SECONDS and MIN_ITERATIONS; returns ns per call. */
function measure(callable $body, int $minIterations, float $minSeconds): float
{
    $iterations = 0;
    $start = hrtime(true);
    do {
        for ($i = 0; $i < $minIterations; $i++) {
            $body($iterations + $i);
        }
        $iterations += $minIterations;
        $elapsed = hrtime(true) - $start;
    } while ($elapsed < $minSeconds * 1e9);
    return $elapsed / $iterations;
}

function format_ns(float $ns): string
{
    return $ns >= 1e6 ? sprintf('%.2f ms', $ns / 1e6)
        : ($ns >= 1e3 ? sprintf('%.2f us', $ns / 1e3) : sprintf('%.0f ns', $ns));
}

$nodes = [];
for ($i = 0; $i < NODES; $i++) {
    $nodes[] = ['name' => "node-$i", 'address' => sprintf('10.%d.%d.%d:11211',
        $i >> 16, ($i >> 8) & 255, $i & 255)];
}
$file = tempnam(sys_get_temp_dir(), 'shmring');
file_put_contents($file, json_encode(['vnodes' => VNODES, 'nodes' => $nodes]));
run([$ringctl, '-r', $ring, 'load', $file]);
unlink($file);

try {
    $keys = [];
    for ($i = 0; $i < 1024; $i++) {
        $keys[] = "user:$i";
    }
    printf("PHP %s, %d nodes x %d vnodes = %d points\n", PHP_VERSION, NODES, VNODES,
           NODES * VNODES);

    // The harness's own cost per iteration (a closure call and an array read),
    // included in every figure below.
    $floor = measure(fn($i) => $keys[$i & 1023], 100000, 1.0);

    // (a) The extension, persistent per-process handle.
    $r = new Shmring\Ring($ring);
    $ext = measure(function ($i) use ($ring, $keys) {
        $r = new Shmring\Ring($ring);
        return $r->lookupId($keys[$i & 1023]);
    }, 100000, 1.0);
    $extLookup = measure(fn($i) => $r->lookupId($keys[$i & 1023]), 100000, 1.0);
    $extBatch = measure(fn($i) => $r->lookupIds($keys), 200, 1.0) / count($keys);

    // (b) FFI, opening the ring in every request.
    $ffi = FFI::cdef('
        typedef struct shmring shmring_t;
        int shmring_open(const char *ring, shmring_t **out);
        void shmring_close(shmring_t *r);
        int shmring_lookup_id(shmring_t *r, const char *key, size_t len, uint32_t *id);
    ', $library);
    $handle = $ffi->new('shmring_t *');
    $id = $ffi->new('uint32_t');
    $ffiRequest = function ($i) use ($ffi, $ring, $keys, $handle, $id) {
        $key = $keys[$i & 1023];
        if ($ffi->shmring_open($ring, FFI::addr($handle)) !== 0) {
            throw new RuntimeException('shmring_open failed');
        }
        $rc = $ffi->shmring_lookup_id($handle, $key, strlen($key), FFI::addr($id));
        $ffi->shmring_close($handle);
        if ($rc !== 0) {
            throw new RuntimeException('shmring_lookup_id failed');
        }
        return $id->cdata;
    };
    foreach ([0, 1, 2] as $i) {
        if ($ffiRequest($i) !== $r->lookupId($keys[$i])) {
            throw new RuntimeException('FFI and the extension disagree');
        }
    }
    $ffiPerRequest = measure($ffiRequest, 20, 2.0);

    // (c) Pure PHP: crc32 points, each packed with its owner's index, sorted.
    $buildStart = hrtime(true);
    $points = [];
    for ($n = 0; $n < NODES; $n++) {
        for ($v = 0; $v < VNODES; $v++) {
            $points[] = (crc32("node-$n-$v") << 14) | $n;
        }
    }
    sort($points);
    $build = hrtime(true) - $buildStart;
    $count = count($points);
    $pure = measure(function ($i) use ($points, $count, $keys) {
        $target = crc32($keys[$i & 1023]) << 14;
        $lo = 0;
        $hi = $count;
        while ($lo < $hi) {
            $mid = ($lo + $hi) >> 1;
            if ($points[$mid] < $target) {
                $lo = $mid + 1;
            } else {
                $hi = $mid;
            }
        }
        return $points[$lo === $count ? 0 : $lo] & 0x3fff;
    }, 100000, 1.0);

    printf("harness floor (closure call + array read), included below: %s\n",
           format_ns($floor));
    printf("(a) extension, per request (new Ring + lookupId): %s\n", format_ns($ext));
    printf("    lookupId alone: %s; lookupIds, per key of 1024: %s\n",
           format_ns($extLookup), format_ns($extBatch));
    printf("(b) FFI, open + lookup + close per request:       %s\n", format_ns($ffiPerRequest));
    printf("(c) pure PHP crc32 ring, lookup (points prebuilt): %s; building the %d points: %s\n",
           format_ns($pure), $count, format_ns((float)$build));
    printf("(b)/(a) = %.0fx (target: at least 100x); (c)/(a) = %.1fx\n",
           $ffiPerRequest / $ext, $pure / $ext);

    // Node objects against ids, over many distinct keys (best of 5 interleaved runs).
    $distinct = [];
    for ($i = 0; $i < 100000; $i++) {
        $distinct[] = sprintf('user:%d:%x', $i, ($i * 2654435761) & 0xffffffff);
    }
    $small = $ring . '-100';
    $file = tempnam(sys_get_temp_dir(), 'shmring');
    file_put_contents($file, json_encode(['vnodes' => VNODES,
                                          'nodes' => array_slice($nodes, 0, 100)]));
    run([$ringctl, '-r', $small, 'load', $file]);
    unlink($file);
    $r100 = new Shmring\Ring($small);
    $memcached = null;
    if (class_exists('Memcached')) {
        $memcached = new Memcached();
        $memcached->setOption(Memcached::OPT_LIBKETAMA_COMPATIBLE, true);
        $servers = [];
        foreach (array_slice($nodes, 0, 100) as $node) {
            [$host, $port] = explode(':', $node['address']);
            $servers[] = [$host, (int)$port, 1];
        }
        $memcached->addServers($servers);
    }
    $pass = function (callable $call) use ($distinct): float {
        $start = hrtime(true);
        foreach ($distinct as $key) {
            $call($key);
        }
        return (hrtime(true) - $start) / count($distinct);
    };
    $best = ['id' => INF, 'node' => INF, 'id100' => INF, 'node100' => INF,
             'memcached' => INF];
    for ($run = 0; $run < 5; $run++) {
        $best['id'] = min($best['id'], $pass(fn($k) => $r->lookupId($k)));
        $best['node'] = min($best['node'], $pass(fn($k) => $r->lookup($k)));
        $best['id100'] = min($best['id100'], $pass(fn($k) => $r100->lookupId($k)));
        $best['node100'] = min($best['node100'], $pass(fn($k) => $r100->lookup($k)));
        if ($memcached !== null) {
            $best['memcached'] = min($best['memcached'],
                                     $pass(fn($k) => $memcached->getServerByKey($k)));
        }
    }
    printf("%d distinct keys, best of 5 interleaved passes, a closure call per key included:\n",
           count($distinct));
    foreach (['' => NODES, '100' => 100] as $suffix => $count) {
        printf("    %5d nodes: lookupId() %s, lookup() %s: lookup()/lookupId() = %.2fx (target: at most 1.3x)\n",
               $count, format_ns($best['id' . $suffix]), format_ns($best['node' . $suffix]),
               $best['node' . $suffix] / $best['id' . $suffix]);
    }
    if ($memcached !== null) {
        printf("      100 servers: php-memcached getServerByKey() %s: getServerByKey()/lookup() = %.1fx\n",
               format_ns($best['memcached']), $best['memcached'] / $best['node100']);
    } else {
        echo "    php-memcached: the memcached extension is not loaded (Debian: php8.2-memcached)\n";
    }
} finally {
    run([$ringctl, '-r', $ring, 'destroy']);
    if (isset($small)) {
        run([$ringctl, '-r', $small, 'destroy']);
    }
}
