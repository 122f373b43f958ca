/* Written to match gen_stub.php's output for shmring.stub.php (PHP 8.2); regenerate
 * with `php /usr/lib/php/20220829/build/gen_stub.php -f shmring.stub.php` where
 * gen_stub.php can fetch PHP-Parser, and keep the two in step by hand otherwise. */

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Shmring_Node___construct, 0, 0, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_INFO_EX(arginfo_class_Shmring_Ring___construct, 0, 0, 1)
ZEND_ARG_TYPE_INFO(0, name, IS_STRING, 0)
ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, directory, IS_STRING, 1, "null")
ZEND_ARG_TYPE_INFO_WITH_DEFAULT_VALUE(0, trustedOwner, IS_LONG, 1, "null")
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Shmring_Ring_lookup, 0, 1,
                                       Shmring\\Node, 0)
ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Shmring_Ring_lookupId, 0, 1,
                                        IS_LONG, 0)
ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Shmring_Ring_lookupIds, 0, 1,
                                        IS_ARRAY, 0)
ZEND_ARG_TYPE_INFO(0, keys, IS_ARRAY, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Shmring_Ring_lookupN, 0, 2,
                                        IS_ARRAY, 0)
ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
ZEND_ARG_TYPE_INFO(0, n, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Shmring_Ring_nodes, 0, 0, IS_ARRAY,
                                        0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Shmring_Ring_node, 0, 1,
                                       Shmring\\Node, 0)
ZEND_ARG_TYPE_INFO(0, id, IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Shmring_Ring_generation, 0, 0,
                                        IS_LONG, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Shmring_Ring_fingerprint, 0, 0,
                                        IS_STRING, 1)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Shmring_Ring_status, 0, 0,
                                       Shmring\\Status, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_OBJ_INFO_EX(arginfo_class_Shmring_Ring_acquire, 0, 1,
                                       Shmring\\Lease, 0)
ZEND_ARG_TYPE_INFO(0, key, IS_STRING, 0)
ZEND_END_ARG_INFO()

#define arginfo_class_Shmring_Status___construct arginfo_class_Shmring_Node___construct

#define arginfo_class_Shmring_Lease___construct arginfo_class_Shmring_Node___construct

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Shmring_Lease_release, 0, 0,
                                        IS_VOID, 0)
ZEND_END_ARG_INFO()

ZEND_BEGIN_ARG_WITH_RETURN_TYPE_INFO_EX(arginfo_class_Shmring_Lease_isHeld, 0, 0,
                                        _IS_BOOL, 0)
ZEND_END_ARG_INFO()

ZEND_METHOD(Shmring_Node, __construct);
ZEND_METHOD(Shmring_Ring, __construct);
ZEND_METHOD(Shmring_Ring, lookup);
ZEND_METHOD(Shmring_Ring, lookupId);
ZEND_METHOD(Shmring_Ring, lookupIds);
ZEND_METHOD(Shmring_Ring, lookupN);
ZEND_METHOD(Shmring_Ring, nodes);
ZEND_METHOD(Shmring_Ring, node);
ZEND_METHOD(Shmring_Ring, generation);
ZEND_METHOD(Shmring_Ring, fingerprint);
ZEND_METHOD(Shmring_Ring, status);
ZEND_METHOD(Shmring_Ring, acquire);
ZEND_METHOD(Shmring_Status, __construct);
ZEND_METHOD(Shmring_Lease, __construct);
ZEND_METHOD(Shmring_Lease, release);
ZEND_METHOD(Shmring_Lease, isHeld);

static const zend_function_entry class_Shmring_Node_methods[] = {
    ZEND_ME(Shmring_Node, __construct, arginfo_class_Shmring_Node___construct,
            ZEND_ACC_PRIVATE) ZEND_FE_END};

