/* idle_steps.h - a training loop's steps found from the Python stacks of
 * its launches, for `xpcorr report --by idle` on a process without step
 * ranges (view_idle.c). The launches of the thread that made most of them
 * (backward launches, which carry a borrowed forward stack, left out), in
 * the order of their calls: where two in a row have the same outer Python
 * frames and then one function at a lower line than before, that function
 * went back (a loop's next turn, or its next call from the same line). The
 * outermost such function whose return repeats is the loop; its first line
 * is the line it returns to. A step starts at every launch that comes back
 * to that line; the last one ends with the work its loop launched.
 *
 *   struct xp_loop_steps s;
 *   if (xp_loop_steps_find(walk, tl, &s) == 1)      // walk: xp_stackwalk_open's
 *           printf("%zu steps of the loop at %s\n", s.n, s.line);
 *   xp_loop_steps_free(&s);
 */
#ifndef XP_IDLE_STEPS_H
#define XP_IDLE_STEPS_H

#include <stddef.h>
#include <stdint.h>

#include "db/stackwalk.h"
#include "export/analysis/timeline.h"

struct xp_loop_steps {
	int64_t (*w)[2];            /* each step's [start, end) in ns, in order */
	size_t n;
	char line[256];             /* the loop's first line, "train.py:42 train" */
};

/* The steps of tl's process, its stacks read through walk: 1 (three or
 * more steps), 0 (no loop: s->n is 0) or -ENOMEM. xp_loop_steps_free
 * either way. */
int xp_loop_steps_find(struct xp_stackwalk *walk, const struct xp_tl *tl, struct xp_loop_steps *s);
void xp_loop_steps_free(struct xp_loop_steps *s);

#endif
