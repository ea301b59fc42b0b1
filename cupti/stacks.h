/* stacks.h - launch stacks taken inside the process (xpcap --launch-stacks
 * inproc), as an alternative to the marker uprobe.
 *
 * At a launch-class API entry the callback takes the thread's registers and
 * copies the top of its own stack (the payload of the uprobe's dwarf mode),
 * or walks its frame pointers (fp mode), into an XP_REC_LAUNCH record of
 * run/launch-<pid>.xpr. Ingest reads that stream like cpu.xpr's launches.
 * No trap into the kernel and no copy_from_user: the cost of the uprobe
 * path that remains is a memcpy of the stack into a ring. A writer thread
 * compresses the ring into the file (zstd, through zstd_dl.c). On a thread
 * that runs Python the record is followed by the Python frames (pyframes.c),
 * and a launch that repeats an earlier one names its copy instead of
 * making its own (stackreuse.h).
 *
 *   int fd = open("run/launch-123.xpr", O_WRONLY | O_CREAT | O_EXCL, 0644);
 *   if (xpc_stacks_start(fd, 123, 8192) == 0)     // 0 bytes: fp walk
 *       xpc_stack_take(ts, correlation_id, cbid, kernel_name); // any thread
 *   xpc_stacks_finish();                          // at exit: all on disk, within 1 s
 *
 * Nothing here uses CUPTI, so tests link it into an ordinary program. */
#ifndef XPCUPTI_STACKS_H
#define XPCUPTI_STACKS_H

#include <stdint.h>
#include <sys/types.h>

struct xpc_stacks_stats {
	uint64_t taken;                 /* records the writer took from the ring */
	uint64_t lost;                  /* ring full: records dropped */
	uint64_t copy_dropped;          /* ring full for the copy: launch kept, stack bytes not */
	uint64_t no_copy;               /* sp outside the thread's known stack: ip only */
	uint64_t writer_cpu_ns;         /* CPU the writer thread used (compression), at finish */
	uint64_t py_stacks;             /* XP_REC_PYSTACK records written (pyframes.c) */
	uint64_t borrowed;              /* records with an earlier copy's frames (stackreuse.h) */
};

/* Takes fd (a new, empty launch-<pid>.xpr) and starts the writer thread;
 * looks for a Python interpreter first (XP_REC_PYINFO says what it found).
 * copy_bytes: 0 for the frame-pointer walk, else up to XP_USER_COPY_MAX.
 * 0, or -errno (the fd is closed; xpc_stack_take then does nothing). */
int xpc_stacks_start(int fd, pid_t pid, uint32_t copy_bytes);
/* Whether started and not finished: callers fall back to the marker. */
int xpc_stacks_on(void);
/* One launch record for the calling thread; symbol: the kernel's name on
 * launches (CUPTI's symbolName), else NULL. Never faults, never blocks: a
 * ring with no room for the stack copy gets the record without it (the
 * launch, its Python frames and autograd state are what joins it), one
 * with no room even for that drops the record; both are counted. */
void xpc_stack_take(uint64_t ts, uint64_t correlation_id, uint32_t cbid, const char *symbol);
/* Stops the writer after it wrote every record taken so far, writes the
 * losses, flushes and closes the file. Later takes do nothing. Waits for
 * the writer at most WRITER_JOIN_MS (stacks.c): -ETIMEDOUT when it did
 * not stop, left running with the file (its last records lost), else 0. */
int xpc_stacks_finish(void);
void xpc_stacks_stats(struct xpc_stacks_stats *out);

#endif