static const zend_function_entry class_Shmring_Ring_methods[] = {
    ZEND_ME(Shmring_Ring, __construct, arginfo_class_Shmring_Ring___construct,
            ZEND_ACC_PUBLIC) ZEND_ME(Shmring_Ring, lookup,
                                     arginfo_class_Shmring_Ring_lookup, ZEND_ACC_PUBLIC)
        ZEND_ME(Shmring_Ring, lookupId, arginfo_class_Shmring_Ring_lookupId,
                ZEND_ACC_PUBLIC) ZEND_ME(Shmring_Ring, lookupIds,
                                         arginfo_class_Shmring_Ring_lookupIds,
                                         ZEND_ACC_PUBLIC)
            ZEND_ME(Shmring_Ring, lookupN, arginfo_class_Shmring_Ring_lookupN,
                    ZEND_ACC_PUBLIC) ZEND_ME(Shmring_Ring, nodes,
                                             arginfo_class_Shmring_Ring_nodes,
                                             ZEND_ACC_PUBLIC)
                ZEND_ME(Shmring_Ring, node, arginfo_class_Shmring_Ring_node,
                        ZEND_ACC_PUBLIC) ZEND_ME(Shmring_Ring, generation,
                                                 arginfo_class_Shmring_Ring_generation,
                                                 ZEND_ACC_PUBLIC)
                    ZEND_ME(Shmring_Ring, fingerprint,
                            arginfo_class_Shmring_Ring_fingerprint, ZEND_ACC_PUBLIC)
                        ZEND_ME(Shmring_Ring, status, arginfo_class_Shmring_Ring_status,
                                ZEND_ACC_PUBLIC)
                            ZEND_ME(Shmring_Ring, acquire,
                                    arginfo_class_Shmring_Ring_acquire, ZEND_ACC_PUBLIC)
                                ZEND_FE_END};

static const zend_function_entry class_Shmring_Status_methods[] = {
    ZEND_ME(Shmring_Status, __construct, arginfo_class_Shmring_Status___construct,
            ZEND_ACC_PRIVATE) ZEND_FE_END};

static const zend_function_entry class_Shmring_Lease_methods[] = {ZEND_ME(
    Shmring_Lease, __construct, arginfo_class_Shmring_Lease___construct,
    ZEND_ACC_PRIVATE) ZEND_ME(Shmring_Lease, release, arginfo_class_Shmring_Lease_release,
                              ZEND_ACC_PUBLIC) ZEND_ME(Shmring_Lease, isHeld,
                                                       arginfo_class_Shmring_Lease_isHeld,
                                                       ZEND_ACC_PUBLIC) ZEND_FE_END};

static const zend_function_entry class_Shmring_Exception_methods[] = {ZEND_FE_END};

static const zend_function_entry class_Shmring_RingNotFoundException_methods[] = {
    ZEND_FE_END};

static const zend_function_entry class_Shmring_PermissionException_methods[] = {
    ZEND_FE_END};

static const zend_function_entry class_Shmring_InvalidRingException_methods[] = {
    ZEND_FE_END};

static const zend_function_entry class_Shmring_EmptyRingException_methods[] = {
    ZEND_FE_END};

static const zend_function_entry class_Shmring_AllNodesDownException_methods[] = {
    ZEND_FE_END};

static const zend_function_entry class_Shmring_NodeNotFoundException_methods[] = {
    ZEND_FE_END};

