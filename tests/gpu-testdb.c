/* gpu-testdb.c - base tables, a test sink and the synthetic ground truth
 * for the GPU ingest, correlation and report tests.
 *
 * The story, pid 100, threads 101 (T1) and 102 (T2), all times ns from
 * 1 s, records written out of time order:
 *   site A  main > forward > launch_a    launches gemm_k1 5x (1..5 us)
 *   site B  main > backward > launch_b   launches at::native::reduce<float> 3x (10..30 us)
 *   site C  main > optimizer > launch_c  launches flash::fwd_impl<128> 2x (7, 9 us)
 *   site D  main > graph_replay          one cudaGraphLaunch: 4 gemm_k1 nodes, 0.5 us each
 *   site E  main > copy_in               one cudaMemcpyAsync HtoD, 3 us
 *   corr 22 reduce (40 us): launch record lost; a T1 sample with stack B inside the call
 *   corr 23 fwd_impl (11 us): launch record from T2 for T1's call: rejected, no evidence
 *   corr 24 fwd_impl (13 us): T2 call, no launch record, no sample
 *   corr 99 softmax_kernel (0.1 us): no API record at all
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "db/db_schema.h"
#include "gpu-testdb.h"
#include "src/runfile.h"
#include "src/runfmt_gpu.h"

sqlite3 *testdb_open(const char *path)
{
	sqlite3 *db;

	if (sqlite3_open(path, &db) != SQLITE_OK)
		return NULL;
	/* the product's own tables, as ingest creates them */
	if (xp_db_create_schema(db) != SQLITE_OK || xp_gpu_schema_create(db) < 0) {
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

static int64_t get_or_put(sqlite3_stmt *get, sqlite3_stmt *put)
{
	int64_t id = -EIO;

	if (sqlite3_step(get) == SQLITE_ROW)
		id = sqlite3_column_int64(get, 0);
	else if (sqlite3_step(put) == SQLITE_DONE)
		id = sqlite3_last_insert_rowid(sqlite3_db_handle(put));
	sqlite3_reset(get);
	sqlite3_reset(put);
	return id;
}

static int64_t intern_string(void *ctx, const char *s)
{
	struct testdb_sink *k = ctx;

	sqlite3_bind_text(k->str_get, 1, s, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(k->str_put, 1, s, -1, SQLITE_TRANSIENT);
	return get_or_put(k->str_get, k->str_put);
}

/* What the real loader would get from symbolization, for readable stacks. */
static const char *symbol_of(uint64_t ip)
{
	switch (ip) {
	case 0x0f00: return "xpcap_correlation_marker";    /* the CUDA layers a */
	case 0x0f10: return "libcupti.so.13+0x7d162";      /* report skips */
	case 0x1000: return "main";
	case 0x1010: return "launch_a";
	case 0x1020: return "launch_b";
	case 0x1030: return "launch_c";
	case 0x1040: return "graph_replay";
	case 0x1050: return "copy_in";
	case 0x1200: return "forward";
	case 0x1300: return "backward";
	case 0x1400: return "optimizer";
	}
	return NULL;
}

static int64_t frame_of(struct testdb_sink *k, uint64_t ip, int kernel)
{
	char buf[32];
	const char *sym = symbol_of(ip);
	int64_t sid;

	if (!sym) {
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)ip);
		sym = buf;
	}
	sid = intern_string(k, sym);
	if (sid < 0)
		return sid;
	sqlite3_bind_int64(k->frame_get, 1, sid);
	sqlite3_bind_int64(k->frame_put, 1, sid);
	/* the main loader's frame kinds (db_schema.h) */
	sqlite3_bind_int(k->frame_get, 2, kernel ? XP_FRAME_KERNEL : XP_FRAME_USER);
	sqlite3_bind_int(k->frame_put, 2, kernel ? XP_FRAME_KERNEL : XP_FRAME_USER);
	return get_or_put(k->frame_get, k->frame_put);
}

