/* test-gpuingest.c - the GPU loader and the database correlation against
 * the synthetic ground truth of gpu-testdb.c, and the loader against bad
 * input (truncated, short records, undefined strings, future versions). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-main.h"
#include "correlate/db_join.h"
#include "gpu-testdb.h"
#include "src/runfile.h"
#include "src/runfmt_gpu.h"

static char dir[] = "/tmp/xp-gpuingest-XXXXXX";
static sqlite3 *db;
static struct testdb_sink sink;

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	db = testdb_open(":memory:");
	ck_assert_ptr_nonnull(db);
	ck_assert_int_eq(testdb_sink_init(&sink, db), 0);
}

static void teardown(void)
{
	char cmd[128];

	testdb_sink_fini(&sink);
	sqlite3_close(db);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(dir, "/tmp/xp-gpuingest-XXXXXX");
}

static int64_t q1(const char *sql)
{
	sqlite3_stmt *s;
	int64_t v = -999;

	ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK, "%s: %s", sql,
		      sqlite3_errmsg(db));
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

static const char *qs(const char *sql)
{
	static char buf[256];
	sqlite3_stmt *s;

	buf[0] = '\0';
	ck_assert_msg(sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK, "%s: %s", sql,
		      sqlite3_errmsg(db));
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
		snprintf(buf, sizeof(buf), "%s", (const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	return buf;
}

START_TEST(short_names)
{
	char out[64];

	xp_short_name("gemm_k1(float*, float*, int)", out, sizeof(out));
	ck_assert_str_eq(out, "gemm_k1");
	xp_short_name("void at::native::reduce<float>(float*, int)", out, sizeof(out));
	ck_assert_str_eq(out, "reduce");
	xp_short_name("void flash::(anonymous namespace)::fwd_impl<128>(float const*, float*)",
		      out, sizeof(out));
	ck_assert_str_eq(out, "fwd_impl");
	xp_short_name("softmax_kernel", out, sizeof(out));
	ck_assert_str_eq(out, "softmax_kernel");
	xp_short_name("void ns::k<std::pair<int, int> >(ns::S<(char)1>)", out, sizeof(out));
	ck_assert_str_eq(out, "k");
	xp_short_name("", out, sizeof(out));
	ck_assert_str_eq(out, "");
	xp_short_name("<<<", out, sizeof(out));
	ck_assert_str_eq(out, "<<<");
}
END_TEST

START_TEST(truth_loads)
{
	ck_assert_int_eq(truth_build(db, &sink, dir), 0);
	ck_assert_int_eq(q1("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 18);
	ck_assert_int_eq(q1("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY"), 1);
	ck_assert_int_eq(q1("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME"), 15);
	ck_assert_int_eq(q1("SELECT count(*) FROM xp_launches"), 13);
	ck_assert_int_eq(q1("SELECT count(*) FROM xp_launches WHERE stack_id IS NULL"), 0);
	ck_assert_int_eq(q1("SELECT DISTINCT globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL"), 100ll << 24);
	ck_assert_int_eq(q1("SELECT globalTid FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId = 24"),
			 100ll << 24 | 102);
	ck_assert_str_eq(qs("SELECT d.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds d"
			    " ON d.id = k.demangledName WHERE correlationId = 1"),
			 "gemm_k1(float*, float*, int)");
	ck_assert_str_eq(qs("SELECT d.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds d"
			    " ON d.id = k.mangledName WHERE correlationId = 1"), "_Z7gemm_k1PfS_i");
	ck_assert_str_eq(qs("SELECT d.value FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds d"
			    " ON d.id = k.shortName WHERE correlationId = 23"), "fwd_impl");
	ck_assert_str_eq(qs("SELECT d.value FROM CUPTI_ACTIVITY_KIND_RUNTIME k JOIN StringIds d"
			    " ON d.id = k.nameId WHERE correlationId = 20"), "cudaGraphLaunch");
	ck_assert_int_eq(q1("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphId = 1"), 4);
	ck_assert_int_eq(q1("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE graphId IS NULL"), 14);
	ck_assert_int_eq(q1("SELECT end - start FROM NVTX_EVENTS WHERE rangeId = 1"), 60000000);
	ck_assert_str_eq(qs("SELECT name || ' ' || uuid FROM TARGET_INFO_GPU"),
			 "NVIDIA H100 80GB HBM3 deadbeef000000000000000000000000");
	ck_assert_int_eq(q1("SELECT count FROM xp_losses"), 3);
	ck_assert_int_eq(q1("SELECT pid FROM xp_gpu_processes"), 100);
	ck_assert_str_eq(qs("SELECT text FROM xp_gpu_status"), "started");
}
END_TEST

START_TEST(truth_correlates)
{
	struct xc_summary s;

	ck_assert_int_eq(truth_build(db, &sink, dir), 0);
	ck_assert_int_eq(xc_correlate_db(db, &s), 0);
	ck_assert_uint_eq(s.gpu_rows, 19);
	ck_assert_uint_eq(s.rows_exact, 15);
	ck_assert_uint_eq(s.rows_inferred, 1);
	ck_assert_uint_eq(s.rows_none, 3);
	ck_assert_int_eq(s.gpu_ns, 160100);
	ck_assert_int_eq(s.ns_exact, 96000);
	ck_assert_int_eq(s.ns_inferred, 40000);
	ck_assert_int_eq(s.ns_none, 24100);
	ck_assert_uint_eq(s.no_api, 1);
	ck_assert_uint_eq(s.reasons[XC_OK], 12);
	ck_assert_uint_eq(s.reasons[XC_LAUNCH_WRONG_TID], 1);
	ck_assert_uint_eq(s.reasons[XC_LAUNCH_NO_API], 0);
	ck_assert_uint_eq(s.reasons[XC_API_NO_LAUNCH], 1);
	ck_assert_uint_eq(s.reasons[XC_API_NO_EVIDENCE], 2);
	ck_assert_uint_eq(s.samples_in_api, 2);
	ck_assert_uint_eq(s.skew_n, 17);
	ck_assert_int_eq(s.skew_min_ns, 2000);
	ck_assert_int_eq(s.skew_median_ns, 2000);
	ck_assert_uint_eq(s.skew_negative, 0);

	/* the rows say the same */
	ck_assert_int_eq(q1("SELECT count(*) FROM xp_attribution"), 19);
	ck_assert_int_eq(q1("SELECT count(*) FROM xp_attribution WHERE how = 'exact'"), 15);
	ck_assert_int_eq(q1("SELECT count(*) FROM xp_correlation_counts"), XC_REASON_COUNT + 3);
	ck_assert_int_eq(q1("SELECT count FROM xp_correlation_counts"
			    " WHERE reason = 'launch from another thread than the call'"), 1);
	ck_assert_int_eq(q1("SELECT count FROM xp_correlation_counts WHERE reason = 'no API record'"), 1);
	/* the 4 graph nodes share the graph launch's stack: main > graph_replay */
	ck_assert_int_eq(q1("SELECT count(DISTINCT a.stack_id) FROM xp_attribution a"
			    " JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.rowid = a.gpu_rowid"
			    " WHERE a.gpu_table = 'KERNEL' AND k.graphId = 1 AND a.how = 'exact'"), 1);
	ck_assert_str_eq(qs("SELECT v.value FROM xp_attribution a"
			    " JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.rowid = a.gpu_rowid"
			    " JOIN xp_stacks n ON n.id = a.stack_id JOIN xp_stacks p ON p.id = n.parent"
			    " JOIN xp_frames f ON f.id = p.frame JOIN StringIds v ON v.id = f.symbol"
			    " WHERE a.gpu_table = 'KERNEL' AND k.graphId = 1"), "graph_replay");
	/* lost launch record: inferred from the sample inside the call (site B) */
	ck_assert_str_eq(qs("SELECT a.how || '|' || a.reason || '|' || v.value FROM xp_attribution a"
			    " JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.rowid = a.gpu_rowid"
			    " JOIN xp_stacks n ON n.id = a.stack_id JOIN xp_frames f ON f.id = n.frame"
			    " JOIN StringIds v ON v.id = f.symbol"
			    " WHERE a.gpu_table = 'KERNEL' AND k.correlationId = 22"),
			 "inferred|call without launch record (inferred)|launch_b");
	ck_assert_str_eq(qs("SELECT a.how || '|' || a.reason || '|' || ifnull(a.stack_id, 'NULL')"
			    " FROM xp_attribution a JOIN CUPTI_ACTIVITY_KIND_KERNEL k"
			    " ON k.rowid = a.gpu_rowid WHERE a.gpu_table = 'KERNEL' AND k.correlationId = 23"),
			 "none|call without any CPU evidence|NULL");
	ck_assert_str_eq(qs("SELECT a.how || '|' || a.reason || '|' || ifnull(a.api_rowid, 'NULL')"
			    " FROM xp_attribution a JOIN CUPTI_ACTIVITY_KIND_KERNEL k"
			    " ON k.rowid = a.gpu_rowid WHERE a.gpu_table = 'KERNEL' AND k.correlationId = 99"),
			 "none|no API record|NULL");
	ck_assert_str_eq(qs("SELECT how FROM xp_attribution WHERE gpu_table = 'MEMCPY'"), "exact");
	ck_assert_int_eq(q1("SELECT count(*) FROM xp_sample_api"), 2);
	ck_assert_int_eq(q1("SELECT value FROM META_DATA_EXPORT WHERE name = 'xp_clock_skew_min_ns'"), 2000);

	/* a second run replaces the first */
	ck_assert_int_eq(xc_correlate_db(db, &s), 0);
	ck_assert_int_eq(q1("SELECT count(*) FROM xp_attribution"), 19);
	ck_assert_int_eq(q1("SELECT count(*) FROM xp_sample_api"), 2);
}
END_TEST