static zend_class_entry *register_class_Shmring_Node(void)
{
    zend_class_entry ce, *class_entry;

    INIT_NS_CLASS_ENTRY(ce, "Shmring", "Node", class_Shmring_Node_methods);
    class_entry = zend_register_internal_class_ex(&ce, NULL);
    class_entry->ce_flags |=
        ZEND_ACC_FINAL | ZEND_ACC_NO_DYNAMIC_PROPERTIES | ZEND_ACC_NOT_SERIALIZABLE;

    zval property_id_default_value;
    ZVAL_UNDEF(&property_id_default_value);
    zend_string *property_id_name = zend_string_init("id", sizeof("id") - 1, 1);
    zend_declare_typed_property(class_entry, property_id_name, &property_id_default_value,
                                ZEND_ACC_PUBLIC | ZEND_ACC_READONLY, NULL,
                                (zend_type)ZEND_TYPE_INIT_MASK(MAY_BE_LONG));
    zend_string_release(property_id_name);

    zval property_name_default_value;
    ZVAL_UNDEF(&property_name_default_value);
    zend_string *property_name_name = zend_string_init("name", sizeof("name") - 1, 1);
    zend_declare_typed_property(class_entry, property_name_name,
                                &property_name_default_value,
                                ZEND_ACC_PUBLIC | ZEND_ACC_READONLY, NULL,
                                (zend_type)ZEND_TYPE_INIT_MASK(MAY_BE_STRING));
    zend_string_release(property_name_name);

    zval property_address_default_value;
    ZVAL_UNDEF(&property_address_default_value);
    zend_string *property_address_name =
        zend_string_init("address", sizeof("address") - 1, 1);
    zend_declare_typed_property(class_entry, property_address_name,
                                &property_address_default_value,
                                ZEND_ACC_PUBLIC | ZEND_ACC_READONLY, NULL,
                                (zend_type)ZEND_TYPE_INIT_MASK(MAY_BE_STRING));
    zend_string_release(property_address_name);

    zval property_weight_default_value;
    ZVAL_UNDEF(&property_weight_default_value);
    zend_string *property_weight_name =
        zend_string_init("weight", sizeof("weight") - 1, 1);
    zend_declare_typed_property(class_entry, property_weight_name,
                                &property_weight_default_value,
                                ZEND_ACC_PUBLIC | ZEND_ACC_READONLY, NULL,
                                (zend_type)ZEND_TYPE_INIT_MASK(MAY_BE_LONG));
    zend_string_release(property_weight_name);

    return class_entry;
}

/* One readonly public property of an internal class, as gen_stub.php declares it. */
static void declare_readonly(zend_class_entry *class_entry, const char *name,
                             uint32_t type_mask)
{
    zval default_value;
    ZVAL_UNDEF(&default_value);
    zend_string *property_name = zend_string_init(name, strlen(name), 1);
    zend_declare_typed_property(class_entry, property_name, &default_value,
                                ZEND_ACC_PUBLIC | ZEND_ACC_READONLY, NULL,
                                (zend_type)ZEND_TYPE_INIT_MASK(type_mask));
    zend_string_release(property_name);
}

static zend_class_entry *register_class_Shmring_Status(void)
{
    zend_class_entry ce, *class_entry;

    INIT_NS_CLASS_ENTRY(ce, "Shmring", "Status", class_Shmring_Status_methods);
    class_entry = zend_register_internal_class_ex(&ce, NULL);
    class_entry->ce_flags |=
        ZEND_ACC_FINAL | ZEND_ACC_NO_DYNAMIC_PROPERTIES | ZEND_ACC_NOT_SERIALIZABLE;
    declare_readonly(class_entry, "present", MAY_BE_BOOL);
    declare_readonly(class_entry, "destroyed", MAY_BE_BOOL);
    declare_readonly(class_entry, "generation", MAY_BE_LONG);
    declare_readonly(class_entry, "fingerprint", MAY_BE_STRING | MAY_BE_NULL);
    declare_readonly(class_entry, "error", MAY_BE_LONG);
    declare_readonly(class_entry, "failedFormat", MAY_BE_LONG);

    return class_entry;
}

static zend_class_entry *register_class_Shmring_Lease(void)
{
    zend_class_entry ce, *class_entry;

    INIT_NS_CLASS_ENTRY(ce, "Shmring", "Lease", class_Shmring_Lease_methods);
    class_entry = zend_register_internal_class_ex(&ce, NULL);
    class_entry->ce_flags |=
        ZEND_ACC_FINAL | ZEND_ACC_NO_DYNAMIC_PROPERTIES | ZEND_ACC_NOT_SERIALIZABLE;

    zval property_node_default_value;
    ZVAL_UNDEF(&property_node_default_value);
    zend_string *property_node_name = zend_string_init("node", sizeof("node") - 1, 1);
    zend_string *property_node_class_Shmring_Node =
        zend_string_init("Shmring\\Node", sizeof("Shmring\\Node") - 1, 1);
    zend_declare_typed_property(
        class_entry, property_node_name, &property_node_default_value,
        ZEND_ACC_PUBLIC | ZEND_ACC_READONLY, NULL,
        (zend_type)ZEND_TYPE_INIT_CLASS(property_node_class_Shmring_Node, 0, 0));
    zend_string_release(property_node_name);
    declare_readonly(class_entry, "candidates", MAY_BE_LONG);
    declare_readonly(class_entry, "counted", MAY_BE_BOOL);

    return class_entry;
}

