/* test-pysplice.c - Python frames into native launch stacks (pysplice.h):
 * frames are numbers here, native 1xx, Python 2xx, the gap 999; a native
 * stack is written root first, a Python one innermost first, as on disk. */
#include <stdint.h>
#include <string.h>

#include "check-main.h"
#include "db/db_schema.h"
#include "ingest/pysplice.h"

enum { N = XP_PYROLE_NATIVE, E = XP_PYROLE_EVAL, T = XP_PYROLE_TRAMPOLINE, I = XP_PYROLE_INLINED };

static unsigned splice_in(const int64_t *nat, const uint8_t *role, unsigned nn, const int64_t *py,
			  const uint8_t *entry, unsigned np, int truncated, int bounded,
			  int64_t *out, int *how)
{
	struct xp_splice_in in = { nat, role, nn, py, entry, np, truncated, bounded, 999 };

	return xp_pysplice(&in, out, how);
}

static unsigned splice(const int64_t *nat, const uint8_t *role, unsigned nn, const int64_t *py,
		       const uint8_t *entry, unsigned np, int truncated, int64_t *out, int *how)
{
	return splice_in(nat, role, nn, py, entry, np, truncated, 0, out, how);
}

#define CHECK_OUT(out, n, ...) do {                                            \
		const int64_t want[] = { __VA_ARGS__ };                        \
		ck_assert_uint_eq(n, sizeof(want) / sizeof(want[0]));          \
		for (unsigned i_ = 0; i_ < n; i_++)                            \
			ck_assert_msg(out[i_] == want[i_], "frame %u: %lld, want %lld", i_, \
				      (long long)out[i_], (long long)want[i_]); \
	} while (0)

/* 3.12 with perf trampolines: main -> EVAL(<module>, run) -> C call ->
 * py::forward tramp -> EVAL(forward, layer) -> C++ -> cudaLaunchKernel */
START_TEST(matched_in_order)
{
	const int64_t nat[] = { 100, 101, 102, 103, 104, 105, 106, 107, 108 };
	const uint8_t role[] = { N, T, E, N, T, E, I, N, N };
	/* innermost first: layer, forward (entry), run, <module> (entry) */
	const int64_t py[] = { 203, 202, 201, 200 };
	const uint8_t entry[] = { 0, 1, 0, 1 };
	int64_t out[32];
	int how = 0;
	unsigned n = splice(nat, role, 9, py, entry, 4, 0, out, &how);

	/* each activation (with what was inlined into it) gives way to its
	 * group; the trampolines go; the rest stays */
	CHECK_OUT(out, n, 100, 200, 201, 103, 202, 203, 107, 108);
	ck_assert_int_eq(how, XP_SPLICE_MATCHED);
}
END_TEST

/* 3.10: every frame is an activation; no trampolines before 3.12 */
START_TEST(one_frame_per_activation)
{
	const int64_t nat[] = { 100, 101, 102, 103, 104 };
	const uint8_t role[] = { N, E, E, E, N };
	const int64_t py[] = { 202, 201, 200 };
	const uint8_t entry[] = { 1, 1, 1 };
	int64_t out[32];
	int how;
	unsigned n = splice(nat, role, 5, py, entry, 3, 0, out, &how);

	CHECK_OUT(out, n, 100, 200, 201, 202, 104);
	ck_assert_int_eq(how, XP_SPLICE_MATCHED);
}
END_TEST

/* the copy ended at the innermost evaluation on purpose (3.12, the
 * library's launch stacks): its group in its place, the outer groups on
 * top with no gap frame; a copy that ended there but whose unwind never
 * reached it keeps the gap */
START_TEST(bounded_copy_no_gap)
{
	/* native root first: the innermost activation, then C++ to the launch */
	const int64_t nat[] = { 105, 106, 107, 108 };
	const uint8_t role[] = { E, I, N, N };
	const int64_t py[] = { 203, 202, 201, 200 };
	const uint8_t entry[] = { 0, 1, 0, 1 };
	const uint8_t none[] = { N, N, N, N };
	int64_t out[32];
	int how;
	unsigned n = splice_in(nat, role, 4, py, entry, 4, 0, 1, out, &how);

	CHECK_OUT(out, n, 200, 201, 202, 203, 107, 108);
	ck_assert_int_eq(how, XP_SPLICE_MATCHED);
	n = splice_in(nat, role, 4, py, entry, 4, 0, 0, out, &how);
	CHECK_OUT(out, n, 200, 201, 999, 202, 203, 107, 108);
	ck_assert_int_eq(how, XP_SPLICE_GAP);
	n = splice_in(nat, none, 4, py, entry, 4, 0, 1, out, &how);
	CHECK_OUT(out, n, 200, 201, 202, 203, 999, 105, 106, 107, 108);
	ck_assert_int_eq(how, XP_SPLICE_GAP);
}
END_TEST

/* the unwind stopped inside the C++ (libtorch missing here): the Python
 * part on top of what it gave, under the gap */
