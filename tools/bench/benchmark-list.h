/*
 * The benchmarks, in the order they print (libuv's benchmark-list.h). Included by the
 * runner alone. An early benchmark runs before the key sets exist but prints in its
 * place here; each benchmark's targets are judged and printed in this order too.
 */
#ifndef RINGBENCH_BENCHMARK_LIST_H
#define RINGBENCH_BENCHMARK_LIST_H

#include "ringbench.h"

extern const struct benchmark benchmark_lookup;
extern const struct benchmark benchmark_stream;
extern const struct benchmark benchmark_workers;
extern const struct benchmark benchmark_publish;
extern const struct benchmark benchmark_switch;
extern const struct benchmark benchmark_ringctl;
extern const struct benchmark benchmark_balance;
extern const struct benchmark benchmark_vnodes;
extern const struct benchmark benchmark_disruption;
extern const struct benchmark benchmark_nodes;
extern const struct benchmark benchmark_clients;
extern const struct benchmark benchmark_spymemcached;
extern const struct benchmark benchmark_bounded;
/* Only in a build with sync (SHMRING_SYNC): it speaks to etcd with libcurl. */
#ifdef RINGBENCH_HAVE_SYNC
extern const struct benchmark benchmark_sync;
#endif

static const struct benchmark *const benchmark_list[] = {
    &benchmark_lookup,  &benchmark_stream,  &benchmark_workers,
    &benchmark_publish, &benchmark_switch,  &benchmark_ringctl,
    &benchmark_balance, &benchmark_vnodes,  &benchmark_disruption,
    &benchmark_nodes,   &benchmark_clients, &benchmark_spymemcached,
    &benchmark_bounded,
#ifdef RINGBENCH_HAVE_SYNC
    &benchmark_sync,
#endif
};

#endif
