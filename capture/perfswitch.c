/* perfswitch.c - see perfswitch.h. PERF_RECORD_SWITCH is a header (misc
 * PERF_RECORD_MISC_SWITCH_OUT on the way out, with _OUT_PREEMPT when the
 * thread was preempted) and the sample_id trailer: pid, tid (TID), time
 * (TIME), as the side-band events ask for them. */
#include "capture/perfswitch.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"

struct half {
	uint64_t ts;
	uint32_t pid, tid, cpu;
	uint8_t out, preempt;
	uint8_t passes;             /* flushes it has waited through */
};

struct perfswitch {
	uint64_t min_ns;
	struct half *v;             /* this pass's halves, then those still waiting */
	size_t n, cap;
	uint64_t unpaired;
};

struct perfswitch *perfswitch_new(uint64_t min_ns)
{
	struct perfswitch *ps = calloc(1, sizeof(*ps));

	if (ps)
		ps->min_ns = min_ns;
	return ps;
}

int perfswitch_take(struct perfswitch *ps, const void *rec, size_t len, uint32_t cpu)
{
	const struct perf_event_header *h = rec;
	uint32_t ids[2];
	uint64_t ts;

	if (len < sizeof(*h) || h->type != PERF_RECORD_SWITCH)
		return 0;
	if (h->size > len || h->size < sizeof(*h) + sizeof(ids) + sizeof(ts))
		return -EBADMSG;
	memcpy(ids, (const char *)rec + sizeof(*h), sizeof(ids));
	memcpy(&ts, (const char *)rec + sizeof(*h) + sizeof(ids), sizeof(ts));
	if (xp_array__reserve((void **)&ps->v, &ps->cap, ps->n + 1, sizeof(*ps->v), 256))
		return -ENOMEM;
	ps->v[ps->n++] = (struct half){
		.ts = ts, .pid = ids[0], .tid = ids[1], .cpu = cpu,
		.out = (h->misc & PERF_RECORD_MISC_SWITCH_OUT) != 0,
		.preempt = (h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0,
	};
	return 1;
}

static int cmp_half(const void *pa, const void *pb)
{
	const struct half *a = pa, *b = pb;

	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return (int)a->out - (int)b->out;   /* in before out at one time */
}

static void hand_on(struct perfswitch *ps, const struct half *o, uint64_t in, perfswitch_fn fn,
		    void *ctx, size_t *n)
{
	struct xp_switch w = {
		.ts = o->ts, .duration_ns = in - o->ts, .pid = o->pid, .tid = o->tid, .cpu = o->cpu,
		/* a preempted thread was runnable; else it waited (the exact
		 * state is the kernel's, which perf does not say) */
		.prev_state = o->preempt ? 0 : 1,
		.stack = { .flags = XP_STACK_USER_ERR },
	};

	if (w.duration_ns < ps->min_ns)
		return;
	fn(ctx, &w);
	(*n)++;
}

size_t perfswitch_flush(struct perfswitch *ps, bool final, perfswitch_fn fn, void *ctx)
{
	size_t keep = 0, handed = 0;

	if (!ps->n)                 /* no halves yet: v may be NULL, qsort's is nonnull */
		return 0;
	qsort(ps->v, ps->n, sizeof(*ps->v), cmp_half);
	for (size_t i = 0; i < ps->n; i++) {
		struct half *h = &ps->v[i];
		const struct half *next = i + 1 < ps->n && ps->v[i + 1].tid == h->tid ? &ps->v[i + 1] : NULL;

		if (h->out && next && !next->out) {
			hand_on(ps, h, next->ts, fn, ctx, &handed);
			i++;
			continue;
		}
		/* the last switch-out of a thread still off CPU; a switch-in read
		 * before its switch-out (another CPU's ring, read later) waits
		 * one pass for it */
		if (!final && ((h->out && !next) || (!h->out && h->passes < 1))) {
			h->passes++;
			ps->v[keep++] = *h;
			continue;
		}
		ps->unpaired++;
	}
	ps->n = keep;
	return handed;
}

uint64_t perfswitch_unpaired(const struct perfswitch *ps)
{
	return ps->unpaired;
}

void perfswitch_free(struct perfswitch *ps)
{
	if (!ps)
		return;
	free(ps->v);
	free(ps);
}
