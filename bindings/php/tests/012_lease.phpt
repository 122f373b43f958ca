--TEST--
Shmring\Lease: acquire counts on the load board; release, scope and unwinding give it back once
--SKIPIF--
<?php require __DIR__ . '/skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/ring.inc';

$ring = board_ring('lease');
$r = new Shmring\Ring($ring);

echo "-- release\n";
$lease = $r->acquire('user:42');
var_dump($lease->node == $r->lookup('user:42'), $lease->candidates, $lease->counted,
    $lease->isHeld());
[$total, $nodes] = board_in_flight($ring);
var_dump($total, $nodes[$lease->node->name]);
$lease->release();
var_dump($lease->isHeld(), board_in_flight($ring)[0]);
show_exception(fn () => $lease->release());
var_dump(board_in_flight($ring)[0]);

echo "-- out of scope\n";
function handle(Shmring\Ring $r, string $ring): void
{
    $lease = $r->acquire('k');
    echo "in flight in the request: ", board_in_flight($ring)[0], "\n";
}
handle($r, $ring);
var_dump(board_in_flight($ring)[0]);

echo "-- exception unwinding\n";
function fails(Shmring\Ring $r): void
{
    $lease = $r->acquire('k');
    throw new RuntimeException('the backend failed');
}
show_exception(fn () => fails($r));
var_dump(board_in_flight($ring)[0]);

echo "-- try/finally\n";
try {
    $lease = $r->acquire('k');
    try {
        throw new RuntimeException('the backend failed');
    } finally {
        $lease->release();
    }
} catch (RuntimeException $e) {
    echo $e->getMessage(), "\n";
}
var_dump(board_in_flight($ring)[0]);
unset($lease); // released already: nothing more is counted down
var_dump(board_in_flight($ring)[0]);

echo "-- overwritten\n";
$lease = $r->acquire('k');
$lease = $r->acquire('k'); // the first object is freed: released
var_dump(board_in_flight($ring)[0]);
$lease = null;
var_dump(board_in_flight($ring)[0]);

echo "-- candidates\n";
// With N in flight every capacity is ceil(1.25 (N + 1) / 3): 1 1 2 2 3 3 3 4 for
// N = 0..7, so one key takes its candidates in the order 0 1 0 1 0 1 2 0.
$order = $r->lookupN('hot', 3);
$leases = [];
for ($i = 0; $i < 8; $i++) {
    $leases[] = $r->acquire('hot');
}
echo implode(' ', array_map(fn ($l) => array_search($l->node, $order), $leases)), "\n";
echo implode(' ', array_map(fn ($l) => $l->candidates, $leases)), "\n";
[$total, $nodes] = board_in_flight($ring);
echo $total, ': ', implode(' ', array_map(fn ($n) => $nodes[$n->name], $order)), "\n";
$leases = [];
var_dump(board_in_flight($ring)[0]);

echo "-- no board\n";
$plainRing = test_ring('lease-plain', 5);
$plain = new Shmring\Ring($plainRing);
$lease = $plain->acquire('user:42');
var_dump($lease->node == $plain->lookup('user:42'), $lease->candidates, $lease->counted);
$lease->release();
show_exception(fn () => $lease->release());

echo "-- errors\n";
$emptyRing = test_ring('lease-empty');
$empty = new Shmring\Ring($emptyRing);
show_exception(fn () => $empty->acquire('k'));
$downRing = test_ring('lease-down', 1);
ringctl($downRing, 'down', 'node-0');
show_exception(fn () => (new Shmring\Ring($downRing))->acquire('k'));
show_exception(fn () => clone $r->acquire('k'));
show_exception(fn () => serialize($r->acquire('k')));
var_dump(board_in_flight($ring)[0]);
?>
--EXPECTF--
-- release
bool(true)
int(1)
bool(true)
bool(true)
int(1)
int(1)
bool(false)
int(0)
Shmring\Exception(-1042): lease already released, or never acquired
int(0)
-- out of scope
in flight in the request: 1
int(0)
-- exception unwinding
RuntimeException(0): the backend failed
int(0)
-- try/finally
the backend failed
int(0)
int(0)
-- overwritten
int(1)
int(0)
-- candidates
0 1 0 1 0 1 2 0
1 2 1 2 1 2 3 1
8: 4 3 1
int(0)
-- no board
bool(true)
int(1)
bool(false)
Shmring\Exception(-1042): lease already released, or never acquired
-- errors
Shmring\EmptyRingException(-1000): ring has no nodes
Shmring\AllNodesDownException(-1001): all nodes of the ring are down
Error(0): Trying to clone an uncloneable object of class Shmring\Lease
Exception(0): Serialization of 'Shmring\Lease' is not allowed
int(0)
