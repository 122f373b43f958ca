/*
 * The shmring PHP extension: Shmring\Ring, a reader of a consistent-hash ring in
 * POSIX shared memory, over libshmring's reader API (include/shmring.h).
 */
#ifndef PHP_SHMRING_H
#define PHP_SHMRING_H

extern zend_module_entry shmring_module_entry;
#define phpext_shmring_ptr &shmring_module_entry

/* The extension's version is the version of the libshmring headers it is compiled
 * against, which CMake generates from project(VERSION): written once, for the library
 * and every binding. */
#include <shmring_version.h>
#define PHP_SHMRING_VERSION SHMRING_VERSION_STRING

/*
 * The per-process registry of open rings. Keys are (name, directory, trusted owner);
 * values are shmring_t handles, opened on the first `new Shmring\Ring` that names them
 * and kept until the module shuts down, so that every later request of a PHP-FPM
 * worker reuses the mapping. The table is allocated persistently: it outlives
 * requests.
 */
ZEND_BEGIN_MODULE_GLOBALS(shmring)
HashTable rings;
/* shmring.preopen: comma-separated ring names opened at module startup. */
char *preopen;
/* This request's leases still held (Shmring\Lease objects, linked through their
 * own fields), which RSHUTDOWN releases: a lease never outlives its request. */
struct shmring_lease_object *leases;
ZEND_END_MODULE_GLOBALS(shmring)

#define SHMRING_G(v) ZEND_MODULE_GLOBALS_ACCESSOR(shmring, v)

#if defined(ZTS) && defined(COMPILE_DL_SHMRING)
ZEND_TSRMLS_CACHE_EXTERN()
#endif

#endif /* PHP_SHMRING_H */
