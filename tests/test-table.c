/* test-table.c - a declared table (export/report/table.h) in text, csv and json:
 * widths and rules, the last field moved or cut at --width, --top's line,
 * absent cells, columns of one format only, a call column; a view's parts
 * (rows holding nested tables, per-format orders, nested json objects,
 * grouped heads, lone fields and keyed rows, text lines, caps). */
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

/* What a table wrote: run fn on a table of c in fmt (json inside an object). */
static char *written(enum xp_report_format f, const struct xp_col *c, size_t n,
		     void (*fn)(struct xp_table *t))
{
	struct jsonw w;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct xp_table t = { .cols = c, .n = n, .fmt = f, .out = out, .json = &w };

	ck_assert_ptr_nonnull(out);
	jsonw_init(&w, out);
	if (f == XP_FMT_JSON)
		jsonw_obj_begin(&w);
	fn(&t);
	if (f == XP_FMT_JSON)
		jsonw_obj_end(&w);
	fclose(out);
	return buf;
}

/* A sheet of parents and their children: csv's Section rows in csv's own
 * order under one header, json's children nested in their parent with a
 * nested object per row, text's left-aligned name and a rule over two
 * columns one space apart; an empty lazy child writes nothing in text. */
static const struct xp_col sheet[] = {
	{ .head = "Section", .kind = XP_COL_TEXT },
	{ .head = "Name", .json = "name", .kind = XP_COL_TEXT, .width = -6, .rule = 4 },
	{ .head = "Min", .json = "min", .obj = "ns", .kind = XP_COL_INT, .width = 3, .rule = 9 },
	{ .head = "Max", .json = "max", .obj = "ns", .kind = XP_COL_INT, .width = 3, .gap = 1,
	  .rule = -1 },
	{ .head = "Note", .kind = XP_COL_TEXT, .rule = 4 },
};
static const unsigned char sheet_text[] = { 1, 2, 3, 4 }, sheet_csv[] = { 0, 2, 3, 1 },
	sheet_json[] = { 1, 2, 3 };

static void sheet_row(struct xp_table *t, const char *sec, const char *name, int64_t lo, int64_t hi)
{
	xp_table_row_open(t, (struct xp_cell[]){ { .s = sec }, { .s = name }, { .i = lo }, { .i = hi },
						 { .s = "x" } });
}

static void sheet_fill(struct xp_table *t)
{
	struct xp_table kid;

	t->text_order = sheet_text;
	t->text_n = sizeof(sheet_text);
	t->csv_order = sheet_csv;
	t->csv_n = sizeof(sheet_csv);
	t->json_order = sheet_json;
	t->json_n = sizeof(sheet_json);
	t->key = "parents";
	t->tight = 1;
	xp_table_begin(t, "** T:\n  sub");
	kid = *t;
	kid.key = "kids";
	kid.lead = "   ";
	kid.no_heads = 1;
	kid.csv_continues = 1;
	kid.text_lazy = 1;
	sheet_row(t, "parent", "a", 1, 20);
	xp_table_begin(&kid, NULL);
	xp_table_row(&kid, (struct xp_cell[]){ { .s = "kid" }, { .s = "b" }, { .i = 3 }, { .i = 4 },
					       { .s = "y" } });
	xp_table_end(&kid, 1, 1);
	xp_table_row_close(t);
	sheet_row(t, "parent", "c", 5, 6);
	xp_table_begin(&kid, "never");
	xp_table_end(&kid, 0, 0);
	xp_table_row_close(t);
	xp_table_end(t, 2, 2);
}

START_TEST(nested_sheet)
{
	const char *want[] = {
		"** T:\n  sub\n"
		" Name    Min Max  Note\n"
		" ----    ---------  ----\n"
		" a         1  20  x\n"
		"   b         3   4  y\n"
		" c         5   6  x\n",
		"\"Section\",\"Min\",\"Max\",\"Name\"\n"
		"\"parent\",1,20,\"a\"\n"
		"\"kid\",3,4,\"b\"\n"
		"\"parent\",5,6,\"c\"\n",
		"{\"parents\":[{\"name\":\"a\",\"ns\":{\"min\":1,\"max\":20},"
		"\"kids\":[{\"name\":\"b\",\"ns\":{\"min\":3,\"max\":4}}]},"
		"{\"name\":\"c\",\"ns\":{\"min\":5,\"max\":6},\"kids\":[]}]}",
	};

	for (int f = XP_FMT_TEXT; f <= XP_FMT_JSON; f++) {
		char *s = written(f, sheet, 5, sheet_fill);

		ck_assert_str_eq(s, want[f]);
		free(s);
	}
}
END_TEST

/* A view's parts beside its rows: json-only fields, a keyed row after the
 * array, text-only lines, a capped text table with its "more" line named
 * and led, a table with no column in a format writing nothing there, and
 * a row's bytes capped before fitting. */
static const struct xp_col parts[] = {
	{ .head = "N", .json = "n", .kind = XP_COL_INT, .width = 2, .rule = 2 },
	{ .head = "What", .json = "what", .kind = XP_COL_TEXT, .rule = 4 },
};
static const struct xp_col totals[] = {
	{ .json = "total", .kind = XP_COL_INT, .json_only = 1 },
};

