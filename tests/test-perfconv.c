/* test-perfconv.c - perf side-band records built by hand, as the kernel
 * lays them out (sample_id_all with TID|TIME), into run-format records. */
#include <errno.h>
#include <linux/perf_event.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "check-main.h"
#include "capture/perfconv.h"

static unsigned char buf[512];

/* header + body + sample_id trailer (pid, tid, time); returns the size. */
static size_t build(uint32_t type, uint16_t misc, const void *body, size_t len, uint64_t time)
{
	struct perf_event_header h = { .type = type, .misc = misc };
	uint32_t ids[2] = { 11, 12 };
	size_t n = sizeof(h);

	memcpy(buf + n, body, len);
	n += (len + 7) & ~(size_t)7;
	memcpy(buf + n, ids, sizeof(ids));
	memcpy(buf + n + 8, &time, 8);
	n += 16;
	h.size = (uint16_t)n;
	memcpy(buf, &h, sizeof(h));
	return n;
}

struct mmap2_body {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint8_t build_id_size, r1;
	uint16_t r2;
	uint8_t build_id[20];
	uint32_t prot, flags;
	char filename[32];
};

START_TEST(mmap2_with_build_id)
{
	struct mmap2_body b = { .pid = 5, .tid = 6, .addr = 0x400000, .len = 0x1000,
				.pgoff = 0x2000, .build_id_size = 20, .prot = PROT_READ | PROT_EXEC };
	struct perfconv_rec r;
	size_t n;

	memset(b.build_id, 0xab, 20);
	strcpy(b.filename, "/usr/lib/libx.so");
	n = build(PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID, &b, sizeof(b), 777);
	ck_assert_int_eq(perfconv_convert(buf, n, &r), 0);
	ck_assert_uint_eq(r.type, XP_REC_MMAP);
	ck_assert_uint_eq(r.fixed_len, sizeof(struct xp_mmap));
	ck_assert_uint_eq(r.u.mmap.ts, 777);
	ck_assert_uint_eq(r.u.mmap.pid, 5);
	ck_assert_uint_eq(r.u.mmap.addr, 0x400000);
	ck_assert_uint_eq(r.u.mmap.pgoff, 0x2000);
	ck_assert_uint_eq(r.u.mmap.flags, XP_MMAP_HAS_BUILD_ID);
	ck_assert_uint_eq(r.u.mmap.build_id_size, 20);
	ck_assert_uint_eq(r.u.mmap.build_id[19], 0xab);
	ck_assert_uint_eq(r.path_len, strlen("/usr/lib/libx.so"));
	ck_assert_uint_eq(r.u.mmap.path_len, r.path_len);
	ck_assert(memcmp(r.path, "/usr/lib/libx.so", r.path_len) == 0);
	ck_assert(!r.needs_build_id);
}
END_TEST

START_TEST(mmap2_without_build_id_and_data)
{
	struct mmap2_body b = { .pid = 5, .tid = 5, .prot = PROT_READ | PROT_EXEC };
	struct perfconv_rec r;
	size_t n;

	strcpy(b.filename, "/bin/x");
	n = build(PERF_RECORD_MMAP2, 0, &b, sizeof(b), 1);
	ck_assert_int_eq(perfconv_convert(buf, n, &r), 0);
	ck_assert_uint_eq(r.type, XP_REC_MMAP);
	ck_assert_uint_eq(r.u.mmap.flags, 0);
	ck_assert(r.needs_build_id);
	strcpy(b.filename, "[vdso]");
	n = build(PERF_RECORD_MMAP2, 0, &b, sizeof(b), 1);
	ck_assert_int_eq(perfconv_convert(buf, n, &r), 0);
	ck_assert(!r.needs_build_id);
	b.prot = PROT_READ | PROT_WRITE;    /* data: not kept */
	n = build(PERF_RECORD_MMAP2, 0, &b, sizeof(b), 1);
	ck_assert_int_eq(perfconv_convert(buf, n, &r), 0);
	ck_assert_uint_eq(r.type, 0);
}
END_TEST