/* root = outermost user frame; the leaf node names the stack */
static int64_t add_node(struct testdb_sink *k, int64_t parent, uint64_t ip, int kernel, int depth)
{
	int64_t f = frame_of(k, ip, kernel);

	if (f < 0)
		return f;
	sqlite3_bind_int64(k->node_get, 1, parent);
	sqlite3_bind_int64(k->node_get, 2, f);
	sqlite3_bind_int64(k->node_put, 1, parent);
	sqlite3_bind_int64(k->node_put, 2, f);
	sqlite3_bind_int64(k->node_put, 3, depth);
	return get_or_put(k->node_get, k->node_put);
}

static int64_t intern_stack(void *ctx, uint32_t pid, uint64_t ts, const uint64_t *kips,
			    unsigned nk, const uint64_t *uips, unsigned nu)
{
	struct testdb_sink *k = ctx;
	int64_t node = 0;
	int depth = 0;

	(void)pid;
	(void)ts;
	for (unsigned i = nu; i-- > 0;)
		if ((node = add_node(k, node, uips[i], 0, depth++)) < 0)
			return node;
	for (unsigned i = nk; i-- > 0;)
		if ((node = add_node(k, node, kips[i], 1, depth++)) < 0)
			return node;
	return node;
}

const struct xp_gpu_sink_ops testdb_ops = { intern_string, intern_stack, NULL };

int64_t testdb_stack(struct testdb_sink *k, const uint64_t *user_ips, unsigned nu)
{
	return intern_stack(k, 0, 0, NULL, 0, user_ips, nu);
}

int testdb_sink_init(struct testdb_sink *k, sqlite3 *db)
{
	memset(k, 0, sizeof(*k));
	k->db = db;
	if (sqlite3_prepare_v2(db, "SELECT id FROM StringIds WHERE value = ?1", -1, &k->str_get, NULL) ||
	    sqlite3_prepare_v2(db, "INSERT INTO StringIds(value) VALUES(?1)", -1, &k->str_put, NULL) ||
	    sqlite3_prepare_v2(db, "SELECT id FROM xp_frames WHERE symbol = ?1 AND kind = ?2", -1,
			       &k->frame_get, NULL) ||
	    sqlite3_prepare_v2(db, "INSERT INTO xp_frames(symbol, module, kind) VALUES(?1, 0, ?2)",
			       -1, &k->frame_put, NULL) ||
	    sqlite3_prepare_v2(db, "SELECT id FROM xp_stacks WHERE parent = ?1 AND frame = ?2", -1,
			       &k->node_get, NULL) ||
	    sqlite3_prepare_v2(db, "INSERT INTO xp_stacks(parent, frame, depth) VALUES(?1, ?2, ?3)",
			       -1, &k->node_put, NULL))
		return -EIO;
	return 0;
}

void testdb_sink_fini(struct testdb_sink *k)
{
	sqlite3_finalize(k->str_get);
	sqlite3_finalize(k->str_put);
	sqlite3_finalize(k->frame_get);
	sqlite3_finalize(k->frame_put);
	sqlite3_finalize(k->node_get);
	sqlite3_finalize(k->node_put);
}

/* ---- the ground truth ---- */

#define PID 100
#define T1 101
#define T2 102
#define BASE 1000000000ull

static const uint64_t site_a[] = { 0x0f00, 0x0f10, 0x1010, 0x1200, 0x1000 };
static const uint64_t site_b[] = { 0x1020, 0x1300, 0x1000 };
static const uint64_t site_c[] = { 0x1030, 0x1400, 0x1000 };
static const uint64_t site_d[] = { 0x1040, 0x1000 };
static const uint64_t site_e[] = { 0x1050, 0x1000 };
static const uint64_t kstack[] = { 0xffffffff81000010ull };  /* uprobe's kernel side */

enum { S_GEMM = 1, S_REDUCE, S_FWD, S_SOFTMAX, S_LAUNCH, S_GRAPH, S_MEMCPY, S_DEV, S_EXE, S_RANGE };

