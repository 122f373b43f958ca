--TEST--
Shmring classes: Node is final with readonly properties, Ring cannot be cloned or serialized, exception hierarchy
--SKIPIF--
<?php require __DIR__ . '/skipif.inc'; ?>
--FILE--
<?php
require __DIR__ . '/ring.inc';

foreach (['Shmring\Node', 'Shmring\Ring'] as $class) {
    $rc = new ReflectionClass($class);
    printf("%s final=%d\n", $class, $rc->isFinal());
}
foreach ((new ReflectionClass('Shmring\Node'))->getProperties() as $p) {
    printf("Node::\$%s %s readonly=%d public=%d\n", $p->getName(), $p->getType(),
           $p->isReadOnly(), $p->isPublic());
}
foreach (['Exception', 'RingNotFoundException', 'PermissionException',
          'InvalidRingException', 'EmptyRingException', 'AllNodesDownException',
          'NodeNotFoundException'] as $name) {
    $class = "Shmring\\$name";
    printf("%s extends %s\n", $class, get_parent_class($class));
}
echo (new ReflectionMethod('Shmring\Ring', '__construct')), "\n";

$ring = test_ring('classes', 3);
$r = new Shmring\Ring($ring);
$node = $r->node(0);
show_exception(function () use ($node) { $node->id = 7; });
show_exception(function () use ($node) { $node->extra = 7; });
show_exception(fn() => new Shmring\Node());
show_exception(fn() => clone $r);
show_exception(fn() => serialize($r));
show_exception(fn() => $r->__construct($ring));
var_dump($node == $r->lookup('k') || $node != $r->lookup('k'));
?>
--EXPECTF--
Shmring\Node final=1
Shmring\Ring final=1
Node::$id int readonly=1 public=1
Node::$name string readonly=1 public=1
Node::$address string readonly=1 public=1
Node::$weight int readonly=1 public=1
Shmring\Exception extends RuntimeException
Shmring\RingNotFoundException extends Shmring\Exception
Shmring\PermissionException extends Shmring\Exception
Shmring\InvalidRingException extends Shmring\Exception
Shmring\EmptyRingException extends Shmring\Exception
Shmring\AllNodesDownException extends Shmring\Exception
Shmring\NodeNotFoundException extends Shmring\Exception
Method [ <internal:shmring, ctor> public method __construct ] {

  - Parameters [3] {
    Parameter #0 [ <required> string $name ]
    Parameter #1 [ <optional> ?string $directory = null ]
    Parameter #2 [ <optional> ?int $trustedOwner = null ]
  }
}

Error(0): Cannot modify readonly property Shmring\Node::$id
Error(0): Cannot create dynamic property Shmring\Node::$extra
Error(0): Call to private Shmring\Node::__construct() from global scope
Error(0): Trying to clone an uncloneable object of class Shmring\Ring
Exception(0): Serialization of 'Shmring\Ring' is not allowed
Error(0): Shmring\Ring object is already initialized
bool(true)
