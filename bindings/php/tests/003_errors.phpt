--TEST--
Shmring\Ring: exact exception classes and codes, bad arguments
--SKIPIF--
<?php require __DIR__ . '/skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/ring.inc';

echo "-- opening\n";
show_exception(fn() => new Shmring\Ring('phpt-no-such-ring-' . getmypid()));
show_exception(fn() => new Shmring\Ring(''));
show_exception(fn() => new Shmring\Ring('bad/name'));
show_exception(fn() => new Shmring\Ring('..'));
show_exception(fn() => new Shmring\Ring(str_repeat('a', 201)));
show_exception(fn() => new Shmring\Ring("nul\0byte"));
show_exception(fn() => new Shmring\Ring('x', "/dev\0/shm"));
show_exception(fn() => new Shmring\Ring('x', '/nonexistent-shmring-dir'));
show_exception(fn() => new Shmring\Ring('x', str_repeat('/d', 600)));
show_exception(fn() => new Shmring\Ring('x', 'rel/x'));
show_exception(fn() => new Shmring\Ring('x', '/proc'));
show_exception(fn() => new Shmring\Ring('x', '/etc/passwd'));
show_exception(fn() => new Shmring\Ring('x', '/dev/shm/../shm'));
show_exception(fn() => new Shmring\Ring('x', null, -1));
show_exception(fn() => new Shmring\Ring([]));
show_exception(fn() => new Shmring\Ring());

echo "-- empty ring\n";
$ring = test_ring('errors-empty');
$r = new Shmring\Ring($ring);
show_exception(fn() => $r->lookup('k'));
show_exception(fn() => $r->lookupId('k'));
show_exception(fn() => $r->lookupIds(['k']));
show_exception(fn() => $r->lookupIds([]));
show_exception(fn() => $r->lookupN('k', 3));
show_exception(fn() => $r->node(0));
var_dump($r->nodes(), $r->generation(), strlen($r->fingerprint()));

echo "-- all nodes down\n";
$ring = test_ring('errors-down', 2);
ringctl($ring, 'down', 'node-0');
ringctl($ring, 'down', 'node-1');
$r = new Shmring\Ring($ring);
show_exception(fn() => $r->lookup('k'));
show_exception(fn() => $r->lookupId('k'));
show_exception(fn() => $r->lookupIds(['k', 'l']));
show_exception(fn() => $r->lookupN('k', 2));
var_dump(count($r->nodes()), $r->node(1)->name);

echo "-- bad arguments\n";
ringctl($ring, 'up', 'node-1');
show_exception(fn() => $r->node(2));
show_exception(fn() => $r->node(-1));
show_exception(fn() => $r->node(PHP_INT_MAX));
show_exception(fn() => $r->lookupN('k', 0));
show_exception(fn() => $r->lookupN('k', -5));
show_exception(fn() => $r->lookupN('k', PHP_INT_MAX)[0]->name);
show_exception(fn() => $r->lookup([]));
show_exception(fn() => $r->lookup(new stdClass()));
show_exception(fn() => $r->lookupIds('k'));
show_exception(fn() => $r->lookupIds(['k', 1]));
show_exception(fn() => $r->lookupIds(['k', null]));
show_exception(fn() => $r->lookupIds([['k']]));
show_exception(fn() => $r->lookupN('k', 'two'));
show_exception(fn() => $r->node('zero'));
show_exception(fn() => $r->generation(1));
// Keys are bytes: NUL bytes and empty keys are keys like any other.
var_dump($r->lookupId('') === 1, $r->lookupId("a\0b") === 1);
$k = 'ref';
$ids = $r->lookupIds([&$k]);
var_dump($ids);

