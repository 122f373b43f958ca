<?php
/*
 * The php-fpm test's request handler (tests/fpm_test.py). It routes COUNT keys
 * (key-0, key-1, ...) through the worker's persistent Shmring\Ring with one
 * lookupIds() call and answers, as JSON: the worker's pid, whether the ring was
 * already open in this process before this request, the ring's generation, the
 * number of /proc/self/maps lines of the ring's objects and of open descriptors, and
 * each key's node name and address.
 *
 * With BARRIER (a directory), the request first waits (bounded) until PARTIES
 * requests have arrived, so that PARTIES concurrent requests reach PARTIES
 * different workers.
 */
function open_rings(): int
{
    ob_start();
    phpinfo(INFO_MODULES);
    // Text under the CLI, HTML under php-fpm.
    return preg_match('/rings open in this process\s*(?:=>)?\s*(\d+)/',
                      strip_tags(ob_get_clean()), $m)
        ? (int)$m[1] : -1;
}

header('Content-Type: application/json');
$ring = $_GET['ring'];
$count = (int)($_GET['count'] ?? 1000);

if (isset($_GET['barrier'])) {
    $barrier = $_GET['barrier'];
    touch("$barrier/" . getmypid());
    $deadline = microtime(true) + 30;
    while (count(glob("$barrier/*")) < (int)$_GET['parties']) {
        if (microtime(true) > $deadline) {
            http_response_code(500);
            echo json_encode(['error' => 'barrier timed out', 'pid' => getmypid()]);
            return;
        }
        usleep(2000);
    }
}

$openBefore = open_rings();
$r = new Shmring\Ring($ring);
$keys = [];
for ($i = 0; $i < $count; $i++) {
    $keys[] = "key-$i";
}
$ids = $r->lookupIds($keys);
$nodes = [];
$answers = [];
foreach ($ids as $i => $id) {
    $node = $nodes[$id] ??= $r->node($id);
    $answers[] = [$node->name, $node->address];
}

$maps = 0;
foreach (file('/proc/self/maps') as $line) {
    $maps += str_contains($line, "/shmring.$ring/") ? 1 : 0;
}
echo json_encode([
    'pid' => getmypid(),
    'open_before' => $openBefore,
    'generation' => $r->generation(),
    'maps' => $maps,
    'fds' => count(scandir('/proc/self/fd')) - 2,
    'answers' => $answers,
]);
