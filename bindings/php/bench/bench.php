<?php
/*
 * What routing a key costs from PHP, in two parts.
 *
 * Per request, at 10,000 nodes (160 vnodes each), three ways:
 *   (a) the extension: `new Shmring\Ring($name)` (a registry hit after the worker's
 *       first request) and lookupId(), as each PHP-FPM request would run them;
 *   (b) PHP FFI over libshmring, which cannot keep a handle between requests: each
 *       request opens the ring (map and validate 10,000 x 160 points), looks the key
 *       up and closes it (FFI::cdef itself is left out of the loop);
 *   (c) a pure-PHP ring: crc32 and binary search over the same number of sorted
 *       points, built once (as if kept in opcache), lookup only; building it, which a
 *       request would have to do without such a cache, is timed separately.
 * Each for at least a second (two for FFI), timed by hrtime() around a loop that
 * calls a closure per request.
 *
 * Per lookup, for rings of 10, 100, 1,000 and 10,000 nodes (160 xxh3 points each),
 * in ns per key over 100,000 distinct keys, the foreach loop included: the empty
 * loop, lookupId() (an int), lookup() (a Node object; target: at most 1.3x lookupId(),
 * since it returns the Node made on the node's first lookup in the version),
 * lookupIds() per key of a chunk, lookup() on a ring of the ketama algorithm over the
 * same servers (the answers of php-memcached), and php-memcached's getServerByKey()
 * over those servers (libmemcached's ketama, Memcached::OPT_LIBKETAMA_COMPATIBLE),
 * the usual way PHP picks a server by key. libmemcached 1.1 refuses a ketama
 * continuum of more than 100 servers (it asserts, which aborts the process), so
 * above 100 nodes one line says getServerByKey() is left out; so does one line when
 * the memcached extension (Debian: php8.2-memcached) is not loaded.
 *
 * How the lookups are timed: the key stream is cut into chunks of 1,000 keys and the
 * contenders take turns by chunk, never by whole stream, so that none starts its run
 * on caches that a memory-hungry contender (php-memcached) has just swept while the
 * others run on warm ones. A pass is K rotations of the chunks (K contenders): in
 * rotation r, chunk c is run by contender (offset(c) + r) mod K, so that in a pass
 * every contender runs every chunk once, and offset(c) - offset(c - 1) steps through
 * 1..K-1, so that each contender follows each other one about equally often. A
 * contender's time for a pass is the sum of its chunks' times (each timed alone by
 * hrtime()); a row is the lowest of those sums over the passes, divided by the
 * number of keys. One more pass before them is not counted (its first lookups map
 * the ring's pages and make its Node objects).
 *
 * Usage: bench.php [--quick] [--passes N] [--nodes N,N...]
 * --quick: a smoke test (100 nodes, 10,000 keys, one pass, short per-request timings).
 * --passes: passes of the lookups, the best of which is kept (default 7).
 * --nodes: the ring sizes of the lookups (default 10,100,1000,10000).
 * Environment: SHMRING_RINGCTL (the built ringctl), SHMRING_LIBRARY (libshmring.so
 * for FFI). Run through the CMake target shmring_php_bench, or:
 *   php -n -d extension=.../shmring.so -d extension=ffi -d ffi.enable=1 \
 *       -d extension=igbinary -d extension=msgpack -d extension=memcached bench.php
 */
const VNODES = 160;
const REQUEST_NODES = 10000;
const TARGET_NODE_RATIO = 1.3;
// Contenders take turns by chunks of this many keys: a chunk of lookups takes tens of
// us, against well under 0.1 us for a read of hrtime(), and the caches it inherits
// from another contender are refilled early in it.
const CHUNK_KEYS = 1000;
// libmemcached 1.1 hosts.cc update_continuum() asserts that the servers' points fit a
// continuum of MEMCACHED_CONTINUUM_SIZE, 100 servers' worth.
const MEMCACHED_MAX_SERVERS = 100;

ini_set('memory_limit', '-1');

