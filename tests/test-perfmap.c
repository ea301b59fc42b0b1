/* test-perfmap.c - JIT symbols from perf-PID.map lines. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check-main.h"
#include "ingest/perfmap.h"

static struct xp_perfmap *parse(const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct xp_perfmap *m = NULL;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(xp_perfmap_parse(&m, f), 0);
	fclose(f);
	return m;
}

START_TEST(python_trampolines)
{
	struct xp_perfmap *m = parse(
		"7f0000001000 40 py::train:/app/train.py\n"
		"7f0000000000 100 py::<module>:/app/train.py\n"
		"7f0000002000 0 zero size\n"
		"zzzz 10 bad start\n"
		"7f0000003000 10\n");

	ck_assert_uint_eq(xp_perfmap_count(m), 2);
	ck_assert_uint_eq(xp_perfmap_skipped(m), 3);
	ck_assert_str_eq(xp_perfmap_lookup(m, 0x7f0000001000), "py::train:/app/train.py");
	ck_assert_str_eq(xp_perfmap_lookup(m, 0x7f000000103f), "py::train:/app/train.py");
	ck_assert_ptr_null(xp_perfmap_lookup(m, 0x7f0000001040));
	ck_assert_str_eq(xp_perfmap_lookup(m, 0x7f00000000ff), "py::<module>:/app/train.py");
	ck_assert_ptr_null(xp_perfmap_lookup(m, 0x7f0000000100));
	ck_assert_ptr_null(xp_perfmap_lookup(m, 0x10));
	xp_perfmap_free(m);
}
END_TEST

START_TEST(later_line_wins_on_reuse)
{
	/* a JIT that frees and reuses code memory writes the new name later */
	struct xp_perfmap *m = parse("1000 100 old\n1000 100 new\n1080 10 inner\n");

	ck_assert_str_eq(xp_perfmap_lookup(m, 0x1010), "new");
	ck_assert_str_eq(xp_perfmap_lookup(m, 0x1085), "inner");
	xp_perfmap_free(m);
}
END_TEST

/* A NUL byte right where an overlong line's rest begins made the skipping
 * loop index before its buffer (found by scripts/fuzz perfmap, input in
 * tests/fuzz/regress/perfmap/). The line is skipped, the next one kept. */
START_TEST(nul_after_overlong_line)
{
	static char text[4096 + 256];
	struct xp_perfmap *m = NULL;
	size_t n = 0;
	FILE *f;

	memset(text, 'a', 4096 - 1);
	n = 4096 - 1;
	text[n++] = '\0';
	n += (size_t)sprintf(text + n, "rest\n7f0000001000 40 py::f:x.py\n");
	f = fmemopen(text, n, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(xp_perfmap_parse(&m, f), 0);
	fclose(f);
	ck_assert_uint_ge(xp_perfmap_count(m), 1);
	ck_assert_uint_eq(xp_perfmap_skipped(m), 1);
	xp_perfmap_free(m);
}
END_TEST

START_TEST(budget_of_a_run)
{
	/* the run's maps share one budget: a map that would go over it is
	 * refused whole and leaves the budget as it was */
	static const char text[] = "1000 10 a\n2000 10 b\n3000 10 c\n";   /* 30 bytes */
	struct xp_perfmap_budget b = { .bytes = 50, .lines = 100 };
	struct xp_perfmap *m = NULL;
	FILE *f;

	f = fmemopen((void *)text, strlen(text), "r");
	ck_assert_int_eq(xp_perfmap_parse_budget(&m, f, &b), 0);
	fclose(f);
	ck_assert_uint_eq(b.bytes, 20);
	ck_assert_uint_eq(b.lines, 97);
	ck_assert_str_eq(xp_perfmap_lookup(m, 0x2004), "b");
	xp_perfmap_free(m);
	m = NULL;
	f = fmemopen((void *)text, strlen(text), "r");
	ck_assert_int_eq(xp_perfmap_parse_budget(&m, f, &b), -E2BIG);
	fclose(f);
	ck_assert_ptr_null(m);
	ck_assert_uint_eq(b.bytes, 20);
	b = (struct xp_perfmap_budget){ .bytes = 1000, .lines = 2 };
	f = fmemopen((void *)text, strlen(text), "r");
	ck_assert_int_eq(xp_perfmap_parse_budget(&m, f, &b), -E2BIG);
	fclose(f);
}
END_TEST

Suite *perfmap_suite(void)
{
	Suite *s = suite_create("perfmap");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, python_trampolines);
	tcase_add_test(tc, later_line_wins_on_reuse);
	tcase_add_test(tc, nul_after_overlong_line);
	tcase_add_test(tc, budget_of_a_run);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(perfmap_suite)
