/* autograd.h - PyTorch's autograd at each launch (records in src/runfmt_py.h),
 * so that ingest can put a backward kernel at the forward line that made
 * its node.
 *
 * Never loads or links torch: a detached finder thread looks for a
 * libtorch_cpu.so the process already loaded (dl_iterate_phdr, dlopen
 * RTLD_NOLOAD: the loader lock, never taken by a thread the program's exit
 * waits for) and takes three of its exported functions, at::sequence_number::peek(),
 * at::RecordFunction::currentThreadId() and
 * torch::autograd::get_current_node(). At a launch, the thread's next
 * sequence number (and its PyTorch thread id, once it made a node) go into
 * an XP_REC_AUTOGRAD; on a thread where autograd's engine runs a node, the
 * node's sequence number, its forward thread and its type name too. The
 * node's fields are read at the offsets of PyTorch 2.x's Node, after checks
 * that fail closed (autograd.c says which).
 *
 *   xpc_autograd_start();                         // once: the finder thread
 *   xpc_autograd_resolve();                       // writer thread, now and then
 *   n = xpc_autograd_take(dst, corr, tid);        // per launch: bytes, 0 = none
 *   n = xpc_autograd_info(buf, size, ts);         // XP_REC_AUTOGRAD_INFO payload
 */
#ifndef XPCUPTI_AUTOGRAD_H
#define XPCUPTI_AUTOGRAD_H

#include <stddef.h>
#include <stdint.h>

#include "src/runfmt_py.h"

/* Bytes xpc_autograd_take may write (a multiple of 8, under 128: stacks.c
 * keeps it in the ring's note as eighths in four bits). */
#define XPC_AUTOGRAD_MAX (sizeof(struct xp_autograd) + sizeof(struct xp_autograd_node) + \
			  XP_AUTOGRAD_NODE_NAME_MAX)

/* Turns it off for this process (XPCAP_AUTOGRAD=0), before any take. */
void xpc_autograd_disable(void);
/* Starts the finder thread (detached, never joined), unless turned off:
 * 0 or -errno (then off, and the info record says so). */
int xpc_autograd_start(void);
/* Writer thread: 1 when the state changed since the last call (write a
 * new info record). Never blocks. */
int xpc_autograd_resolve(void);
/* The calling thread's autograd state as an XP_REC_AUTOGRAD payload at dst
 * (XPC_AUTOGRAD_MAX bytes of room, 8-byte aligned): its size, 0 for none
 * (handles not found, or the thread never made a node and runs none). */
uint32_t xpc_autograd_take(void *dst, uint64_t correlation_id, uint32_t tid);
/* The XP_REC_AUTOGRAD_INFO payload into buf (what was found, or why not,
 * and the counts); its size. */
size_t xpc_autograd_info(void *buf, size_t size, uint64_t ts, uint32_t pid);

#endif