static int put_string(struct xp_writer *w, uint32_t id, const char *s)
{
	struct xp_gpu_string g = { .id = id, .len = (uint32_t)strlen(s) };

	return xp_writer_append(w, XP_REC_GPU_STRING, &g, sizeof(g), s, g.len);
}

static int put_launch(struct xp_writer *w, uint64_t ts, uint64_t corr, uint32_t tid,
		      const uint64_t *ips, unsigned n)
{
	struct {
		struct xp_launch l;
		uint64_t ips[8];
	} r = { .l = { .ts = ts, .correlation_id = corr, .pid = PID, .tid = tid, .cpu = 1,
		       .cbid = 211, .stack = { .user_depth = (uint16_t)n, .kernel_depth = 1 } } };

	r.ips[0] = kstack[0];
	memcpy(r.ips + 1, ips, n * sizeof(*ips));
	return xp_writer_append(w, XP_REC_LAUNCH, &r.l, sizeof(r.l), r.ips, (n + 1) * 8);
}

static int put_api(struct xp_writer *w, uint64_t start, uint64_t end, uint64_t corr,
		   uint32_t tid, uint32_t name)
{
	struct xp_gpu_api a = { .start = start, .end = end, .correlation_id = corr, .pid = PID,
				.tid = tid, .cbid = 211, .name = name };

	return xp_writer_append(w, XP_REC_GPU_API, &a, sizeof(a), NULL, 0);
}

static int put_kernel(struct xp_writer *w, uint64_t start, uint64_t dur, uint64_t corr,
		      uint32_t name, uint32_t graph, uint64_t node)
{
	struct xp_gpu_kernel k = { .start = start, .end = start + dur, .correlation_id = corr,
				   .graph_id = graph, .graph_node_id = node, .device = 0,
				   .context = 1, .stream = 7, .grid = { 128, 1, 1 },
				   .block = { 256, 1, 1 }, .registers = 32, .static_shared = 0,
				   .dynamic_shared = 1024, .name = name };

	return xp_writer_append(w, XP_REC_GPU_KERNEL, &k, sizeof(k), NULL, 0);
}

static int put_sample(sqlite3 *db, uint64_t ts, uint32_t tid, int64_t stack)
{
	char sql[200];

	snprintf(sql, sizeof(sql), "INSERT INTO xp_samples(ts, pid, tid, cpu, stack_id, period)"
		 " VALUES(%llu, %d, %u, 1, %lld, 1000000)", (unsigned long long)ts, PID, tid,
		 (long long)stack);
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}

