/* test-table.c - a declared table (export/report/table.h) in text, csv and json:
 * widths and rules, the last field moved or cut at --width, --top's line,
 * absent cells, columns of one format only, a call column. */
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "export/report/table.h"

static int calls;

/* A call column: a marker that says in which format it was asked. */
static int put_marker(struct xp_table *t, const struct xp_cell *c)
{
	calls++;
	if (t->fmt == XP_FMT_JSON)
		jsonw_int(t->json, c->i);
	else if (t->fmt == XP_FMT_CSV)
		fprintf(t->out, "call %lld", (long long)c->i);
	else
		fprintf(t->out, "    call %lld\n", (long long)c->i);
	return 0;
}

static const struct xp_col cols[] = {
	{ .head = "Time (%)", .json = "pct", .kind = XP_COL_FIXED, .width = 8, .rule = 8, .prec = 1 },
	{ .head = "Count", .csv = "Count (n)", .json = "n", .kind = XP_COL_UINT, .width = 6, .rule = 5 },
	{ .head = "Id", .json = "id", .kind = XP_COL_INT, .json_only = 1 },
	{ .head = "Name", .json = "name", .kind = XP_COL_TEXT, .width = 0, .rule = 4 },
	{ .head = "Marks", .json = "marks", .kind = XP_COL_CALL, .call = put_marker },
};

/* The table of two rows (the second with its id and call absent) in fmt,
 * --top 2 of rows, cut to width; what was written. */
static char *render(enum xp_report_format fmt, unsigned width, size_t rows)
{
	struct xp_cell r1[] = { { .d = 75.04 }, { .u = 3 }, { .i = 7 }, { .s = "gemm \"big\"" },
				{ .i = 41 } };
	struct xp_cell r2[] = { { .d = 24.96 }, { .u = 12 }, { .absent = 1 },
				{ .s = "a_kernel_with_a_long_name" }, { .absent = 1 } };
	struct jsonw w;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct xp_table t = { .cols = cols, .n = 5, .fmt = fmt, .out = out, .json = &w, .width = width };

	ck_assert_ptr_nonnull(out);
	jsonw_init(&w, out);
	if (fmt == XP_FMT_JSON)
		jsonw_obj_begin(&w);
	xp_table_begin(&t, "** Title:");
	ck_assert_int_eq(xp_table_row(&t, r1), 0);
	ck_assert_int_eq(xp_table_row(&t, r2), 0);
	xp_table_end(&t, 2, rows);
	if (fmt == XP_FMT_JSON)
		jsonw_obj_end(&w);
	fclose(out);
	return buf;
}

START_TEST(text_rows)
{
	char *s;

	calls = 0;
	s = render(XP_FMT_TEXT, 0, 5);
	ck_assert_str_eq(s, "** Title:\n\n"
			 " Time (%)   Count  Name\n"
			 " --------   -----  ----\n"
			 "     75.0       3  gemm \"big\"\n"
			 "    call 41\n"
			 "     25.0      12  a_kernel_with_a_long_name\n"
			 " (3 more rows; --top 0 shows all)\n");
	ck_assert_int_eq(calls, 1);
	free(s);
	/* at 30 columns the name that does not fit gets a line of its own */
	s = render(XP_FMT_TEXT, 30, 2);
	ck_assert_str_eq(s, "** Title:\n\n"
			 " Time (%)   Count  Name\n"
			 " --------   -----  ----\n"
			 "     75.0       3  gemm \"big\"\n"
			 "    call 41\n"
			 "     25.0      12\n"
			 "  a_kernel_with_a_long_name\n");
	free(s);
}
END_TEST

START_TEST(csv_rows)
{
	char *s = render(XP_FMT_CSV, 30, 5);

	ck_assert_str_eq(s, "\"Time (%)\",\"Count (n)\",\"Name\",\"Marks\"\n"
			 "75.0,3,\"gemm \"\"big\"\"\",\"call 41\"\n"
			 "25.0,12,\"a_kernel_with_a_long_name\",\"\"\n");
	free(s);
}
END_TEST

