/* test-diff.c - the GPU-weighted folded stacks, the keyed weight table, the
 * differential SVG, xpcorr diff and the archive facts, on the synthetic
 * ground truth of gpu-testdb.c (two copies: base, and new with one kernel
 * slowed down) and on a real git checkout in a temporary directory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db/archive.h"
#include "check-main.h"
#include "correlate/db_join.h"
#include "export/diff/diff.h"
#include "export/diff/diffname.h"
#include "export/render/folded.h"
#include "gpu-testdb.h"
#include "export/render/svg.h"
#include "export/render/wtab.h"

static char dir[] = "/tmp/xp-diff-XXXXXX";
static sqlite3 *db[2];
static struct testdb_sink sink[2];

static void setup(void)
{
	struct xc_summary s;
	char sub[64];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	for (int i = 0; i < 2; i++) {
		snprintf(sub, sizeof(sub), "%s/%d", dir, i);
		ck_assert_int_eq(mkdir(sub, 0755), 0);
		db[i] = testdb_open(":memory:");
		ck_assert_ptr_nonnull(db[i]);
		ck_assert_int_eq(testdb_sink_init(&sink[i], db[i]), 0);
		ck_assert_int_eq(truth_build(db[i], &sink[i], sub), 0);
		ck_assert_int_eq(xc_correlate_db(db[i], &s), 0);
	}
}

static void teardown(void)
{
	char cmd[128];

	for (int i = 0; i < 2; i++) {
		testdb_sink_fini(&sink[i]);
		sqlite3_close(db[i]);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(dir, "/tmp/xp-diff-XXXXXX");
}

static int64_t scalar(sqlite3 *d, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -1;

	ck_assert_int_eq(sqlite3_prepare_v2(d, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Runs fn into a memory buffer; the caller frees it. */
#define CAPTURE(buf, call) do {                                          \
	size_t len_;                                                     \
	FILE *m_ = open_memstream(&(buf), &len_);                        \
	ck_assert_ptr_nonnull(m_);                                       \
	ck_assert_int_eq((call), 0);                                     \
	fclose(m_);                                                      \
} while (0)
#define OUT m_

static uint64_t sum_counts(const char *text)
{
	uint64_t sum = 0;

	for (const char *l = text; *l; ) {
		const char *nl = strchr(l, '\n'), *sp;

		ck_assert_ptr_nonnull(nl);
		for (sp = nl; sp > l && sp[-1] != ' '; sp--)
			;
		sum += strtoull(sp, NULL, 10);
		l = nl + 1;
	}
	return sum;
}