static int write_streams(const char *gpu, const char *cpu)
{
	struct xp_writer *g = NULL, *c = NULL;
	struct xp_gpu_process proc = { .ts = BASE - 1000, .pid = PID, .ns_pid = PID, .ppid = 1,
				       .init_tid = T1, .cupti_version = 130001,
				       .driver_version = 13000, .cuda_version = 13000,
				       .clock_method = XP_GPU_CLOCK_CALLBACK,
				       .flags = XP_GPU_PROC_API_TRACE | XP_GPU_PROC_NVTX,
				       .ns_depth = 1, .exe_name = S_EXE };
	struct xp_gpu_device dev = { .global_memory = 80ull << 30, .id = 0, .sm_count = 132,
				     .cc_major = 9, .cc_minor = 0, .core_clock_khz = 1980000,
				     .max_warps_per_sm = 64, .l2_size = 50 << 20, .name = S_DEV,
				     .uuid = { 0xde, 0xad, 0xbe, 0xef } };
	struct xp_gpu_status st = { .ts = BASE - 900, .code = XP_GPU_ST_STARTED,
				    .severity = XP_GPU_STATUS_INFO, .text_len = 7 };
	struct xp_gpu_memcpy mc = { .start = BASE + 2002000, .end = BASE + 2005000,
				    .correlation_id = 21, .bytes = 4096, .device = 0, .context = 1,
				    .stream = 7, .copy_kind = 1, .src_kind = 2, .dst_kind = 3,
				    .flags = XP_GPU_F_ASYNC };
	struct xp_gpu_nvtx ns = { .ts = BASE, .id = 1, .edge = XP_NVTX_START, .object_kind = 2,
				  .pid = PID, .tid = T1, .name = S_RANGE };
	struct xp_gpu_nvtx ne = { .ts = BASE + 60000000, .id = 1, .edge = XP_NVTX_END,
				  .object_kind = 2, .pid = PID, .tid = T1 };
	struct xp_lost lost = { .ts = BASE + 70000000, .kind = 0, .reason = XP_LOST_CUPTI_DROPPED,
				.count = 3 };
	static const uint64_t gemm_ns[] = { 1000, 2000, 3000, 4000, 5000 };
	static const uint64_t reduce_ns[] = { 10000, 20000, 30000 };
	static const uint64_t fwd_ns[] = { 7000, 9000 };
	int rc;

	if ((rc = xp_writer_open(&g, gpu, XP_STREAM_GPU, PID)) < 0 ||
	    (rc = xp_writer_open(&c, cpu, XP_STREAM_CPU, 0)) < 0)
		goto out;
	put_string(g, S_EXE, "/usr/bin/train");
	xp_writer_append(g, XP_REC_GPU_PROCESS, &proc, sizeof(proc), NULL, 0);
	{
		/* rank 1 of a torchrun job of 2 */
		struct xp_gpu_rank rank = { .pid = PID, .source = XP_RANK_TORCHRUN, .rank = 1,
					    .local_rank = 1, .world_size = 2, .local_world_size = 2,
					    .host = "node7" };

		xp_writer_append(g, XP_REC_GPU_RANK, &rank, sizeof(rank), NULL, 0);
	}
	xp_writer_append(g, XP_REC_GPU_STATUS, &st, sizeof(st), "started", 7);
	put_string(g, S_DEV, "NVIDIA H100 80GB HBM3");
	xp_writer_append(g, XP_REC_GPU_DEVICE, &dev, sizeof(dev), NULL, 0);
	put_string(g, S_GEMM, "_Z7gemm_k1PfS_i");
	put_string(g, S_REDUCE, "_ZN2at6native6reduceIfEEvPT_i");
	put_string(g, S_FWD, "_ZN5flash12_GLOBAL__N_18fwd_implILi128EEEvPKfPf");
	put_string(g, S_SOFTMAX, "softmax_kernel");
	put_string(g, S_LAUNCH, "cudaLaunchKernel");
	put_string(g, S_GRAPH, "cudaGraphLaunch");
	put_string(g, S_MEMCPY, "cudaMemcpyAsync");
	put_string(g, S_RANGE, "train_step");
	xp_writer_append(g, XP_REC_GPU_NVTX, &ne, sizeof(ne), NULL, 0);  /* END before START */
	xp_writer_append(g, XP_REC_GPU_NVTX, &ns, sizeof(ns), NULL, 0);

	/* sites A, B, C: corr 1..10, one call each 100 us apart; kernels first */
	for (int i = 0; i < 10; i++) {
		uint64_t t = BASE + 100000ull * i, corr = 1 + i;
		const uint64_t *site = i < 5 ? site_a : i < 8 ? site_b : site_c;
		uint32_t name = i < 5 ? S_GEMM : i < 8 ? S_REDUCE : S_FWD;
		uint64_t dur = i < 5 ? gemm_ns[i] : i < 8 ? reduce_ns[i - 5] : fwd_ns[i - 8];

		put_kernel(g, t + 2000, dur, corr, name, 0, 0);
		put_launch(c, t + 1000, corr, T1, site, site == site_a ? 5 : 3);
	}
	for (int i = 0; i < 10; i++)
		put_api(g, BASE + 100000ull * i, BASE + 100000ull * i + 5000, 1 + i, T1, S_LAUNCH);
	/* site D: a graph launch, corr 20, four nodes */
	for (int n = 0; n < 4; n++)
		put_kernel(g, BASE + 1002000 + 1000 * n, 500, 20, S_GEMM, 1, 1 + n);
	put_api(g, BASE + 1000000, BASE + 1005000, 20, T1, S_GRAPH);
	put_launch(c, BASE + 1001000, 20, T1, site_d, 2);
	/* site E: a memcpy, corr 21 */
	xp_writer_append(g, XP_REC_GPU_MEMCPY, &mc, sizeof(mc), NULL, 0);
	put_api(g, BASE + 2000000, BASE + 2005000, 21, T1, S_MEMCPY);
	put_launch(c, BASE + 2001000, 21, T1, site_e, 2);
	/* corr 22: the launch record was lost; a sample inside the call says B */
	put_kernel(g, BASE + 3002000, 40000, 22, S_REDUCE, 0, 0);
	put_api(g, BASE + 3000000, BASE + 3005000, 22, T1, S_LAUNCH);
	/* corr 23: T1's call, a launch record claiming it from T2 (rejected);
	 * 50 ms after T1's last sample, beyond the fallback window */
	put_kernel(g, BASE + 50002000, 11000, 23, S_FWD, 0, 0);
	put_api(g, BASE + 50000000, BASE + 50005000, 23, T1, S_LAUNCH);
	put_launch(c, BASE + 50001000, 23, T2, site_c, 3);
	/* corr 24: T2's call, no evidence at all */
	put_kernel(g, BASE + 51002000, 13000, 24, S_FWD, 0, 0);
	put_api(g, BASE + 51000000, BASE + 51005000, 24, T2, S_LAUNCH);
	/* corr 99: a kernel whose API record never came */
	put_kernel(g, BASE + 52000000, 100, 99, S_SOFTMAX, 0, 0);
	xp_writer_append(g, XP_REC_LOST, &lost, sizeof(lost), NULL, 0);
	rc = 0;
out:
	if (xp_writer_close(g) < 0 || xp_writer_close(c) < 0)
		rc = rc ? rc : -EIO;
	return rc;
}