echo "-- uninitialized object\n";
show_exception(fn() => (new ReflectionClass('Shmring\Ring'))->newInstanceWithoutConstructor());
?>
--EXPECTF--
-- opening
Shmring\RingNotFoundException(-2): cannot open ring 'phpt-no-such-ring-%d': no such ring
Shmring\InvalidRingException(-1020): cannot open ring '': invalid ring name
Shmring\InvalidRingException(-1020): cannot open ring 'bad/name': invalid ring name
Shmring\InvalidRingException(-1020): cannot open ring '..': invalid ring name
Shmring\InvalidRingException(-1020): cannot open ring '%s': invalid ring name
ValueError(0): Shmring\Ring::__construct(): Argument #1 ($name) must not contain any null bytes
ValueError(0): Shmring\Ring::__construct(): Argument #2 ($directory) must not contain any null bytes
Shmring\RingNotFoundException(-1032): cannot open ring 'x': directory '/nonexistent-shmring-dir': no such ring directory
Shmring\InvalidRingException(-1031): cannot open ring 'x': directory '%s': ring directory must be an absolute path of at most 1024 bytes
Shmring\InvalidRingException(-1031): cannot open ring 'x': directory 'rel/x': ring directory must be an absolute path of at most 1024 bytes
Shmring\InvalidRingException(-1033): cannot open ring 'x': directory '/proc': not a ring directory (a kernel filesystem such as /proc)
Shmring\InvalidRingException(-20): cannot open ring 'x': directory '/etc/passwd': Not a directory
Shmring\InvalidRingException(-1031): cannot open ring 'x': directory '/dev/shm/../shm': a ring directory path must not contain '..'
ValueError(0): Shmring\Ring::__construct(): Argument #3 ($trustedOwner) must be a uid from 0 to 4294967294
TypeError(0): Shmring\Ring::__construct(): Argument #1 ($name) must be of type string, array given
ArgumentCountError(0): Shmring\Ring::__construct() expects at least 1 argument, 0 given
-- empty ring
Shmring\EmptyRingException(-1000): ring has no nodes
Shmring\EmptyRingException(-1000): ring has no nodes
Shmring\EmptyRingException(-1000): ring has no nodes
Shmring\EmptyRingException(-1000): ring has no nodes
Shmring\EmptyRingException(-1000): ring has no nodes
Shmring\NodeNotFoundException(-1015): no such node
array(0) {
}
int(1)
int(16)
-- all nodes down
Shmring\AllNodesDownException(-1001): all nodes of the ring are down
Shmring\AllNodesDownException(-1001): all nodes of the ring are down
Shmring\AllNodesDownException(-1001): all nodes of the ring are down
Shmring\AllNodesDownException(-1001): all nodes of the ring are down
int(2)
string(6) "node-1"
-- bad arguments
Shmring\NodeNotFoundException(-1015): no such node
Shmring\NodeNotFoundException(-1015): no such node
Shmring\NodeNotFoundException(-1015): no such node
ValueError(0): Shmring\Ring::lookupN(): Argument #2 ($n) must be greater than 0
ValueError(0): Shmring\Ring::lookupN(): Argument #2 ($n) must be greater than 0
no exception
TypeError(0): Shmring\Ring::lookup(): Argument #1 ($key) must be of type string, array given
TypeError(0): Shmring\Ring::lookup(): Argument #1 ($key) must be of type string, stdClass given
TypeError(0): Shmring\Ring::lookupIds(): Argument #1 ($keys) must be of type array, string given
TypeError(0): Shmring\Ring::lookupIds(): Argument #1 ($keys) must contain only strings, int given
TypeError(0): Shmring\Ring::lookupIds(): Argument #1 ($keys) must contain only strings, null given
TypeError(0): Shmring\Ring::lookupIds(): Argument #1 ($keys) must contain only strings, array given
TypeError(0): Shmring\Ring::lookupN(): Argument #2 ($n) must be of type int, string given
TypeError(0): Shmring\Ring::node(): Argument #1 ($id) must be of type int, string given
ArgumentCountError(0): Shmring\Ring::generation() expects exactly 0 arguments, 1 given
bool(true)
bool(true)
array(1) {
  [0]=>
  int(1)
}
-- uninitialized object
ReflectionException(0): Class Shmring\Ring is an internal class marked as final that cannot be instantiated without invoking its constructor