START_TEST(json_rows)
{
	char *s = render(XP_FMT_JSON, 30, 5);

	ck_assert_str_eq(s, "{\"rows\":[{\"pct\":75.0,\"n\":3,\"id\":7,\"name\":\"gemm \\\"big\\\"\","
			 "\"marks\":41},{\"pct\":25.0,\"n\":12,\"name\":\"a_kernel_with_a_long_name\"}]}");
	free(s);
}
END_TEST

/* A table whose formats differ: a csv-only section name, a text-only
 * share, text's own order and lead, a last field cut, not moved. */
START_TEST(per_format_columns)
{
	static const struct xp_col c[] = {
		{ .head = "Section", .kind = XP_COL_TEXT, .csv_only = 1 },
		{ .head = "Host", .json = "host", .kind = XP_COL_TEXT, .width = 0, .rule = 4 },
		{ .head = "Ns", .json = "ns", .kind = XP_COL_INT, .width = 4, .rule = 2 },
		{ .head = "Share", .kind = XP_COL_FIXED, .width = 5, .rule = 5, .prec = 1, .text_only = 1 },
	};
	static const unsigned char order[] = { 2, 3, 1 };
	struct xp_cell row[] = { { .s = "rank" }, { .s = "node-with-a-long-name" }, { .i = 12 },
				 { .d = 50 } };
	const char *want[] = {
		"    Ns  Share  Host\n    --  -----  ----\n    12   50.0  node-with-a-\u2026\n",
		"\"Section\",\"Host\",\"Ns\"\n\"rank\",\"node-with-a-long-name\",12\n",
		"{\"r\":[{\"host\":\"node-with-a-long-name\",\"ns\":12}]}",
	};

	for (int f = XP_FMT_TEXT; f <= XP_FMT_JSON; f++) {
		struct jsonw w;
		char *buf = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&buf, &len);
		struct xp_table t = { .cols = c, .n = 4, .fmt = f, .out = out, .json = &w, .width = 28,
				      .key = "r", .lead = "  ", .no_split = 1, .text_order = order,
				      .text_n = 3 };

		jsonw_init(&w, out);
		if (f == XP_FMT_JSON)
			jsonw_obj_begin(&w);
		xp_table_begin(&t, NULL);
		xp_table_row(&t, row);
		xp_table_end(&t, 1, 1);
		if (f == XP_FMT_JSON)
			jsonw_obj_end(&w);
		fclose(out);
		ck_assert_str_eq(buf, want[f]);
		free(buf);
	}
}
END_TEST

/* Unknown values (null) and flags (bool); csv rows that continue the
 * table above print no header of their own. */
START_TEST(null_bool_and_continued_csv)
{
	static const struct xp_col c[] = {
		{ .head = "Rank", .json = "rank", .kind = XP_COL_INT, .width = 4, .rule = 4 },
		{ .head = "Coll", .json = "coll", .kind = XP_COL_BOOL, .width = 0, .rule = 4 },
	};
	struct xp_cell row[] = { { .null = 1 }, { .i = 5 } };
	const char *want[] = {
		"    ?  1\n",
		",1\n",
		"{\"rows\":[{\"rank\":null,\"coll\":true}]}",
	};

	for (int f = XP_FMT_TEXT; f <= XP_FMT_JSON; f++) {
		struct jsonw w;
		char *buf = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&buf, &len);
		struct xp_table t = { .cols = c, .n = 2, .fmt = f, .out = out, .json = &w,
				      .csv_continues = 1 };

		jsonw_init(&w, out);
		if (f == XP_FMT_JSON)
			jsonw_obj_begin(&w);
		if (f != XP_FMT_TEXT)   /* text: the heads would come first */
			xp_table_begin(&t, NULL);
		xp_table_row(&t, row);
		xp_table_end(&t, 1, 1);
		if (f == XP_FMT_JSON)
			jsonw_obj_end(&w);
		fclose(out);
		ck_assert_str_eq(buf, want[f]);
		free(buf);
	}
}
END_TEST

static Suite *table_suite(void)
{
	Suite *s = suite_create("table");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, text_rows);
	tcase_add_test(tc, csv_rows);
	tcase_add_test(tc, json_rows);
	tcase_add_test(tc, per_format_columns);
	tcase_add_test(tc, null_bool_and_continued_csv);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(table_suite)