/* ---- bad input: streams written byte by byte ---- */

struct buf {
	unsigned char b[4096];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	ck_assert_uint_le(b->n + n, sizeof(b->b));
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void header(struct buf *b, uint32_t version, uint32_t stream)
{
	struct xp_file_header h = { .version = version, .header_size = sizeof(h),
				    .stream = stream, .clock = XP_CLOCK_MONOTONIC, .pid = 100 };

	memcpy(h.magic, XP_MAGIC, 8);
	put(b, &h, sizeof(h));
}

static void record(struct buf *b, uint32_t type, const void *p, size_t n, uint32_t size)
{
	struct xp_record_header h = { .type = type, .size = size ? size : XP_ALIGN8(sizeof(h) + n) };
	static const char zero[8];

	put(b, &h, sizeof(h));
	put(b, p, n);
	put(b, zero, XP_ALIGN8(n) - n);
}

static const char *write_buf(const struct buf *b, size_t len)
{
	static char path[600];
	int fd;

	snprintf(path, sizeof(path), "%s/gpu-100.xpr", dir);
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, b->b, len), (ssize_t)len);
	close(fd);
	return path;
}

static struct xp_gpu_kernel kern(uint64_t corr, uint32_t name)
{
	return (struct xp_gpu_kernel){ .start = 10, .end = 20, .correlation_id = corr, .name = name };
}

