/* stackreuse.h - launches that name an earlier launch's native stack
 * instead of copying their own (in-process launch stacks, stacks.c).
 *
 * A program launches the same kernels from the same Python lines over and
 * over, through the same C++ frames, and copying those frames (some KiB a
 * launch, into memory the writer thread took last) is most of what a
 * launch record costs. A launch's key is what decides its native call
 * path: the API (cbid), the kernel's name, the stack's depth below the
 * thread's top, and its Python stack (each frame's code and instruction).
 * The first launch of a key on a thread copies its stack, as do its 2nd,
 * 3rd, 5th, 9th, ... 33rd and then one in XPC_REUSE_CHECK_EVERY (checks:
 * ingest unwinds them and counts those whose frames differ from the key's
 * latest; CPython's specializing interpreter changes the C frames of a
 * call after its first runs); the others carry only the key's id, and
 * ingest gives them the frames of its latest copy.
 *
 *   uint64_t key = xpc_reuse_key(cbid, symbol, depth, pystack, pylen);
 *   uint32_t id;
 *   if (xpc_reuse_decide(key, &id) == XPC_REUSE_BORROW) ... // no copy
 *
 * Threads without Python frames always copy: nothing else tells their call
 * sites apart as cheaply. XPCAP_STACK_REUSE=0 turns it off. */
#ifndef XPCUPTI_STACKREUSE_H
#define XPCUPTI_STACKREUSE_H

#include <stdint.h>

#define XPC_REUSE_CHECK_EVERY 64

enum xpc_reuse_what {
	XPC_REUSE_OFF,                  /* no key: copy, unkeyed */
	XPC_REUSE_COPY,                 /* copy, as key *id (its first, or a check) */
	XPC_REUSE_BORROW,               /* no copy: key *id's frames */
};

/* Reads XPCAP_STACK_REUSE; from xpc_stacks_start. */
void xpc_reuse_start(void);
/* The key of a launch; 0 when it has none (no Python frames). depth: the
 * stack's bytes below the thread's top, below bit 48; the caller keeps its
 * Python stack's flags above (stacks.c). */
uint64_t xpc_reuse_key(uint32_t cbid, const char *symbol, uint64_t depth,
		       const void *pystack, uint32_t pylen);
/* What this thread does with a launch of key (see enum); sets *id. */
enum xpc_reuse_what xpc_reuse_decide(uint64_t key, uint32_t *id);
/* The launch just decided was dropped (ring full): a key it made is
 * forgotten, so that no later launch names a copy that never came. */
void xpc_reuse_dropped(uint64_t key);

#endif
