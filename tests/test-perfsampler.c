/* test-perfsampler.c - PERF_RECORD_SAMPLE records built by hand as the
 * kernel lays them out for perfsampler_attr's sample_type, converted to
 * the BPF sampler's records (perfsampler.c); and what perftrack.c adds
 * beside them: thread names, exec records. */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include "check-main.h"
#include "capture/perfsampler.h"
#include "capture/perftrack.h"

static uint64_t buf[2048];

/* header, pid/tid, time, callchain (nr, ips), then (dwarf) abi, bp, sp, ip,
 * size, data, dyn_size; returns bytes. */
static size_t build(const uint64_t *chain, unsigned nr, const uint64_t *regs,
		    uint64_t size, uint64_t dyn)
{
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE };
	uint32_t ids[2] = { 100, 101 };
	size_t w = 1;

	memcpy(&buf[w++], ids, 8);
	buf[w++] = 5555;
	buf[w++] = nr;
	for (unsigned i = 0; i < nr; i++)
		buf[w++] = chain[i];
	if (regs) {
		buf[w++] = regs[0] ? PERF_SAMPLE_REGS_ABI_64 : PERF_SAMPLE_REGS_ABI_NONE;
		for (int i = 0; regs[0] && i < 3; i++)
			buf[w++] = regs[i];
		buf[w++] = size;
		for (uint64_t i = 0; i < size / 8; i++)
			buf[w++] = 0xa0 + i;
		if (size)
			buf[w++] = dyn;
	}
	h.size = (uint16_t)(w * 8);
	memcpy(buf, &h, sizeof(h));
	return w * 8;
}

START_TEST(fp_sample)
{
	uint64_t chain[] = { PERF_CONTEXT_USER, 0x401000, 0x402000, 0x7f0000 };
	struct perf_event_attr a;
	struct perfsample ps;
	size_t n;

	perfsampler_attr(&a, 100, 0, false);
	ck_assert(a.exclude_kernel && a.exclude_callchain_kernel && a.inherit);
	ck_assert(!(a.sample_type & PERF_SAMPLE_STACK_USER));
	/* the side-band's sample_id trailer: TID|TIME only */
	ck_assert_uint_eq(a.sample_type & (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
					   PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
					   PERF_SAMPLE_IDENTIFIER), PERF_SAMPLE_TID | PERF_SAMPLE_TIME);
	n = build(chain, 4, NULL, 0, 0);
	ck_assert_int_eq(perfsample_convert(buf, n, &a, 3, &ps), 0);
	ck_assert_uint_eq(ps.rec.s.pid, 100);
	ck_assert_uint_eq(ps.rec.s.tid, 101);
	ck_assert_uint_eq(ps.rec.s.ts, 5555);
	ck_assert_uint_eq(ps.rec.s.cpu, 3);
	ck_assert_uint_eq(ps.rec.s.period_ns, 10000000);
	ck_assert_uint_eq(ps.rec.s.stack.kernel_depth, 0);
	ck_assert_uint_eq(ps.rec.s.stack.user_depth, 3);   /* the context marker dropped */
	ck_assert_uint_eq(ps.rec.ips[0], 0x401000);
	ck_assert_uint_eq(ps.rec.ips[2], 0x7f0000);
	ck_assert_uint_eq(ps.rec.s.stack.flags, 0);
	ck_assert_uint_eq(ps.rec_len, sizeof(ps.rec.s) + 3 * 8);
	ck_assert_ptr_null(ps.data);
	n = build(chain, 1, NULL, 0, 0);                 /* a marker and nothing else */
	ck_assert_int_eq(perfsample_convert(buf, n, &a, 0, &ps), 0);
	ck_assert_uint_eq(ps.rec.s.stack.flags, XP_STACK_USER_ERR);
}
END_TEST

START_TEST(deep_chain_truncated)
{
	static uint64_t chain[200];
	struct perf_event_attr a;
	struct perfsample ps;
	size_t n;

	for (unsigned i = 0; i < 200; i++)
		chain[i] = 0x1000 + i;
	perfsampler_attr(&a, 99, 0, true);
	ck_assert(!a.exclude_kernel && a.exclude_callchain_kernel);
	n = build(chain, 200, NULL, 0, 0);
	ck_assert_int_eq(perfsample_convert(buf, n, &a, 0, &ps), 0);
	ck_assert_uint_eq(ps.rec.s.stack.user_depth, XP_MAX_STACK_DEPTH);
	ck_assert_uint_eq(ps.rec.s.stack.flags, XP_STACK_USER_TRUNC);
}
END_TEST

START_TEST(dwarf_sample)
{
	uint64_t chain[] = { PERF_CONTEXT_USER, 0x401000 }, regs[3] = { 0xb0, 0x5000, 0x401000 };
	struct perf_event_attr a;
	struct perfsample ps;
	size_t n;

	perfsampler_attr(&a, 99, 64, false);
	ck_assert(a.sample_type & PERF_SAMPLE_STACK_USER);
	ck_assert_uint_eq(a.sample_stack_user, 64);
	n = build(chain, 2, regs, 64, 44);              /* 44 of 64 bytes readable */
	ck_assert_int_eq(perfsample_convert(buf, n, &a, 1, &ps), 0);
	ck_assert_uint_eq(ps.rec.s.stack.flags, XP_STACK_HAS_USER_COPY);
	ck_assert_uint_eq(ps.regs.bp, 0xb0);
	ck_assert_uint_eq(ps.regs.sp, 0x5000);
	ck_assert_uint_eq(ps.regs.ip, 0x401000);
	ck_assert_uint_eq(ps.regs.size, 40);             /* whole words only */
	ck_assert_uint_eq(*(const uint64_t *)ps.data, 0xa0);
	/* no user context (a kernel thread): no copy, no registers */
	regs[0] = 0;
	n = build(chain, 2, regs, 0, 0);
	ck_assert_int_eq(perfsample_convert(buf, n, &a, 1, &ps), 0);
	ck_assert_uint_eq(ps.rec.s.stack.flags, 0);
	ck_assert_ptr_null(ps.data);
}
END_TEST

