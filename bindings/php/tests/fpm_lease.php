<?php
/*
 * The php-fpm test's lease handler (tests/fpm_test.py): takes a lease of the key
 * KEY on the ring RING, prints one JSON line (the worker's pid, the leased node, and
 * the board's in-flight total as `ringctl show --json` gives it now, RINGCTL naming
 * the tool), then ends the request the way MODE says:
 *
 *   release  try/finally, the README's way
 *   throw    an uncaught exception unwinds past the lease
 *   static   the lease is kept in a static variable: the request's end releases it
 *   global   the same in a global variable
 *   fatal    a fatal error (a call of an undefined function) with the lease held
 *   exit     exit() with the lease held
 */
function in_flight(): int
{
    $argv = [$_GET['ringctl'], '-r', $_GET['ring'], '--json', 'show'];
    $proc = proc_open($argv, [1 => ['pipe', 'w']], $pipes);
    $shown = json_decode(stream_get_contents($pipes[1]), true);
    fclose($pipes[1]);
    proc_close($proc);
    return $shown['board']['in_flight'];
}

function report(Shmring\Lease $lease): void
{
    echo json_encode(['pid' => getmypid(), 'node' => $lease->node->name,
                      'counted' => $lease->counted, 'in_flight' => in_flight()]), "\n";
}

function keep_static(Shmring\Ring $ring): void
{
    static $kept = null;
    $kept = $ring->acquire($_GET['key']);
    report($kept);
}

/* In a function, so that the lease of a local variable is the function's. */
function handle(Shmring\Ring $ring, string $mode): void
{
    switch ($mode) {
    case 'release':
        $lease = $ring->acquire($_GET['key']);
        try {
            report($lease);
        } finally {
            $lease->release();
        }
        break;
    case 'throw':
        $lease = $ring->acquire($_GET['key']);
        report($lease);
        throw new RuntimeException('the backend failed');
    case 'static':
        keep_static($ring);
        break;
    case 'global':
        $GLOBALS['kept'] = $ring->acquire($_GET['key']);
        report($GLOBALS['kept']);
        break;
    case 'fatal':
        $lease = $ring->acquire($_GET['key']);
        report($lease);
        no_such_function();
        break;
    case 'exit':
        $lease = $ring->acquire($_GET['key']);
        report($lease);
        exit(0);
    }
}

header('Content-Type: text/plain');
handle(new Shmring\Ring($_GET['ring']), $_GET['mode']);