int truth_build(sqlite3 *db, struct testdb_sink *k, const char *dir)
{
	char gpu[512], cpu[512], err[256];
	struct xp_gpu_load_stats st;
	struct xp_reader *r = NULL;
	struct xp_launch_writer *w;
	const struct xp_record_header *h;
	int rc;

	snprintf(gpu, sizeof(gpu), "%s/gpu-%d.xpr", dir, PID);
	snprintf(cpu, sizeof(cpu), "%s/cpu.xpr", dir);
	unlink(gpu);
	unlink(cpu);
	if ((rc = write_streams(gpu, cpu)) < 0)
		return rc;
	sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	if ((rc = xp_reader_open(&r, cpu)) < 0)
		return rc;
	if ((rc = xp_launch_writer_open(&w, db, &testdb_ops, k)) < 0) {
		xp_reader_close(r);
		return rc;
	}
	while ((rc = xp_reader_next(r, &h)) > 0)
		if (h->type == XP_REC_LAUNCH && (rc = xp_launch_writer_add(w, h)) < 0)
			break;
	xp_launch_writer_close(w);
	xp_reader_close(r);
	if (rc < 0)
		return rc;
	if ((rc = xp_gpu_load_stream(db, gpu, &testdb_ops, k, &st, err, sizeof(err))) < 0)
		return rc;
	/* T1 samples: inside corr 1 (site A) and inside corr 22 (site B) */
	if ((rc = put_sample(db, BASE + 3000, T1, testdb_stack(k, site_a, 5))) < 0 ||
	    (rc = put_sample(db, BASE + 3003000, T1, testdb_stack(k, site_b, 3))) < 0)
		return rc;
	return sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : -EIO;
}
