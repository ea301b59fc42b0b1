/* test-svg.c - folded text -> flame graph SVG: widths follow counts, names
 * are escaped, bad and absurdly deep lines are skipped, not drawn. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "export/names/pyreach.h"
#include "export/render/svg.h"
#include "src/utf8.h"

static char *render_min(const char *folded, uint64_t *bad, double min_width)
{
	FILE *in = fmemopen((void *)folded, strlen(folded), "r");
	char *out = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&out, &len);
	struct xp_svg_opts opts = { .title = "t<1>", .width = 1020, .min_width = min_width };

	ck_assert_int_eq(xp_svg_render(in, &opts, o, bad), 0);
	fclose(in);
	fclose(o);
	return out;
}

static char *render(const char *folded, uint64_t *bad)
{
	return render_min(folded, bad, 0);
}

static char *render_opts(const char *folded, struct xp_svg_opts *opts)
{
	FILE *in = fmemopen((void *)folded, strlen(folded), "r");
	char *out = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&out, &len);
	uint64_t bad;

	ck_assert_int_eq(xp_svg_render(in, opts, o, &bad), 0);
	fclose(in);
	fclose(o);
	return out;
}

/* The fill of the frame named name ("rgb(r,g,b)"), from its data-fill. */
static void fill_of(const char *svg, const char *name, unsigned rgb[3])
{
	char key[128];
	const char *g, *f;

	snprintf(key, sizeof(key), "<title>%s (", name);
	ck_assert_msg((g = strstr(svg, key)) != NULL, "no frame %s", name);
	ck_assert((f = strstr(g, "fill=\"rgb(")) != NULL);
	ck_assert_int_eq(sscanf(f, "fill=\"rgb(%u,%u,%u)", &rgb[0], &rgb[1], &rgb[2]), 3);
}

/* A GPU-weighted graph: the GPU work (the frames with no callee) blue, the
 * CPU frames that launched it warm, and a legend saying so; a diff graph's
 * legend says what red and blue mean. */
START_TEST(gpu_leaves_and_legends)
{
	struct xp_svg_opts gpu = { .width = 1020, .gpu_leaves = 1 }, cpu = { .width = 1020 };
	struct xp_svg_opts diff = { .width = 1020, .differential = 1 };
	unsigned k[3], m[3];
	char *svg = render_opts("main;launch;k_alpha(float*, int) 3\nmain;[memcpy HtoD] 1\n", &gpu);

	fill_of(svg, "k_alpha(float*, int)", k);
	fill_of(svg, "launch", m);
	ck_assert_msg(k[2] >= 200 && k[0] < 100, "kernel fill %u,%u,%u", k[0], k[1], k[2]);
	fill_of(svg, "[memcpy HtoD]", k);
	ck_assert(k[2] >= 200 && k[0] < 100);
	ck_assert_msg(m[0] >= 200 && m[2] < 100, "CPU frame fill %u,%u,%u", m[0], m[1], m[2]);
	ck_assert_ptr_nonnull(strstr(svg, "id=\"legend\""));
	free(svg);
	svg = render_opts("main;launch;k_alpha 3\n", &cpu);
	fill_of(svg, "k_alpha", k);
	ck_assert(k[0] >= 200);
	ck_assert_ptr_null(strstr(svg, "id=\"legend\""));
	free(svg);
	svg = render_opts("main;a 1 3\n", &diff);
	ck_assert_ptr_nonnull(strstr(svg, "red: grew, blue: shrank"));
	free(svg);
}
END_TEST

/* 1000 px drawable: a frame of 1 in 2000 samples is half a pixel wide, not
 * drawn by default (nor its callees), drawn with a smaller --minwidth */
START_TEST(narrow_frames_need_minwidth)
{
	uint64_t bad;
	char *svg = render("big 1999\ntiny;callee 1\n", &bad);

	ck_assert_ptr_nonnull(strstr(svg, "<title>big ("));
	ck_assert_ptr_null(strstr(svg, "<title>tiny ("));
	ck_assert_ptr_null(strstr(svg, "<title>callee ("));
	free(svg);
	svg = render_min("big 1999\ntiny;callee 1\n", &bad, 0.1);
	ck_assert_ptr_nonnull(strstr(svg, "<title>tiny ("));
	ck_assert_ptr_nonnull(strstr(svg, "<title>callee ("));
	free(svg);
}
END_TEST

