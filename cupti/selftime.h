/* selftime.h - which launch-class calls the library times itself on: one in
 * XPC_SELF_TIME_EVERY on average, drawn at random per thread, so that the
 * estimate of our own cost per call does not alias with periodic work (the
 * full stack copy that stackreuse.c makes on every 64th use of a launch
 * site: a fixed stride of 64 timed mostly those copies in a loop of two
 * alternating launch lines).
 *   static __thread uint32_t draw;
 *   if (xpc_self_time_draw(&draw, tid)) ... time this call ...
 */
#ifndef XPC_SELFTIME_H
#define XPC_SELFTIME_H

#include <stdint.h>

#define XPC_SELF_TIME_EVERY 64
/* A timed call that took longer was preempted, or waited on the kernel
 * (a page fault, the GPU stream's write of a MiB): counted apart, not
 * averaged. Some such calls among the ~1000 a short run times had made
 * the mean several times the typical call (3.8 us a launch against
 * 0.5-0.9, issue 42; bench/launch-cost: calls take 0.4-1 us, a few in a
 * hundred up to 10 us, a preempted one milliseconds). */
#define XPC_SELF_TIME_CAP_NS 50000u

/* 1 for about one call in XPC_SELF_TIME_EVERY: xorshift32 on *state,
 * seeded from seed (a thread id) when *state is 0. */
static inline int xpc_self_time_draw(uint32_t *state, uint32_t seed)
{
	uint32_t x = *state;

	if (!x)
		x = seed * 2654435761u | 1u;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*state = x;
	return (x >> 8) % XPC_SELF_TIME_EVERY == 0;
}

#endif