static zend_class_entry *register_class_Shmring_Ring(void)
{
    zend_class_entry ce, *class_entry;

    INIT_NS_CLASS_ENTRY(ce, "Shmring", "Ring", class_Shmring_Ring_methods);
    class_entry = zend_register_internal_class_ex(&ce, NULL);
    class_entry->ce_flags |=
        ZEND_ACC_FINAL | ZEND_ACC_NO_DYNAMIC_PROPERTIES | ZEND_ACC_NOT_SERIALIZABLE;

    return class_entry;
}

static zend_class_entry *
register_class_Shmring_Exception(zend_class_entry *class_entry_RuntimeException)
{
    zend_class_entry ce, *class_entry;

    INIT_NS_CLASS_ENTRY(ce, "Shmring", "Exception", class_Shmring_Exception_methods);
    class_entry = zend_register_internal_class_ex(&ce, class_entry_RuntimeException);

    return class_entry;
}

static zend_class_entry *register_class_Shmring_RingNotFoundException(
    zend_class_entry *class_entry_Shmring_Exception)
{
    zend_class_entry ce, *class_entry;

    INIT_NS_CLASS_ENTRY(ce, "Shmring", "RingNotFoundException",
                        class_Shmring_RingNotFoundException_methods);
    class_entry = zend_register_internal_class_ex(&ce, class_entry_Shmring_Exception);

    return class_entry;
}

static zend_class_entry *register_class_Shmring_PermissionException(
    zend_class_entry *class_entry_Shmring_Exception)
{
    zend_class_entry ce, *class_entry;

    INIT_NS_CLASS_ENTRY(ce, "Shmring", "PermissionException",
                        class_Shmring_PermissionException_methods);
    class_entry = zend_register_internal_class_ex(&ce, class_entry_Shmring_Exception);

    return class_entry;
}

static zend_class_entry *register_class_Shmring_InvalidRingException(
    zend_class_entry *class_entry_Shmring_Exception)
{
    zend_class_entry ce, *class_entry;

    INIT_NS_CLASS_ENTRY(ce, "Shmring", "InvalidRingException",
                        class_Shmring_InvalidRingException_methods);
    class_entry = zend_register_internal_class_ex(&ce, class_entry_Shmring_Exception);

    return class_entry;
}

static zend_class_entry *
register_class_Shmring_EmptyRingException(zend_class_entry *class_entry_Shmring_Exception)
{
    zend_class_entry ce, *class_entry;

    INIT_NS_CLASS_ENTRY(ce, "Shmring", "EmptyRingException",
                        class_Shmring_EmptyRingException_methods);
    class_entry = zend_register_internal_class_ex(&ce, class_entry_Shmring_Exception);

    return class_entry;
}

static zend_class_entry *register_class_Shmring_AllNodesDownException(
    zend_class_entry *class_entry_Shmring_Exception)
{
    zend_class_entry ce, *class_entry;

    INIT_NS_CLASS_ENTRY(ce, "Shmring", "AllNodesDownException",
                        class_Shmring_AllNodesDownException_methods);
    class_entry = zend_register_internal_class_ex(&ce, class_entry_Shmring_Exception);

    return class_entry;
}

static zend_class_entry *register_class_Shmring_NodeNotFoundException(
    zend_class_entry *class_entry_Shmring_Exception)
{
    zend_class_entry ce, *class_entry;

    INIT_NS_CLASS_ENTRY(ce, "Shmring", "NodeNotFoundException",
                        class_Shmring_NodeNotFoundException_methods);
    class_entry = zend_register_internal_class_ex(&ce, class_entry_Shmring_Exception);

    return class_entry;
}