START_TEST(task_comm_lost)
{
	uint32_t task[6] = { 10, 9, 11, 9, 0, 0 };
	uint64_t t = 4242;
	struct { uint32_t pid, tid; char comm[16]; } c = { 10, 11, "worker" };
	uint64_t lost[2] = { 1, 17 };
	struct perfconv_rec r;
	size_t n;

	memcpy(&task[4], &t, 8);
	n = build(PERF_RECORD_FORK, 0, task, sizeof(task), 9999);
	ck_assert_int_eq(perfconv_convert(buf, n, &r), 0);
	ck_assert_uint_eq(r.type, XP_REC_FORK);
	ck_assert_uint_eq(r.u.task.ts, 4242);   /* the record's own time */
	ck_assert_uint_eq(r.u.task.pid, 10);
	ck_assert_uint_eq(r.u.task.ppid, 9);
	ck_assert_uint_eq(r.u.task.tid, 11);
	n = build(PERF_RECORD_EXIT, 0, task, sizeof(task), 9999);
	ck_assert_int_eq(perfconv_convert(buf, n, &r), 0);
	ck_assert_uint_eq(r.type, XP_REC_EXIT);

	n = build(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, &c, sizeof(c), 55);
	ck_assert_int_eq(perfconv_convert(buf, n, &r), 0);
	ck_assert_uint_eq(r.type, XP_REC_COMM);
	ck_assert_uint_eq(r.u.comm.ts, 55);
	ck_assert_uint_eq(r.u.comm.flags, XP_COMM_EXEC);
	ck_assert_str_eq(r.u.comm.comm, "worker");
	n = build(PERF_RECORD_COMM, 0, &c, sizeof(c), 55);
	ck_assert_int_eq(perfconv_convert(buf, n, &r), 0);
	ck_assert_uint_eq(r.u.comm.flags, 0);

	n = build(PERF_RECORD_LOST, 0, lost, sizeof(lost), 66);
	ck_assert_int_eq(perfconv_convert(buf, n, &r), 0);
	ck_assert_uint_eq(r.type, XP_REC_LOST);
	ck_assert_uint_eq(r.u.lost.count, 17);
	ck_assert_uint_eq(r.u.lost.reason, XP_LOST_PERF_LOST);
	ck_assert_uint_eq(r.u.lost.ts, 66);
}
END_TEST

START_TEST(malformed)
{
	struct perf_event_header h = { .type = PERF_RECORD_MMAP2, .size = 16 };
	struct perfconv_rec r;

	memset(buf, 0, sizeof(buf));
	memcpy(buf, &h, sizeof(h));
	ck_assert_int_eq(perfconv_convert(buf, 16, &r), -EBADMSG);   /* too short for mmap2 */
	h.size = 100;
	memcpy(buf, &h, sizeof(h));
	ck_assert_int_eq(perfconv_convert(buf, 50, &r), -EBADMSG);   /* claims more than given */
	h.type = PERF_RECORD_FORK;
	h.size = 12;
	memcpy(buf, &h, sizeof(h));
	ck_assert_int_eq(perfconv_convert(buf, 12, &r), -EBADMSG);
	h.type = PERF_RECORD_SAMPLE;    /* not side-band: ignored */
	h.size = 8;
	memcpy(buf, &h, sizeof(h));
	ck_assert_int_eq(perfconv_convert(buf, 8, &r), 0);
	ck_assert_uint_eq(r.type, 0);
}
END_TEST

static Suite *perfconv_suite(void)
{
	Suite *s = suite_create("perfconv");
	TCase *tc = tcase_create("convert");

	tcase_add_test(tc, mmap2_with_build_id);
	tcase_add_test(tc, mmap2_without_build_id_and_data);
	tcase_add_test(tc, task_comm_lost);
	tcase_add_test(tc, malformed);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(perfconv_suite)
