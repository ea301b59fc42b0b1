/* unwind.h - offline unwinding of the user stack copies that the capture's
 * `--call-graph dwarf` mode records (registers + the top of the stack), the
 * way perf's libdw unwinder does it: elfutils libdwfl walks the copy through
 * each module's .eh_frame / .debug_frame, and through frame pointers where
 * code has no CFI (JIT trampolines such as CPython's perf trampolines).
 * Memory reads come only from the copied bytes; CFI comes from the files
 * the symbolizer verified against their recorded build ids.
 *
 *   struct xp_unwinder *uw = xp_unwinder_new(maps, sym);
 *   uint64_t ips[XP_MAX_STACK_DEPTH];
 *   int n = xp_unwind(uw, pid, ts, &regs, stack_bytes, ips, XP_MAX_STACK_DEPTH);
 *   // n > 0: ips[0] = regs.ip, then return addresses, outermost last
 *   xp_unwinder_free(uw);
 *
 * One libdwfl session per address space (a child forked without mappings
 * of its own shares its parent's), modules reported as the walk reaches
 * them, so their CFI is parsed once per process and cached by libdw. The
 * sessions are bounded (count, and modules by RLIMIT_NOFILE), least
 * recently used closed first, and a process's closed at its exit:
 *
 *   xp_unwinder_exited(uw, pid);    // its exit record
 */
#ifndef XP_UNWIND_H
#define XP_UNWIND_H

#include <stdint.h>

#include "ingest/mappings.h"
#include "src/runfmt.h"
#include "ingest/symbolize.h"

struct xp_unwinder;

struct xp_unwind_stats {
	uint64_t copies;            /* stacks offered with a copy */
	uint64_t unwound;           /* of which walked past the leaf */
	uint64_t frames;            /* frames found over all copies */
	/* copies not walked, or not to their end, and why (each copy once): */
	uint64_t no_fd;             /* no file descriptor left for a session or a module
				       (EMFILE: raise ulimit -n) */
	uint64_t not_walked;        /* libdwfl could not start (out of memory, ...) */
	uint64_t moved;             /* a module at pc moved under the session twice, or
				       the process had nothing mapped where the session
				       had a module: stopped there */
	uint64_t sessions_opened, sessions_closed;
};

/* NULL on out of memory. maps and sym stay the caller's and must outlive uw. */
struct xp_unwinder *xp_unwinder_new(const struct xp_mappings *maps,
				    struct xp_symbolizer *sym);
void xp_unwinder_free(struct xp_unwinder *uw);
/* Walks the copy of pid's stack taken at ts: ips[0] is regs->ip, the rest
 * return addresses as a frame-pointer walk would give them. Stops at max,
 * at the end of the copy, or where no rule applies. Returns the number of
 * IPs (>= 1), or -EINVAL for a copy that does not fit its registers. */
int xp_unwind(struct xp_unwinder *uw, uint32_t pid, uint64_t ts,
	      const struct xp_user_regs_copy *regs, const uint8_t *stack,
	      uint64_t *ips, unsigned max);
const struct xp_unwind_stats *xp_unwinder_stats(const struct xp_unwinder *uw);
/* pid exited (its exit record): its session, if it has one, is closed. */
void xp_unwinder_exited(struct xp_unwinder *uw, uint32_t pid);

#endif