START_TEST(wtab_merges_sides_and_sorts)
{
	struct xp_wtab *t = xp_wtab_new();
	struct xp_wrow *rows;
	size_t n;

	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(xp_wtab_add(t, 0, "b;x", 3, 10, 1), 0);
	ck_assert_int_eq(xp_wtab_add(t, 1, "b;x", 3, 7, 2), 0);
	ck_assert_int_eq(xp_wtab_add(t, 0, "a", 1, 5, 1), 0);
	ck_assert_int_eq(xp_wtab_add(t, 0, "b;xyz", 3, 1, 1), 0);   /* len cuts: "b;x" */
	ck_assert_int_eq(xp_wtab_add(t, 2, "a", 1, 5, 1), -EINVAL);
	ck_assert_int_eq(xp_wtab_rows(t, &rows, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(rows[0].key, "a");
	ck_assert_str_eq(rows[1].key, "b;x");
	ck_assert_uint_eq(rows[1].w[0], 11);
	ck_assert_uint_eq(rows[1].w[1], 7);
	ck_assert_uint_eq(rows[1].n[1], 2);
	free(rows);
	xp_wtab_free(t);
}
END_TEST

START_TEST(gpu_weight_hangs_kernels_under_the_callers_code)
{
	struct xp_folded_opts o = { .root = XP_ROOT_NONE, .pid = -1, .tid = -1,
				    .weight = XP_WEIGHT_GPU };
	char *text = NULL;
	int64_t total = scalar(db[0], "SELECT (SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL)"
			       " + (SELECT ifnull(sum(end - start), 0) FROM CUPTI_ACTIVITY_KIND_MEMCPY)"
			       " + (SELECT ifnull(sum(end - start), 0) FROM CUPTI_ACTIVITY_KIND_MEMSET)");

	CAPTURE(text, xp_folded_write(db[0], &o, OUT));
	/* every GPU ns once; the marker, CUPTI and kernel frames cut at the leaf end */
	ck_assert_int_eq((int64_t)sum_counts(text), total);
	ck_assert_ptr_nonnull(strstr(text, "main;forward;launch_a;gemm_k1(float*, float*, int) "));
	ck_assert_ptr_null(strstr(text, "xpcap_correlation_marker"));
	ck_assert_ptr_null(strstr(text, "libcupti"));
	ck_assert_ptr_nonnull(strstr(text, "main;copy_in;[memcpy HtoD] 3000\n"));
	/* corr 22: a sample inside the call; 24: nothing; 99: no API call */
	ck_assert_ptr_nonnull(strstr(text, "main;backward;launch_b;void at::native::reduce<float>"
				     "(float*, int) [inferred] 40000\n"));
	ck_assert_ptr_nonnull(strstr(text, "[unattributed];void flash::"));
	ck_assert_ptr_nonnull(strstr(text, "[unattributed];softmax_kernel 100\n"));
	free(text);

	o.exact_only = 1;
	o.root = XP_ROOT_TID;
	CAPTURE(text, xp_folded_write(db[0], &o, OUT));
	ck_assert_ptr_null(strstr(text, "[inferred]"));
	ck_assert_ptr_null(strstr(text, "[unattributed]"));
	ck_assert_int_eq((int64_t)sum_counts(text), scalar(db[0], "SELECT sum(g.end - g.start) FROM"
			 " (SELECT 'KERNEL' t, rowid r, start, end FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL"
			 " SELECT 'MEMCPY', rowid, start, end FROM CUPTI_ACTIVITY_KIND_MEMCPY) g JOIN"
			 " xp_attribution a ON a.gpu_table = g.t AND a.gpu_rowid = g.r WHERE a.how = 'exact'"));
	ck_assert_ptr_nonnull(strstr(text, "-100/101;main;forward;launch_a;gemm_k1"));
	free(text);
}
END_TEST

START_TEST(api_weight_has_the_call_as_leaf)
{
	struct xp_folded_opts o = { .root = XP_ROOT_NONE, .pid = -1, .tid = -1,
				    .weight = XP_WEIGHT_API };
	char *text = NULL;

	CAPTURE(text, xp_folded_write(db[0], &o, OUT));
	ck_assert_int_eq((int64_t)sum_counts(text),
			 scalar(db[0], "SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_RUNTIME"));
	ck_assert_ptr_nonnull(strstr(text, "main;graph_replay;cudaGraphLaunch "));
	free(text);
	o.no_leaf = 1;
	CAPTURE(text, xp_folded_write(db[0], &o, OUT));
	ck_assert_ptr_null(strstr(text, "cudaGraphLaunch"));
	free(text);
}
END_TEST

START_TEST(weight_names)
{
	enum xp_weight w;

	ck_assert_int_eq(xp_weight_parse("offcpu", &w), 0);
	ck_assert_int_eq(w, XP_WEIGHT_OFFCPU);
	ck_assert_str_eq(xp_weight_name(w), "offcpu");
	ck_assert_str_eq(xp_weight_unit(XP_WEIGHT_CPU), "samples");
	ck_assert_int_eq(xp_weight_parse("wall", &w), -EINVAL);
}
END_TEST

START_TEST(svg_differential_colours)
{
	static const char in[] = "main;grew 10 30\nmain;shrank 20 10\nmain;same 5 5\nbad 1 x\n";
	struct xp_svg_opts o = { .differential = 1, .unit = "ns" };
	FILE *f = fmemopen((void *)in, sizeof(in) - 1, "r");
	uint64_t bad;
	char *svg = NULL;

	CAPTURE(svg, xp_svg_render(f, &o, OUT, &bad));
	fclose(f);
	ck_assert_uint_eq(bad, 1);
	/* the largest change of any frame is +20 (grew, and main: 35 -> 45 is +10) */
	ck_assert_ptr_nonnull(strstr(svg, "<title>grew (30 ns, 66.67%; base 10,"
				     " +200.00%)</title><rect x=\"10.0\" y=\"40\" width=\"786.2\""
				     " height=\"15\" fill=\"rgb(255,0,0)\""));
	ck_assert_ptr_nonnull(strstr(svg, "<title>shrank (10 ns, 22.22%; base 20,"));
	ck_assert_ptr_nonnull(strstr(svg, "fill=\"rgb(105,105,255)\""));
	ck_assert_ptr_nonnull(strstr(svg, "<title>same (5 ns, 11.11%; base 5,"
				     " +0.00%)</title>"));
	ck_assert_ptr_nonnull(strstr(svg, "fill=\"rgb(250,250,250)\""));
	free(svg);
}
END_TEST

static void slow_down_gemm(sqlite3 *d, int factor)
{
	char sql[256];

	snprintf(sql, sizeof(sql), "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + %d * (end - start)"
		 " WHERE demangledName = (SELECT id FROM StringIds WHERE value = 'gemm_k1(float*, float*,"
		 " int)')", factor);
	ck_assert_int_eq(sqlite3_exec(d, sql, NULL, NULL, NULL), SQLITE_OK);
}

START_TEST(diff_reports_the_slower_kernel_and_stack)
{
	struct xp_diff_opts o = XP_DIFF_DEFAULTS;
	struct xp_diff_side a = { "base", db[0] }, b = { "new", db[1] };
	char *text = NULL, err[256];

	slow_down_gemm(db[1], 2);
	ck_assert_int_eq(sqlite3_exec(db[1], "DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY", NULL, NULL, NULL),
			 SQLITE_OK);
	o.format = XP_DIFF_CSV;
	CAPTURE(text, xp_diff(&a, &b, &o, OUT, err, sizeof(err)));
	/* 5 launches of 1..5 us and 4 graph nodes of 0.5 us: 17 us, now 34 */
	ck_assert_ptr_nonnull(strstr(text, "section,base_ns,new_ns,diff_ns,diff_pct,base_instances,"
				     "new_instances,name\nkernel,17000,34000,17000,+100.0,9,9,"
				     "\"gemm_k1(float*, float*, int)\"\n"));
	ck_assert_ptr_nonnull(strstr(text, "kernel,3000,0,-3000,gone,1,0,\"[memcpy HtoD]\"\n"));
	ck_assert_ptr_nonnull(strstr(text, "kernel,100,100,0,+0.0,1,1,\"softmax_kernel\"\n"));
	ck_assert_ptr_nonnull(strstr(text, "stack,15000,30000,15000,+100.0,5,5,"
				     "\"launch_a <- forward <- main\"\n"));
	ck_assert_ptr_nonnull(strstr(text, "stack,2000,4000,2000,+100.0,4,4,"
				     "\"graph_replay <- main\"\n"));
	ck_assert_ptr_nonnull(strstr(text, "stack,3000,0,-3000,gone,1,0,\"copy_in <- main\"\n"));
	free(text);

	/* normalised by gemm's instances (equal): unchanged; by another name: errors */
	o.normalize = XP_NORM_KERNEL;
	o.norm_kernel = "gemm";
	CAPTURE(text, xp_diff(&a, &b, &o, OUT, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(text, "kernel,17000,34000,17000,+100.0,9,9,"));
	free(text);
	o.norm_kernel = "no_such_kernel";
	ck_assert_int_eq(xp_diff(&a, &b, &o, stdout, err, sizeof(err)), -ENOENT);
	ck_assert_str_eq(err, "--normalize: no kernel named 'no_such_kernel' in either run");
	o.norm_kernel = "_";     /* gemm_k1, softmax_kernel, flash::..., ... */
	ck_assert_int_eq(xp_diff(&a, &b, &o, stdout, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "matches"));
}
END_TEST

START_TEST(diff_normalizes_by_a_kernels_instances)
{
	struct xp_diff_opts o = XP_DIFF_DEFAULTS;
	struct xp_diff_side a = { "base", db[0] }, b = { "new", db[1] };
	char *text = NULL, err[256];

	/* the new run ran softmax twice: everything of it counts half */
	ck_assert_int_eq(sqlite3_exec(db[1], "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL SELECT * FROM"
				      " CUPTI_ACTIVITY_KIND_KERNEL WHERE demangledName = (SELECT id FROM"
				      " StringIds WHERE value = 'softmax_kernel')", NULL, NULL, NULL),
			 SQLITE_OK);
	o.format = XP_DIFF_CSV;
	o.normalize = XP_NORM_KERNEL;
	o.norm_kernel = "softmax_kernel";
	CAPTURE(text, xp_diff(&a, &b, &o, OUT, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(text, "kernel,100,100,0,+0.0,1,2,\"softmax_kernel\"\n"));
	ck_assert_ptr_nonnull(strstr(text, "kernel,17000,8500,-8500,-50.0,9,9,"));
	free(text);
}
END_TEST

START_TEST(diff_folded_has_base_and_new_columns)
{
	struct xp_diff_opts o = XP_DIFF_DEFAULTS;
	struct xp_diff_side a = { "base", db[0] }, b = { "new", db[1] };
	char *text = NULL, err[256];

	slow_down_gemm(db[1], 3);
	o.format = XP_DIFF_FOLDED;
	CAPTURE(text, xp_diff(&a, &b, &o, OUT, err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(text, "main;graph_replay;gemm_k1(float*, float*, int) 2000 6000\n"));
	ck_assert_ptr_nonnull(strstr(text, "main;copy_in;[memcpy HtoD] 3000 3000\n"));
	free(text);
}
END_TEST

START_TEST(archive_records_git_describe_of_the_program)
{
	char cmd[1400];
	struct xp_archive a;

	/* recorded by ingest from what xpcap took (meta.json "git"), read
	 * back by diff and ls; ingest runs no git itself */
	snprintf(cmd, sizeof(cmd), "INSERT INTO META_DATA_EXPORT VALUES ('meta.command.0', '/src/tools/train.py'),"
		 " ('meta.git.describe', 'v1.2-dirty'), ('meta.git.dir', '/src/tools'),"
		 " ('meta.hostname', 'gpu-box'), ('meta.sample_frequency_hz', '999')");
	ck_assert_int_eq(sqlite3_exec(db[0], cmd, NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(xp_archive_record(db[0]), 0);
	ck_assert_int_eq(xp_archive_read(db[0], &a), 0);
	ck_assert_str_eq(a.git, "v1.2-dirty");
	ck_assert_str_eq(a.git_dir, "/src/tools");
	ck_assert_str_eq(a.host, "gpu-box");
	ck_assert_int_eq(a.sample_hz, 999);
	ck_assert_int_eq(a.gpu_ns, scalar(db[0], "SELECT (SELECT sum(end - start) FROM"
			 " CUPTI_ACTIVITY_KIND_KERNEL) + (SELECT sum(end - start) FROM CUPTI_ACTIVITY_KIND_MEMCPY)"));
	ck_assert_str_eq(a.gpu, "NVIDIA H100 80GB HBM3");
	/* the record wins over the tables it came from */
	ck_assert_int_eq(sqlite3_exec(db[0], "DELETE FROM TARGET_INFO_GPU", NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(xp_archive_read(db[0], &a), 0);
	ck_assert_str_eq(a.gpu, "NVIDIA H100 80GB HBM3");
}
END_TEST

/* Stacks named from their folded text as report names launch stacks. */
START_TEST(stack_names_read_as_the_reports)
{
	char name[512];

	/* the Python line and the operation lead; C++ short in text, the CUDA layers go */
	xp_diff_stack_name("python3;train.py:12 <module>;train.py:42 forward;_PyEval_EvalFrameDefault;"
			   "at::_ops::add_Tensor::call(at::Tensor const&);at::native::add_kernel(at::"
			   "TensorIteratorBase&);void at::native::gpu_kernel<float, 4>(int);cudaLaunchKernel",
			   2, 1, name, sizeof(name));
	ck_assert_str_eq(name, "train.py:42 forward \u203a aten::add.Tensor | at::native::gpu_kernel<\u2026>()"
			 " <- at::native::add_kernel() <- ...");
	xp_diff_stack_name("python3;train.py:42 forward;at::_ops::mm::call(at::Tensor const&);"
			   "k_launch(int)", 2, 0, name, sizeof(name));
	ck_assert_str_eq(name, "train.py:42 forward \u203a aten::mm | k_launch(int) <- "
			 "at::_ops::mm::call(at::Tensor const&) <- ...");
	/* no Python: autograd's thread leads with its node and operation */
	xp_diff_stack_name("start_thread;torch::autograd::Engine::thread_main();"
			   "torch::autograd::generated::MmBackward0::apply(std::vector<at::Tensor>&&);"
			   "at::_ops::mm::call(at::Tensor const&);at::native::mm_out()", 1, 1, name,
			   sizeof(name));
	ck_assert_ptr_nonnull(strstr(name, "autograd backward: MmBackward0 \u203a aten::mm | "
				     "at::native::mm_out() <- ..."));
	/* a native program: from its own code, past cuBLAS */
	xp_diff_stack_name("_start;main;run_gemm(int);cublasSgemm_v2;libcublasLt.so.13+0x71ba5cc", 3, 1,
			   name, sizeof(name));
	ck_assert_str_eq(name, "run_gemm() <- main <- _start");
}
END_TEST

Suite *diff_suite(void)
{
	Suite *s = suite_create("diff");
	TCase *tc = tcase_create("diff");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, wtab_merges_sides_and_sorts);
	tcase_add_test(tc, gpu_weight_hangs_kernels_under_the_callers_code);
	tcase_add_test(tc, api_weight_has_the_call_as_leaf);
	tcase_add_test(tc, weight_names);
	tcase_add_test(tc, svg_differential_colours);
	tcase_add_test(tc, diff_reports_the_slower_kernel_and_stack);
	tcase_add_test(tc, diff_normalizes_by_a_kernels_instances);
	tcase_add_test(tc, diff_folded_has_base_and_new_columns);
	tcase_add_test(tc, archive_records_git_describe_of_the_program);
	tcase_add_test(tc, stack_names_read_as_the_reports);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(diff_suite)
