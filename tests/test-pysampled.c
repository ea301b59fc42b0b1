/* test-pysampled.c - which of xpcap's reads of a thread's Python chain
 * (XP_REC_PYSAMPLE) a CPU sample or off-CPU interval takes
 * (xp_pystore_sampled): the nearest within one period, none beyond it,
 * one between two reads of the same calls, the first inside an off-CPU
 * interval; the counts info prints; the reader's info apart from the
 * library's. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "ingest/pystacks.h"
#include "src/runfmt_py.h"

static struct xp_pystore *s;

static void setup(void)
{
	s = xp_pystore_new();
	ck_assert_ptr_nonnull(s);
}

static void teardown(void)
{
	xp_pystore_free(s);
}

/* A pysample of pid 7, tid 8 at ts: frames of codes c0 (innermost, at
 * offset off) and c1 (at 10). */
static void read_at(uint64_t ts, uint64_t c0, uint32_t off, uint64_t c1)
{
	struct {
		struct xp_record_header h;
		struct xp_pystack ps;
		struct xp_pyframe f[2];
	} r;

	memset(&r, 0, sizeof(r));
	r.h.type = XP_REC_PYSAMPLE;
	r.h.size = sizeof(r);
	r.ps.ts = ts;
	r.ps.pid = 7;
	r.ps.tid = 8;
	r.ps.nframes = 2;
	r.f[0].code_id = XP_PYCODE_ID_SAMPLER | c0;
	r.f[0].instr_offset = off;
	r.f[1].code_id = XP_PYCODE_ID_SAMPLER | c1;
	r.f[1].instr_offset = 10;
	ck_assert_int_eq(xp_pystore_record(s, 0, &r.h), 1);
}

/* The innermost frame's (offset) of what a sample at ts takes, or -1. */
static int take(uint64_t ts, uint64_t until, uint64_t window)
{
	struct xp_pystack_view v;
	int r = xp_pystore_sampled(s, 7, 8, ts, until, window, &v);

	ck_assert_int_ge(r, 0);
	if (!r)
		return -1;
	ck_assert_uint_eq(v.n, 2);
	ck_assert(v.sampled);
	return (int)v.frames[0].offset;
}

START_TEST(nearest_within_a_period)
{
	read_at(1000, 1, 2, 9);
	read_at(2000, 1, 4, 9);
	read_at(3000, 2, 6, 9);
	ck_assert_int_eq(take(1400, 0, 1000), 2);      /* nearer 1000 */
	ck_assert_int_eq(take(1600, 0, 1000), 4);      /* nearer 2000 */
	ck_assert_int_eq(take(3900, 0, 1000), 6);      /* after the last */
	ck_assert_int_eq(take(500, 0, 1000), 2);       /* before the first */
	ck_assert_int_eq(take(4500, 0, 1000), -1);     /* beyond one period */
	ck_assert_int_eq(xp_pystore_proc(s, 0)->samples, 5);
	ck_assert_int_eq(xp_pystore_proc(s, 0)->python_samples, 5);
	ck_assert_int_eq(xp_pystore_proc(s, 0)->sampled_with, 4);
}
END_TEST

START_TEST(reader_period_and_same_calls)
{
	/* reads every 10000 ns (a starved reader), samples every 1000 */
	read_at(10000, 1, 2, 9);
	read_at(20000, 1, 4, 9);       /* same calls, another line */
	read_at(30000, 2, 6, 9);       /* another function */
	read_at(90000, 3, 8, 9);       /* after a long gap */
	ck_assert_int_eq(take(14900, 0, 1000), 2);     /* the reader's period */
	ck_assert_int_eq(take(45000, 0, 1000), -1);    /* too far, calls differ */
	/* with the median gap 10000 beyond: between reads of the same calls */
	read_at(190000, 3, 12, 9);
	ck_assert_int_eq(take(130000, 0, 1000), 8);
}
END_TEST

START_TEST(off_cpu_takes_a_read_inside)
{
	read_at(1000, 1, 2, 9);        /* running */
	read_at(1900, 4, 14, 9);       /* asleep from 1800 */
	ck_assert_int_eq(take(1800, 0, 1000), 14);     /* a sample: the nearest */
	ck_assert_int_eq(take(1200, 5000, 1000), 14);  /* off CPU 1200..5000 */
	ck_assert_int_eq(take(1200, 0, 1000), 2);      /* a sample at 1200 */
	/* the interval is no CPU sample in the counts info prints */
	ck_assert_int_eq(xp_pystore_proc(s, 0)->samples, 2);
	ck_assert_int_eq(xp_pystore_proc(s, 0)->sampled_with, 2);
}
END_TEST

START_TEST(other_threads_and_processes)
{
	struct xp_pystack_view v;

	read_at(1000, 1, 2, 9);
	ck_assert_int_eq(xp_pystore_sampled(s, 7, 9, 1000, 0, 1000, &v), 0);
	ck_assert_int_eq(xp_pystore_sampled(s, 6, 8, 1000, 0, 1000, &v), 0);
	/* a thread that never ran Python counts as a sample, not a Python one */
	ck_assert_int_eq(xp_pystore_proc(s, 0)->samples, 1);
	ck_assert_int_eq(xp_pystore_proc(s, 0)->python_samples, 0);
}
END_TEST

START_TEST(reader_info_apart)
{
	struct {
		struct xp_record_header h;
		struct xp_pyinfo pi;
		char reason[8];
	} r;
	const struct xp_pyproc_stats *p;

	memset(&r, 0, sizeof(r));
	r.h.type = XP_REC_PYINFO;
	r.h.size = sizeof(r);
	r.pi.pid = 7;
	r.pi.py_hexversion = 0x030b02f0;
	r.pi.flags = XP_PYINFO_SAMPLER;
	r.pi.reason_len = 8;
	memcpy(r.reason, "mode off", 8);
	ck_assert_int_eq(xp_pystore_record(s, 0, &r.h), 1);
	p = xp_pystore_proc(s, 0);
	ck_assert(p->sampler_info && !p->sampler_supported && !p->has_info);
	ck_assert_str_eq(p->sampler_reason, "mode off");
	ck_assert(!xp_pyproc_has_launch_side(p));
}
END_TEST

static Suite *pysampled_suite(void)
{
	Suite *su = suite_create("pysampled");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, nearest_within_a_period);
	tcase_add_test(tc, reader_period_and_same_calls);
	tcase_add_test(tc, off_cpu_takes_a_read_inside);
	tcase_add_test(tc, other_threads_and_processes);
	tcase_add_test(tc, reader_info_apart);
	suite_add_tcase(su, tc);
	return su;
}

XP_CHECK_MAIN(pysampled_suite)
