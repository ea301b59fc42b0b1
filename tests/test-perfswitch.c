/* test-perfswitch.c - PERF_RECORD_SWITCH records built by hand as the
 * kernel lays them out for the side-band events (header, then the
 * sample_id trailer pid, tid, time), paired into off-CPU intervals
 * (perfswitch.c), in the order a drain reads them: CPU by CPU, so that a
 * switch-in is often read before its switch-out. */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include "check-main.h"
#include "capture/perfswitch.h"

struct got {
	struct xp_switch w[16];
	unsigned n;
};

static void collect(void *ctx, const struct xp_switch *w)
{
	struct got *g = ctx;

	if (g->n < 16)
		g->w[g->n++] = *w;
}

/* One switch record of tid at ts: out (preempted or not) or in. */
static int feed(struct perfswitch *ps, uint32_t tid, uint64_t ts, int out, int preempt, uint32_t cpu)
{
	unsigned char rec[sizeof(struct perf_event_header) + 16];
	struct perf_event_header h = { .type = PERF_RECORD_SWITCH, .size = sizeof(rec),
				       .misc = (out ? PERF_RECORD_MISC_SWITCH_OUT : 0) |
					       (preempt ? PERF_RECORD_MISC_SWITCH_OUT_PREEMPT : 0) };
	uint32_t ids[2] = { 77, tid };

	memcpy(rec, &h, sizeof(h));
	memcpy(rec + sizeof(h), ids, 8);
	memcpy(rec + sizeof(h) + 8, &ts, 8);
	return perfswitch_take(ps, rec, sizeof(rec), cpu);
}

START_TEST(pairs_across_cpus)
{
	struct perfswitch *ps = perfswitch_new(100);
	struct got g = { 0 };

	/* thread 5: out on CPU 1 at 1000, in on CPU 0 at 5000; out on CPU 0 at
	 * 6000, in on CPU 1 at 9000. Read CPU 0's ring first, then CPU 1's. */
	ck_assert_int_eq(feed(ps, 5, 5000, 0, 0, 0), 1);
	ck_assert_int_eq(feed(ps, 5, 6000, 1, 1, 0), 1);
	ck_assert_int_eq(feed(ps, 5, 1000, 1, 0, 1), 1);
	ck_assert_int_eq(feed(ps, 5, 9000, 0, 0, 1), 1);
	/* thread 6: off CPU at the end of the pass, back in the next */
	ck_assert_int_eq(feed(ps, 6, 2000, 1, 0, 1), 1);
	/* thread 7: a switch-in read before its switch-out, which comes a pass later */
	ck_assert_int_eq(feed(ps, 7, 8000, 0, 0, 0), 1);
	/* thread 8: 50 ns off CPU, under the minimum */
	ck_assert_int_eq(feed(ps, 8, 3000, 1, 0, 0), 1);
	ck_assert_int_eq(feed(ps, 8, 3050, 0, 0, 0), 1);
	ck_assert_uint_eq(perfswitch_flush(ps, false, collect, &g), 2);
	ck_assert_uint_eq(g.w[0].tid, 5);
	ck_assert_uint_eq(g.w[0].ts, 1000);
	ck_assert_uint_eq(g.w[0].duration_ns, 4000);
	ck_assert_uint_eq(g.w[0].cpu, 1);
	ck_assert_uint_eq(g.w[0].prev_state, 1);
	ck_assert(g.w[0].stack.flags & XP_STACK_USER_ERR);
	ck_assert_uint_eq(g.w[0].stack.user_depth, 0);
	ck_assert_uint_eq(g.w[1].ts, 6000);
	ck_assert_uint_eq(g.w[1].duration_ns, 3000);
	ck_assert_uint_eq(g.w[1].prev_state, 0);       /* preempted: runnable */
	/* the next pass: 6's switch-in, 7's switch-out */
	ck_assert_int_eq(feed(ps, 6, 12000, 0, 0, 0), 1);
	ck_assert_int_eq(feed(ps, 7, 7000, 1, 0, 1), 1);
	ck_assert_uint_eq(perfswitch_flush(ps, false, collect, &g), 2);
	ck_assert_uint_eq(g.w[2].tid, 6);
	ck_assert_uint_eq(g.w[2].duration_ns, 10000);
	ck_assert_uint_eq(g.w[3].tid, 7);
	ck_assert_uint_eq(g.w[3].ts, 7000);
	ck_assert_uint_eq(g.w[3].duration_ns, 1000);
	ck_assert_uint_eq(perfswitch_unpaired(ps), 0);
	perfswitch_free(ps);
}
END_TEST

/* A flush before the first switch record (the drain's first pass, often
 * so under load): nothing handed on, and no qsort of a NULL array, which
 * UBSan stops (a fresh-clone quickstart run with two busy loops did). */
START_TEST(flush_before_any_record)
{
	struct perfswitch *ps = perfswitch_new(0);
	struct got g = { 0 };

	ck_assert_uint_eq(perfswitch_flush(ps, false, collect, &g), 0);
	ck_assert_uint_eq(perfswitch_flush(ps, true, collect, &g), 0);
	ck_assert_uint_eq(perfswitch_unpaired(ps), 0);
	ck_assert_int_eq(g.n, 0);
	perfswitch_free(ps);
}
END_TEST

START_TEST(unpaired_dropped)
{
	struct perfswitch *ps = perfswitch_new(0);
	struct got g = { 0 };

	/* a switch-in with no switch-out ever: kept one pass, then dropped */
	feed(ps, 9, 500, 0, 0, 0);
	ck_assert_uint_eq(perfswitch_flush(ps, false, collect, &g), 0);
	ck_assert_uint_eq(perfswitch_flush(ps, false, collect, &g), 0);
	ck_assert_uint_eq(perfswitch_unpaired(ps), 1);
	/* two switch-outs in a row (the switch-in between was lost): the first goes */
	feed(ps, 10, 1000, 1, 0, 0);
	feed(ps, 10, 2000, 1, 0, 0);
	feed(ps, 10, 2500, 0, 0, 0);
	ck_assert_uint_eq(perfswitch_flush(ps, false, collect, &g), 1);
	ck_assert_uint_eq(g.w[0].ts, 2000);
	ck_assert_uint_eq(perfswitch_unpaired(ps), 2);
	/* at the end, a thread still off CPU is dropped */
	feed(ps, 11, 3000, 1, 0, 0);
	ck_assert_uint_eq(perfswitch_flush(ps, true, collect, &g), 0);
	ck_assert_uint_eq(perfswitch_unpaired(ps), 3);
	perfswitch_free(ps);
}
END_TEST

START_TEST(other_and_short_records)
{
	struct perfswitch *ps = perfswitch_new(0);
	struct perf_event_header h = { .type = PERF_RECORD_COMM, .size = sizeof(h) };

	ck_assert_int_eq(perfswitch_take(ps, &h, sizeof(h), 0), 0);
	h.type = PERF_RECORD_SWITCH;
	ck_assert_int_eq(perfswitch_take(ps, &h, sizeof(h), 0), -EBADMSG);
	perfswitch_free(ps);
}
END_TEST

static Suite *perfswitch_suite(void)
{
	Suite *s = suite_create("perfswitch");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, pairs_across_cpus);
	tcase_add_test(tc, flush_before_any_record);
	tcase_add_test(tc, unpaired_dropped);
	tcase_add_test(tc, other_and_short_records);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(perfswitch_suite)