function usage(string $error): never
{
    fwrite(STDERR, "bench.php: error: $error\n"
        . "usage: bench.php [--quick] [--passes N] [--nodes N,N...]\n");
    exit(2);
}

$options = getopt('', ['quick', 'passes:', 'nodes:'], $rest);
if ($rest < $argc) {
    usage('unexpected argument ' . $argv[$rest]);
}
$quick = isset($options['quick']);
$passes = 7;
if (isset($options['passes'])) {
    if (!is_string($options['passes'])
        || !preg_match('/^[1-9][0-9]*$/', $options['passes'])) {
        usage('--passes takes a number of at least 1');
    }
    $passes = (int)$options['passes'];
}
$sizes = [10, 100, 1000, 10000];
if (isset($options['nodes'])) {
    if (!is_string($options['nodes'])
        || !preg_match('/^[1-9][0-9]*(,[1-9][0-9]*)*$/', $options['nodes'])) {
        usage('--nodes takes ring sizes of at least 1 separated by commas, '
              . 'e.g. 100,10000');
    }
    $sizes = array_map('intval', explode(',', $options['nodes']));
}
$requestNodes = REQUEST_NODES;
$keyCount = 100000;
$seconds = 1.0;
if ($quick) {
    [$sizes, $requestNodes, $keyCount, $passes, $seconds] = [[100], 100, 10000, 1, 0.01];
}

$ringctl = getenv('SHMRING_RINGCTL');
$library = getenv('SHMRING_LIBRARY');
$ring = 'bench-php-' . getmypid();
$made = [];

function run(array $argv): void
{
    $proc = proc_open($argv, [1 => ['pipe', 'w']], $pipes);
    stream_get_contents($pipes[1]);
    fclose($pipes[1]);
    if (proc_close($proc) !== 0) {
        throw new RuntimeException('failed: ' . implode(' ', $argv));
    }
}

/* Publishes SET as the ring NAME and remembers to destroy it. */
function load_ring(string $name, array $set): void
{
    global $ringctl, $made;
    $file = tempnam(sys_get_temp_dir(), 'shmring');
    file_put_contents($file, json_encode($set));
    try {
        $made[] = $name;
        run([$ringctl, '-r', $name, 'load', $file]);
    } finally {
        unlink($file);
    }
}