START_TEST(unwind_stopped_early)
{
	const int64_t nat[] = { 105, 106, 107 };
	const uint8_t role[] = { N, N, N };
	const int64_t py[] = { 203, 202, 201, 200 };
	const uint8_t entry[] = { 0, 1, 0, 1 };
	int64_t out[32];
	int how;
	unsigned n = splice(nat, role, 3, py, entry, 4, 0, out, &how);

	CHECK_OUT(out, n, 200, 201, 202, 203, 999, 105, 106, 107);
	ck_assert_int_eq(how, XP_SPLICE_GAP);
}
END_TEST

/* it got through the inner activation only: that one is matched, the
 * outer group goes on top */
START_TEST(partly_unwound)
{
	const int64_t nat[] = { 103, 104, 105, 106, 107 };
	const uint8_t role[] = { N, T, E, N, N };
	const int64_t py[] = { 203, 202, 201, 200 };
	const uint8_t entry[] = { 0, 1, 0, 1 };
	int64_t out[32];
	int how;
	unsigned n = splice(nat, role, 5, py, entry, 4, 0, out, &how);

	CHECK_OUT(out, n, 200, 201, 999, 103, 202, 203, 106, 107);
	ck_assert_int_eq(how, XP_SPLICE_GAP);
}
END_TEST

/* more activations than groups and the Python stack complete: the counts
 * disagree, nothing is matched, the native stack stays whole */
START_TEST(counts_disagree)
{
	const int64_t nat[] = { 100, 101, 102, 103 };
	const uint8_t role[] = { E, T, E, N };
	const int64_t py[] = { 200 };
	const uint8_t entry[] = { 1 };
	int64_t out[32];
	int how;
	unsigned n = splice(nat, role, 4, py, entry, 1, 0, out, &how);

	CHECK_OUT(out, n, 200, 999, 100, 101, 102, 103);
	ck_assert_int_eq(how, XP_SPLICE_GAP);
}
END_TEST

/* ... unless the Python stack was cut at 128 frames: its groups are the
 * inner activations, the outer ones stay native */
START_TEST(truncated_python_stack)
{
	const int64_t nat[] = { 100, 101, 102, 103 };
	const uint8_t role[] = { E, T, E, N };
	const int64_t py[] = { 201, 200 };
	const uint8_t entry[] = { 0, 0 };   /* its entry frame was cut off */
	int64_t out[32];
	int how;
	unsigned n = splice(nat, role, 4, py, entry, 2, 1, out, &how);

	CHECK_OUT(out, n, 100, 200, 201, 103);
	ck_assert_int_eq(how, XP_SPLICE_MATCHED);
}
END_TEST

START_TEST(no_native_frames)
{
	const int64_t py[] = { 201, 200 };
	const uint8_t entry[] = { 0, 1 };
	int64_t out[8];
	int how;
	unsigned n = splice(NULL, NULL, 0, py, entry, 2, 0, out, &how);

	CHECK_OUT(out, n, 200, 201, 999);
	ck_assert_int_eq(how, XP_SPLICE_GAP);
}
END_TEST

START_TEST(roles)
{
	ck_assert_int_eq(xp_pyrole_of(XP_FRAME_USER, "_PyEval_EvalFrameDefault"), XP_PYROLE_EVAL);
	ck_assert_int_eq(xp_pyrole_of(XP_FRAME_USER, "_PyEval_EvalFrameDefault.cold"), XP_PYROLE_EVAL);
	ck_assert_int_eq(xp_pyrole_of(XP_FRAME_USER, "_PyEval_EvalFrameDefaultX"), XP_PYROLE_NATIVE);
	ck_assert_int_eq(xp_pyrole_of(XP_FRAME_USER, "_PyEval_EvalFrame"), XP_PYROLE_NATIVE);
	ck_assert_int_eq(xp_pyrole_of(XP_FRAME_JIT, "py::forward:/app/model.py"), XP_PYROLE_TRAMPOLINE);
	ck_assert_int_eq(xp_pyrole_of(XP_FRAME_JIT, "LazyCompile:foo"), XP_PYROLE_NATIVE);
	ck_assert_int_eq(xp_pyrole_of(XP_FRAME_USER, "py::x"), XP_PYROLE_NATIVE);
	ck_assert_int_eq(xp_pyrole_of(XP_FRAME_INLINED, "anything"), XP_PYROLE_INLINED);
	ck_assert_int_eq(xp_pyrole_of(XP_FRAME_UNRESOLVED, "libpython3.12.so+0x1234"), XP_PYROLE_NATIVE);
}
END_TEST

static Suite *pysplice_suite(void)
{
	Suite *s = suite_create("pysplice");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, matched_in_order);
	tcase_add_test(tc, one_frame_per_activation);
	tcase_add_test(tc, unwind_stopped_early);
	tcase_add_test(tc, bounded_copy_no_gap);
	tcase_add_test(tc, partly_unwound);
	tcase_add_test(tc, counts_disagree);
	tcase_add_test(tc, truncated_python_stack);
	tcase_add_test(tc, no_native_frames);
	tcase_add_test(tc, roles);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(pysplice_suite)