START_TEST(malformed)
{
	uint64_t chain[] = { PERF_CONTEXT_USER, 0x401000 }, regs[3] = { 1, 2, 3 };
	struct perf_event_attr a;
	struct perfsample ps;
	size_t n;

	perfsampler_attr(&a, 99, 64, false);
	n = build(chain, 2, regs, 64, 64);
	for (size_t cut = 8; cut < n; cut += 8) {
		struct perf_event_header *h = (void *)buf;

		h->size = (uint16_t)cut;
		ck_assert_int_eq(perfsample_convert(buf, cut, &a, 0, &ps), -EBADMSG);
	}
	n = build(chain, 2, NULL, 0, 0);
	buf[3] = 1u << 30;                               /* nr beyond the record */
	ck_assert_int_eq(perfsample_convert(buf, n, &a, 0, &ps), -EBADMSG);
	ck_assert_int_eq(perfsample_convert(buf, 4, &a, 0, &ps), -EBADMSG);
}
END_TEST

static struct perfconv_rec comm(uint32_t pid, uint32_t tid, const char *name, bool exec,
				uint64_t ts)
{
	struct perfconv_rec r = { .type = XP_REC_COMM };

	r.u.comm = (struct xp_comm){ .ts = ts, .pid = pid, .tid = tid,
				     .flags = exec ? XP_COMM_EXEC : 0 };
	strncpy(r.u.comm.comm, name, XP_COMM_LEN);
	return r;
}

START_TEST(track_names_and_execs)
{
	struct perftrack *t = perftrack_new();
	struct perfconv_rec r, fork = { .type = XP_REC_FORK }, map = { .type = XP_REC_MMAP };
	struct xp_exec x;
	char name[XP_COMM_LEN];

	ck_assert_ptr_nonnull(t);
	perftrack_comm(t, 7, name);
	ck_assert_str_eq(name, "");
	r = comm(7, 7, "python3", true, 100);
	ck_assert(!perftrack_before(t, &r, &x));        /* pending until its mapping */
	perftrack_comm(t, 7, name);
	ck_assert_str_eq(name, "python3");
	fork.u.task = (struct xp_task){ .ts = 150, .pid = 7, .ppid = 7, .tid = 8, .ptid = 7 };
	ck_assert(!perftrack_before(t, &fork, &x));
	perftrack_comm(t, 8, name);
	ck_assert_str_eq(name, "python3");              /* a thread starts with its parent's name */
	r = comm(7, 8, "pt_autograd_0", false, 160);
	perftrack_before(t, &r, &x);
	perftrack_comm(t, 8, name);
	ck_assert_str_eq(name, "pt_autograd_0");
	map.u.mmap = (struct xp_mmap){ .ts = 120, .pid = 7 };
	map.path = "/usr/bin/python3.12";
	map.path_len = strlen(map.path);
	ck_assert(perftrack_before(t, &map, &x));       /* the exec, before its first mapping */
	ck_assert_uint_eq(x.ts, 100);
	ck_assert_uint_eq(x.pid, 7);
	ck_assert_uint_eq(x.tid, 7);
	ck_assert_uint_eq(x.path_len, map.path_len);
	ck_assert(!perftrack_before(t, &map, &x));      /* once */
	r = comm(9, 9, "sh", true, 200);
	ck_assert(!perftrack_before(t, &r, &x));
	ck_assert(perftrack_flush(t, &x));              /* never mapped: no path */
	ck_assert_uint_eq(x.pid, 9);
	ck_assert_uint_eq(x.path_len, 0);
	ck_assert(!perftrack_flush(t, &x));
	perftrack_free(t);
}
END_TEST

START_TEST(track_many_pending)
{
	struct perftrack *t = perftrack_new();
	struct perfconv_rec r;
	struct xp_exec x;
	unsigned now = 0, flushed = 0;

	/* more execs waiting than slots: the extra ones are written at once */
	for (uint32_t pid = 1; pid <= 100; pid++) {
		r = comm(pid, pid, "x", true, pid);
		now += perftrack_before(t, &r, &x);
	}
	while (perftrack_flush(t, &x))
		flushed++;
	ck_assert_uint_eq(now + flushed, 100);
	ck_assert_uint_gt(now, 0);
	perftrack_free(t);
}
END_TEST

static Suite *perfsampler_suite(void)
{
	Suite *s = suite_create("perfsampler");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, fp_sample);
	tcase_add_test(tc, deep_chain_truncated);
	tcase_add_test(tc, dwarf_sample);
	tcase_add_test(tc, malformed);
	tcase_add_test(tc, track_names_and_execs);
	tcase_add_test(tc, track_many_pending);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(perfsampler_suite)