function node_set(int $count): array
{
    $nodes = [];
    for ($i = 0; $i < $count; $i++) {
        $nodes[] = ['name' => "node-$i", 'address' => sprintf('10.%d.%d.%d:11211',
            $i >> 16, ($i >> 8) & 255, $i & 255)];
    }
    return $nodes;
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

/* Whose turn each chunk starts a rotation with: from one chunk to the next the turn
 * moves on by 1, 2, ..., K-1, 1, 2, ..., so that over a pass each contender runs after
 * each other one about equally often (by a fixed step of 1, each would always run
 * after the same one, and the one after a cache-sweeping contender would pay for it
 * in every chunk). */
function chunk_offsets(int $chunkCount, int $contenderCount): array
{
    $offsets = [0];
    for ($chunk = 1; $chunk < $chunkCount; $chunk++) {
        $step = $contenderCount > 1 ? 1 + ($chunk - 1) % ($contenderCount - 1) : 0;
        $offsets[] = ($offsets[$chunk - 1] + $step) % $contenderCount;
    }
    return $offsets;
}

/* Best ns per key of each of CONTENDERS (label => function timing one chunk, in ns)
 * over PASSES passes, each K rotations of CHUNKS in which chunk c is run by contender
 * (offset(c) + r) mod K (see the comment at the top); a contender's time for a pass
 * is the sum of its chunks'. */
function best_of(array $contenders, array $chunks, int $passes): array
{
    $timers = array_values($contenders);
    $count = count($timers);
    $offsets = chunk_offsets(count($chunks), $count);
    $keyCount = array_sum(array_map('count', $chunks));
    $best = array_fill(0, $count, INF);
    // Pass 0 is not counted: its first lookups map the ring's pages and make its Node
    // objects, which no later pass repeats.
    for ($pass = 0; $pass <= $passes; $pass++) {
        $totals = array_fill(0, $count, 0);
        for ($rotation = 0; $rotation < $count; $rotation++) {
            foreach ($chunks as $c => $chunk) {
                $turn = ($offsets[$c] + $rotation) % $count;
                $totals[$turn] += $timers[$turn]($chunk);
            }
        }
        if ($pass > 0) {
            foreach ($totals as $turn => $total) {
                $best[$turn] = min($best[$turn], $total);
            }
        }
    }
    return array_combine(array_keys($contenders),
                         array_map(fn($total) => $total / $keyCount, $best));
}

/* The contenders of a ring of N nodes: $r the xxh3 ring, $ketama the ketama ring over
 * the same servers, $memcached php-memcached over them (or null). */
function lookup_contenders(Shmring\Ring $r, Shmring\Ring $ketama,
                           ?Memcached $memcached): array
{
    $contenders = [
        'empty loop' => function (array $chunk): int {
            $start = hrtime(true);
            foreach ($chunk as $key) {
            }
            return hrtime(true) - $start;
        },
        '$ring->lookupId($key)' => function (array $chunk) use ($r): int {
            $start = hrtime(true);
            foreach ($chunk as $key) {
                $r->lookupId($key);
            }
            return hrtime(true) - $start;
        },
        '$ring->lookup($key)' => function (array $chunk) use ($r): int {
            $start = hrtime(true);
            foreach ($chunk as $key) {
                $r->lookup($key);
            }
            return hrtime(true) - $start;
        },
        '$ring->lookupIds($chunk), per key' => function (array $chunk) use ($r): int {
            $start = hrtime(true);
            $r->lookupIds($chunk);
            return hrtime(true) - $start;
        },
        'ketama ring ->lookup($key)' => function (array $chunk) use ($ketama): int {
            $start = hrtime(true);
            foreach ($chunk as $key) {
                $ketama->lookup($key);
            }
            return hrtime(true) - $start;
        },
    ];
    if ($memcached !== null) {
        $contenders['php-memcached getServerByKey($key)'] =
            function (array $chunk) use ($memcached): int {
                $start = hrtime(true);
                foreach ($chunk as $key) {
                    $memcached->getServerByKey($key);
                }
                return hrtime(true) - $start;
            };
    }
    return $contenders;
}

try {
    printf("PHP %s, shmring %s, php-memcached %s\n", PHP_VERSION, phpversion('shmring'),
           extension_loaded('memcached') ? phpversion('memcached')
               : 'not loaded (Debian: php8.2-memcached)');

    /* Per request. */
    $nodes = node_set($requestNodes);
    load_ring($ring, ['algorithm' => 'ring', 'hash' => 'xxh3', 'vnodes' => VNODES,
                      'nodes' => $nodes]);
    $keys = [];
    for ($i = 0; $i < 1024; $i++) {
        $keys[] = "user:$i";
    }
    printf("\nper request: %d nodes x %d vnodes = %d points\n", $requestNodes, VNODES,
           $requestNodes * VNODES);

    // The harness's own cost per iteration (a closure call and an array read),
    // included in every figure below.
    $floor = measure(fn($i) => $keys[$i & 1023], 100000, $seconds);

    // (a) The extension, persistent per-process handle.
    $r = new Shmring\Ring($ring);
    $ext = measure(function ($i) use ($ring, $keys) {
        $r = new Shmring\Ring($ring);
        return $r->lookupId($keys[$i & 1023]);
    }, 100000, $seconds);
    $extLookup = measure(fn($i) => $r->lookupId($keys[$i & 1023]), 100000, $seconds);
    $extBatch = measure(fn($i) => $r->lookupIds($keys), 200, $seconds) / count($keys);

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
    $ffiPerRequest = measure($ffiRequest, 20, 2 * $seconds);

    // (c) Pure PHP: crc32 points, each packed with its owner's index, sorted.
    $buildStart = hrtime(true);
    $points = [];
    for ($n = 0; $n < $requestNodes; $n++) {
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
    }, 100000, $seconds);
    unset($points);

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
    unset($r);

    /* Per lookup: Node objects against ids, and php-memcached. */
    $distinct = [];
    for ($i = 0; $i < $keyCount; $i++) {
        $distinct[] = sprintf('user:%d:%x', $i, ($i * 2654435761) & 0xffffffff);
    }
    $chunks = array_chunk($distinct, CHUNK_KEYS);
    printf("\nper lookup: %d distinct keys, %d points per node; ns per key (wall clock):\n"
           . "the lowest total of %d passes, contenders taking turns by chunks of %d keys\n",
           $keyCount, VNODES, $passes, CHUNK_KEYS);
    foreach ($sizes as $size) {
        $nodes = node_set($size);
        $name = "$ring-$size";
        load_ring($name, ['algorithm' => 'ring', 'hash' => 'xxh3', 'vnodes' => VNODES,
                          'nodes' => $nodes]);
        // The nodes of the servers php-memcached is given below, by the README's rule
        // ("Coming from php-memcached"): address host:port, weight 1.
        load_ring("$name-ketama", ['algorithm' => 'ketama',
            'nodes' => array_map(fn($n) => $n + ['weight' => 1], $nodes)]);
        $r = new Shmring\Ring($name);
        $ketama = new Shmring\Ring("$name-ketama");
        $memcached = null;
        $skipped = null;
        if (!extension_loaded('memcached')) {
            $skipped = 'the memcached extension is not loaded (Debian: php8.2-memcached)';
        } elseif ($size > MEMCACHED_MAX_SERVERS) {
            $skipped = sprintf('libmemcached 1.1 aborts on a ketama continuum of more '
                               . 'than %d servers', MEMCACHED_MAX_SERVERS);
        } else {
            $memcached = new Memcached();
            $memcached->setOption(Memcached::OPT_LIBKETAMA_COMPATIBLE, true);
            $servers = [];
            foreach ($nodes as $node) {
                [$host, $port] = explode(':', $node['address']);
                $servers[] = [$host, (int)$port, 1];
            }
            $memcached->addServers($servers);
            foreach (array_slice($distinct, 0, 100) as $key) {
                $server = $memcached->getServerByKey($key);
                $address = "{$server['host']}:{$server['port']}";
                if ($address !== $ketama->lookup($key)->address) {
                    throw new RuntimeException(
                        'php-memcached and the ketama ring disagree');
                }
            }
        }
        $best = best_of(lookup_contenders($r, $ketama, $memcached), $chunks, $passes);

        printf("\nring of %d nodes (%d points)\n", $size, $size * VNODES);
        foreach ($best as $label => $ns) {
            printf("  %-38s %9.1f ns\n", $label, $ns);
        }
        if ($skipped !== null) {
            printf("  %-38s left out: %s\n", 'php-memcached getServerByKey($key)',
                   $skipped);
        }
        $ratio = $best['$ring->lookup($key)'] / $best['$ring->lookupId($key)'];
        printf("  %-38s %10.2fx   (target <= %.1fx: %s)\n", 'lookup / lookupId', $ratio,
               TARGET_NODE_RATIO, $ratio <= TARGET_NODE_RATIO ? 'met' : 'NOT met');
        if ($memcached !== null) {
            $getServer = $best['php-memcached getServerByKey($key)'];
            printf("  %-38s %10.2fx\n", 'getServerByKey / lookup',
                   $getServer / $best['$ring->lookup($key)']);
            printf("  %-38s %10.2fx\n", "getServerByKey / its ring's lookup",
                   $getServer / $best['ketama ring ->lookup($key)']);
        }
        unset($r, $ketama, $memcached);
    }
} finally {
    foreach ($made as $name) {
        run([$ringctl, '-r', $name, 'destroy']);
    }
}
