/*
 * A test-only hook into the reader. The tests set it to hold a call inside a handle
 * while it switches versions, which is how they prove what another call of the same
 * handle, or a forked child, does meanwhile without racing the scheduler.
 */
#ifndef SHMRING_READER_INTERNAL_H
#define SHMRING_READER_INTERNAL_H

/* Called, when not NULL, by the call that switches a handle to a newer version: after
 * the new version is mapped and validated, before the handle answers from it. */
extern void (*shmring__reader_switch_hook)(void);

#endif /* SHMRING_READER_INTERNAL_H */