static void parts_fill(struct xp_table *t)
{
	struct xp_table tt = *t;

	tt.cols = totals;
	tt.n = 1;
	xp_table_fields(&tt, (struct xp_cell[]){ { .i = 9 } });
	xp_table_text(t, "** %s:", "Parts");
	t->capped = 1;
	t->cap = 2;
	t->more = "things";
	t->more_lead = "  ";
	t->more_cut = 1;
	t->text_max = 10;
	t->no_split = 1;
	xp_table_begin(t, NULL);
	for (int i = 0; xp_table_wants(t, (size_t)i) && i < 5; i++)
		xp_table_row(t, (struct xp_cell[]){ { .i = i }, { .s = "abcdefghij" } });
	xp_table_end(t, 0, 0);
	xp_table_row_key(t, "none", (struct xp_cell[]){ { .i = 7 }, { .s = "rest" } });
	xp_table_more(t, 2, 5);
	xp_table_begin(&tt, NULL);         /* json only: nothing elsewhere */
	xp_table_row(&tt, (struct xp_cell[]){ { .i = 1 } });
	xp_table_end(&tt, 1, 1);
}

START_TEST(view_parts)
{
	const char *want[] = {
		"** Parts:\n"
		"  N  What\n"
		" --  ----\n"
		"  0  abcd\n"
		"  1  abcd\n"
		"  7  rest\n"
		"  (3 more things; --top 0 shows all)\n",
		"\"N\",\"What\"\n0,\"abcdefghij\"\n1,\"abcdefghij\"\n2,\"abcdefghij\"\n"
		"3,\"abcdefghij\"\n4,\"abcdefghij\"\n7,\"rest\"\n",
		"{\"total\":9,\"rows\":[{\"n\":0,\"what\":\"abcdefghij\"},{\"n\":1,\"what\":\"abcdefghij\"},"
		"{\"n\":2,\"what\":\"abcdefghij\"},{\"n\":3,\"what\":\"abcdefghij\"},"
		"{\"n\":4,\"what\":\"abcdefghij\"}],\"none\":{\"n\":7,\"what\":\"rest\"},"
		"\"rows\":[{\"total\":1}]}",
	};

	for (int f = XP_FMT_TEXT; f <= XP_FMT_JSON; f++) {
		char *s = written(f, parts, 2, parts_fill);

		ck_assert_str_eq(s, want[f]);
		free(s);
	}
}
END_TEST

/* A call column with a writer per format (a list in one csv field). */
static int list_text(struct xp_table *t, const struct xp_cell *c)
{
	xp_table_text(t, "      items %lld", (long long)c->i);
	return 0;
}

static int list_csv(struct xp_table *t, const struct xp_cell *c)
{
	fprintf(t->out, "%lld; %lld", (long long)c->i, (long long)c->i + 1);
	return 0;
}

static int list_json(struct xp_table *t, const struct xp_cell *c)
{
	jsonw_arr_begin(t->json);
	jsonw_int(t->json, c->i);
	jsonw_arr_end(t->json);
	return 0;
}

static const struct xp_col doc_cols[] = {
	{ .json = "report", .kind = XP_COL_TEXT, .json_only = 1 },
	{ .json = "count", .kind = XP_COL_UINT, .json_only = 1 },
};
static const struct xp_col list_cols[] = {
	{ .head = "K", .json = "k", .kind = XP_COL_INT, .width = 1, .rule = 1 },
	{ .head = "Items", .json = "items", .kind = XP_COL_CALL, .text_call = list_text,
	  .csv_call = list_csv, .json_call = list_json },
};

/* The report's document around a table whose call column writes each
 * format its own way, a keyed object holding a nested table, and a footer
 * note: wrapped in text, to the notes stream in csv, not in json. */
static void doc_fill(struct xp_table *t)
{
	struct xp_table d = *t, l = *t;

	d.cols = doc_cols;
	d.n = 2;
	l.cols = list_cols;
	l.n = 2;
	l.key = "list";
	xp_table_doc_begin(&d, (struct xp_cell[]){ { .s = "doc" }, { .u = 2, .absent = 1 } });
	xp_table_begin(&l, NULL);
	xp_table_row(&l, (struct xp_cell[]){ { .i = 1 }, { .i = 5 } });
	xp_table_end(&l, 1, 1);
	l.key = "inner";
	xp_table_row_key_open(&d, "outer", (struct xp_cell[]){ { .s = "o" }, { .u = 3 } });
	xp_table_begin(&l, NULL);
	xp_table_end(&l, 0, 0);
	xp_table_row_close(&d);
	xp_table_note(t, "Losses: %s", "none recorded in this time range, nor elsewhere");
	ck_assert_int_eq(xp_table_doc_end(&d), 0);
}

START_TEST(document_calls_notes)
{
	const char *want[] = {
		" K\n -\n 1\n      items 5\n"
		" K\n -\n"
		"Losses: none recorded in this\n    time range, nor elsewhere\n",
		"\"K\",\"Items\"\n1,\"5; 6\"\n\"K\",\"Items\"\n",
		"{\"report\":\"doc\",\"list\":[{\"k\":1,\"items\":[5]}],"
		"\"outer\":{\"report\":\"o\",\"count\":3,\"inner\":[]}}\n",
	};

	for (int f = XP_FMT_TEXT; f <= XP_FMT_JSON; f++) {
		char *notes = NULL;
		size_t nlen = 0;
		FILE *nf = open_memstream(&notes, &nlen);
		struct jsonw w;
		char *buf = NULL;
		size_t len = 0;
		FILE *out = open_memstream(&buf, &len);
		struct xp_table t = { .fmt = f, .out = out, .json = &w, .width = 32, .notes = nf };

		doc_fill(&t);
		fclose(out);
		fclose(nf);
		ck_assert_str_eq(buf, want[f]);
		ck_assert_str_eq(notes, f == XP_FMT_CSV ? "Losses: none recorded in this time range,"
				 " nor elsewhere\n" : "");
		free(buf);
		free(notes);
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
	tcase_add_test(tc, nested_sheet);
	tcase_add_test(tc, view_parts);
	tcase_add_test(tc, document_calls_notes);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(table_suite)
