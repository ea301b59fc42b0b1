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
 * One libdwfl session per process, modules reported as the walk reaches
 * them, so their CFI is parsed once per process and cached by libdw.
 */
#ifndef XP_UNWIND_H
#define XP_UNWIND_H

#include <stdint.h>

#include "mappings.h"
#include "runfmt.h"
#include "symbolize.h"

struct xp_unwinder;

struct xp_unwind_stats {
	uint64_t copies;            /* stacks offered with a copy */
	uint64_t unwound;           /* of which walked past the leaf */
	uint64_t frames;            /* frames found over all copies */
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

#endif