START_TEST(frames_sized_by_count)
{
	uint64_t bad;
	char *svg = render("main;a 3\nmain;b 1\n", &bad);

	ck_assert_uint_eq(bad, 0);
	/* 1000 px of drawing: "all" and main 100%, a 75%, b 25% */
	ck_assert_ptr_nonnull(strstr(svg, "<title>main (4 samples, 100.00%)"));
	ck_assert_ptr_nonnull(strstr(svg, "<title>a (3 samples, 75.00%)</title><rect x=\"10.0\""));
	ck_assert_ptr_nonnull(strstr(svg, "<title>b (1 samples, 25.00%)</title><rect x=\"760.0\""));
	ck_assert_ptr_nonnull(strstr(svg, "t&lt;1&gt;"));
	ck_assert_ptr_nonnull(strstr(svg, "function search()"));
	/* self-contained: the only URL is the SVG namespace name */
	ck_assert_ptr_null(strstr(strstr(svg, "http://www.w3.org/2000/svg") + 1, "http"));
	ck_assert_ptr_null(strstr(svg, "src="));
	free(svg);
}
END_TEST

START_TEST(names_escaped_bad_lines_counted)
{
	uint64_t bad;
	char *svg = render("std::vector<int>::push(\"&\");x 2\nno count here\n;;; 1x\n", &bad);

	ck_assert_uint_eq(bad, 2);
	ck_assert_ptr_nonnull(strstr(svg, "std::vector&lt;int&gt;::push(&quot;&amp;&quot;)"));
	ck_assert_ptr_null(strstr(svg, "<int>"));
	free(svg);
}
END_TEST

START_TEST(deep_line_skipped)
{
	size_t n = (XP_SVG_MAX_DEPTH + 10) * 2 + 8;
	char *line = malloc(n);
	uint64_t bad;
	char *svg;
	size_t i;

	for (i = 0; i < XP_SVG_MAX_DEPTH + 10; i++)
		memcpy(line + 2 * i, "f;", 2);
	strcpy(line + 2 * i, "g 1\n");
	svg = render(line, &bad);
	ck_assert_uint_eq(bad, 1);
	ck_assert_ptr_null(strstr(svg, "<title>g ("));
	free(svg);
	free(line);
}
END_TEST

START_TEST(invalid_utf8_replaced)
{
	/* a received run's symbol names: every byte of the SVG must be UTF-8
	 * an XML parser takes, or the whole graph fails to open */
	uint64_t bad;
	char *svg = render("py::f\xff\xfe:x.py;k\xc0\xaf\x01\xed\xa0\x80 2\n", &bad);

	ck_assert_uint_eq(bad, 0);
	ck_assert_int_eq(xp_utf8_valid(svg, strlen(svg)), 1);
	ck_assert_ptr_nonnull(strstr(svg, "<title>py::f\xef\xbf\xbd\xef\xbf\xbd:x.py ("));
	ck_assert_ptr_nonnull(strstr(svg, "<title>k\xef\xbf\xbd\xef\xbf\xbd?"));
	free(svg);
}
END_TEST

/* Python frames known from their text alone (folded stacks): lines, perf-map
 * functions; C++ names with spaces and "a::b" names are not. */
START_TEST(python_text)
{
	static const char *const yes[] = {
		"train.py:42 forward", "model.py:? Model.forward", "<frozen runpy>:88 _run_code",
		"torch/__init__.py:12 <module>", "my file.py:3 main.<locals>.<lambda>",
		"py::forward:/app/model.py",
	};
	static const char *const no[] = {
		"xp::Widget::draw(int)", "operator new(unsigned long)",
		"std::vector<int, std::allocator<int> >::push_back(int const&)",
		"f(unsigned int):12 x", "a::1 b", "libfoo.so+0x1a2b", "main", ":12 x", "x.py:12",
		"schedule_[k]", "gemm_003(float*, float*, int)",
	};
	const char *fill;
	unsigned r, g, b;
	uint64_t bad;
	char *svg;

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		ck_assert_msg(xp_is_python_text(yes[i], strlen(yes[i])), "%s", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		ck_assert_msg(!xp_is_python_text(no[i], strlen(no[i])), "%s", no[i]);
	/* drawn green, as py:: frames */
	svg = render("main;train.py:42 forward;gemm 1\n", &bad);
	fill = strstr(strstr(svg, "<title>train.py:42 forward"), "fill=\"rgb(");
	ck_assert_ptr_nonnull(fill);
	ck_assert_int_eq(sscanf(fill, "fill=\"rgb(%u,%u,%u)", &r, &g, &b), 3);
	ck_assert_uint_gt(g, r);
	free(svg);
}
END_TEST

Suite *svg_suite(void)
{
	Suite *s = suite_create("svg");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, frames_sized_by_count);
	tcase_add_test(tc, names_escaped_bad_lines_counted);
	tcase_add_test(tc, deep_line_skipped);
	tcase_add_test(tc, narrow_frames_need_minwidth);
	tcase_add_test(tc, invalid_utf8_replaced);
	tcase_add_test(tc, python_text);
	tcase_add_test(tc, gpu_leaves_and_legends);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(svg_suite)