static void string_rec(struct buf *b, uint32_t id, const char *s)
{
	unsigned char tmp[64];
	struct xp_gpu_string g = { .id = id, .len = (uint32_t)strlen(s) };

	memcpy(tmp, &g, sizeof(g));
	memcpy(tmp + sizeof(g), s, g.len);
	record(b, XP_REC_GPU_STRING, tmp, sizeof(g) + g.len, 0);
}

START_TEST(bad_truncated_keeps_earlier_rows)
{
	struct buf b = { .n = 0 };
	struct xp_gpu_kernel k = kern(1, 1);
	struct xp_gpu_load_stats st;
	char err[256];
	const char *path;

	header(&b, XP_FORMAT_VERSION, XP_STREAM_GPU);
	string_rec(&b, 1, "_Z1kv");
	record(&b, XP_REC_GPU_KERNEL, &k, sizeof(k), 0);
	record(&b, XP_REC_GPU_KERNEL, &k, sizeof(k), 0);
	path = write_buf(&b, b.n - 20);
	ck_assert_int_eq(xp_gpu_load_stream(db, path, &testdb_ops, &sink, &st, err, sizeof(err)),
			 -ENODATA);
	ck_assert_msg(strstr(err, "gpu-100.xpr at offset ") != NULL, "%s", err);
	ck_assert_int_eq(q1("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 1);
	ck_assert_str_eq(qs("SELECT value FROM StringIds s JOIN CUPTI_ACTIVITY_KIND_KERNEL k"
			    " ON k.demangledName = s.id"), "k()");
}
END_TEST

START_TEST(bad_short_record)
{
	struct buf b = { .n = 0 };
	struct xp_gpu_kernel k = kern(1, 0);
	struct xp_gpu_load_stats st;
	char err[256], want[128];

	header(&b, XP_FORMAT_VERSION, XP_STREAM_GPU);
	record(&b, XP_REC_GPU_KERNEL, &k, sizeof(k), 0);
	record(&b, XP_REC_GPU_KERNEL, &k, 16, 0);       /* a kernel of 16 bytes */
	ck_assert_int_eq(xp_gpu_load_stream(db, write_buf(&b, b.n), &testdb_ops, &sink, &st, err,
					    sizeof(err)), -EBADMSG);
	snprintf(want, sizeof(want), "gpu-100.xpr at offset %zu: record shorter than its type",
		 sizeof(struct xp_file_header) + 8 + sizeof(k));
	ck_assert_msg(strstr(err, want) != NULL, "%s", err);
	ck_assert_int_eq(q1("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL"), 1);
}
END_TEST

START_TEST(bad_string_len)
{
	struct buf b = { .n = 0 };
	struct xp_gpu_string g = { .id = 1, .len = 1000 };
	struct xp_gpu_load_stats st;
	char err[256];

	header(&b, XP_FORMAT_VERSION, XP_STREAM_GPU);
	record(&b, XP_REC_GPU_STRING, &g, sizeof(g), 0);
	ck_assert_int_eq(xp_gpu_load_stream(db, write_buf(&b, b.n), &testdb_ops, &sink, &st, err,
					    sizeof(err)), -EBADMSG);
	ck_assert_msg(strstr(err, "text longer than its record") != NULL, "%s", err);
}
END_TEST

START_TEST(undefined_string_is_unknown)
{
	struct buf b = { .n = 0 };
	struct xp_gpu_kernel k = kern(1, 42);
	struct xp_gpu_api a = { .start = 1, .end = 2, .correlation_id = 1, .pid = 100, .tid = 100,
				.name = 43 };
	struct xp_gpu_load_stats st;
	char err[256];

	header(&b, XP_FORMAT_VERSION, XP_STREAM_GPU);
	record(&b, XP_REC_GPU_KERNEL, &k, sizeof(k), 0);
	record(&b, XP_REC_GPU_API, &a, sizeof(a), 0);
	record(&b, 77, &a, 8, 0);                       /* an unknown type: skipped */
	ck_assert_int_eq(xp_gpu_load_stream(db, write_buf(&b, b.n), &testdb_ops, &sink, &st, err,
					    sizeof(err)), 0);
	ck_assert_uint_eq(st.unknown_strings, 2);
	ck_assert_uint_eq(st.skipped, 1);
	ck_assert_str_eq(qs("SELECT value FROM StringIds s JOIN CUPTI_ACTIVITY_KIND_KERNEL k"
			    " ON k.shortName = s.id"), "[unknown]");
}
END_TEST

/* a copy between two GPUs keeps both ends; an ordinary copy has none */
START_TEST(peer_copy_names_both_devices)
{
	struct buf b = { .n = 0 };
	struct xp_gpu_memcpy mc = { .start = 10, .end = 20, .correlation_id = 1, .bytes = 64,
				    .copy_kind = 1 };
	struct xp_gpu_memcpy_peer pc = { .copy = { .start = 30, .end = 50, .correlation_id = 2,
						   .bytes = 4096, .device = 1, .copy_kind = 10 },
					 .src_device = 1, .src_context = 5, .dst_device = 0,
					 .dst_context = 4 };
	struct xp_gpu_load_stats st;
	char err[256];

	header(&b, XP_FORMAT_VERSION, XP_STREAM_GPU);
	record(&b, XP_REC_GPU_MEMCPY, &mc, sizeof(mc), 0);
	record(&b, XP_REC_GPU_MEMCPY_PEER, &pc, sizeof(pc), 0);
	ck_assert_int_eq(xp_gpu_load_stream(db, write_buf(&b, b.n), &testdb_ops, &sink, &st, err,
					    sizeof(err)), 0);
	ck_assert_uint_eq(st.memcpys, 2);
	ck_assert_str_eq(qs("SELECT group_concat(deviceId || ':' || srcDeviceId || '/' || srcContextId"
			    " || '->' || dstDeviceId || '/' || dstContextId || ':' || bytes || ':' ||"
			    " copyKind) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE srcDeviceId IS NOT NULL"),
			 "1:1/5->0/4:4096:10");
	ck_assert_int_eq(q1("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE correlationId = 1"
			    " AND srcDeviceId IS NULL AND dstDeviceId IS NULL"), 1);
}
END_TEST

START_TEST(bad_future_version_and_wrong_stream)
{
	struct buf b = { .n = 0 };
	struct xp_gpu_load_stats st;
	char err[256];

	header(&b, XP_FORMAT_VERSION + 1, XP_STREAM_GPU);
	ck_assert_int_eq(xp_gpu_load_stream(db, write_buf(&b, b.n), &testdb_ops, &sink, &st, err,
					    sizeof(err)), -EPROTO);
	ck_assert_msg(strstr(err, "newer") != NULL, "%s", err);
	b.n = 0;
	header(&b, XP_FORMAT_VERSION, XP_STREAM_CPU);
	ck_assert_int_eq(xp_gpu_load_stream(db, write_buf(&b, b.n), &testdb_ops, &sink, &st, err,
					    sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "not a GPU stream") != NULL, "%s", err);
	ck_assert_int_eq(xp_gpu_load_stream(db, "/nonexistent/gpu-1.xpr", &testdb_ops, &sink, &st,
					    err, sizeof(err)), -ENOENT);
}
END_TEST

START_TEST(bad_launch_record)
{
	struct {
		struct xp_record_header h;
		struct xp_launch l;
	} r = { .h = { .type = XP_REC_LAUNCH, .size = sizeof(r) },
		.l = { .ts = 1, .pid = 1, .tid = 1, .stack = { .user_depth = 5 } } };

	struct xp_launch_writer *w;

	ck_assert_int_eq(xp_launch_writer_open(&w, db, &testdb_ops, &sink), 0);
	/* claims 5 user IPs that are not there */
	ck_assert_int_eq(xp_launch_writer_add(w, &r.h), -EBADMSG);
	r.l.stack.user_depth = 0;
	ck_assert_int_eq(xp_launch_writer_add(w, &r.h), 0);
	/* no frame: stack_id NULL, as ingest stores it (db/launch.h) */
	ck_assert_int_eq(q1("SELECT count(*) FROM xp_launches WHERE stack_id IS NULL"), 1);
	r.h.type = XP_REC_SAMPLE;
	ck_assert_int_eq(xp_launch_writer_add(w, &r.h), -EBADMSG);
	xp_launch_writer_close(w);
}
END_TEST

START_TEST(calibrated_clock)
{
	struct buf b = { .n = 0 };
	struct xp_gpu_process p = { .pid = 100, .ns_pid = 100, .ns_depth = 1,
				    .clock_method = XP_GPU_CLOCK_CALIBRATED };
	/* offset 905 at CUPTI time 100, 1005 at CUPTI time 1000 */
	struct xp_gpu_clock c0 = { .mono_before = 1000, .cupti_ts = 100, .mono_after = 1010 };
	struct xp_gpu_clock c1 = { .mono_before = 2000, .cupti_ts = 1000, .mono_after = 2010,
				   .when = 1 };
	struct xp_gpu_kernel k = { .start = 550, .end = 1000, .correlation_id = 1 };
	struct xp_gpu_api act = { .start = 100, .end = 200, .correlation_id = 1, .pid = 100,
				  .tid = 100, .flags = XP_GPU_API_FROM_ACTIVITY };
	struct xp_gpu_api cb = { .start = 100, .end = 200, .correlation_id = 2, .pid = 100,
				 .tid = 100 };
	struct xp_gpu_load_stats st;
	char err[256];

	header(&b, XP_FORMAT_VERSION, XP_STREAM_GPU);
	record(&b, XP_REC_GPU_PROCESS, &p, sizeof(p), 0);
	record(&b, XP_REC_GPU_CLOCK, &c0, sizeof(c0), 0);
	record(&b, XP_REC_GPU_KERNEL, &k, sizeof(k), 0);
	record(&b, XP_REC_GPU_API, &act, sizeof(act), 0);
	record(&b, XP_REC_GPU_API, &cb, sizeof(cb), 0);
	record(&b, XP_REC_GPU_CLOCK, &c1, sizeof(c1), 0);   /* the exit pair comes last */
	ck_assert_int_eq(xp_gpu_load_stream(db, write_buf(&b, b.n), &testdb_ops, &sink, &st, err,
					    sizeof(err)), 0);
	ck_assert_int_eq(q1("SELECT start FROM CUPTI_ACTIVITY_KIND_KERNEL"), 550 + 905 + 50);
	ck_assert_int_eq(q1("SELECT end FROM CUPTI_ACTIVITY_KIND_KERNEL"), 1000 + 1005);
	ck_assert_int_eq(q1("SELECT start FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId = 1"),
			 1005);
	ck_assert_int_eq(q1("SELECT start FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId = 2"),
			 100);
	/* a second stream leaves the first one's rows alone; without pairs it warns */
	b.n = 0;
	header(&b, XP_FORMAT_VERSION, XP_STREAM_GPU);
	record(&b, XP_REC_GPU_PROCESS, &p, sizeof(p), 0);
	record(&b, XP_REC_GPU_KERNEL, &k, sizeof(k), 0);
	ck_assert_int_eq(xp_gpu_load_stream(db, write_buf(&b, b.n), &testdb_ops, &sink, &st, err,
					    sizeof(err)), 0);
	ck_assert_str_eq(qs("SELECT group_concat(start) FROM CUPTI_ACTIVITY_KIND_KERNEL"), "1505,550");
	ck_assert_int_eq(q1("SELECT severity FROM xp_gpu_status"), XP_GPU_STATUS_WARN);
}
END_TEST

START_TEST(no_gpu_activity)
{
	struct xc_summary s;

	ck_assert_int_eq(xc_correlate_db(db, &s), 0);
	ck_assert_uint_eq(s.gpu_rows, 0);
	ck_assert_uint_eq(s.skew_n, 0);
}
END_TEST

static Suite *gpuingest_suite(void)
{
	Suite *s = suite_create("gpuingest");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, short_names);
	tcase_add_test(tc, truth_loads);
	tcase_add_test(tc, truth_correlates);
	tcase_add_test(tc, bad_truncated_keeps_earlier_rows);
	tcase_add_test(tc, bad_short_record);
	tcase_add_test(tc, bad_string_len);
	tcase_add_test(tc, undefined_string_is_unknown);
	tcase_add_test(tc, peer_copy_names_both_devices);
	tcase_add_test(tc, bad_future_version_and_wrong_stream);
	tcase_add_test(tc, bad_launch_record);
	tcase_add_test(tc, calibrated_clock);
	tcase_add_test(tc, no_gpu_activity);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(gpuingest_suite)
