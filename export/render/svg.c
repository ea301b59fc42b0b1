/* svg.c - folded stacks -> flame graph SVG; see svg.h.
 * The folded lines are merged into a tree (frames with the same path are one
 * node), children sorted by name as flamegraph.pl does, and each node drawn
 * as a rectangle whose width is its share of all samples. Positions are
 * also written as fractions (data-x, data-w) for the zoom script.
 * Differential input ("stack base new", difffolded.pl's format) draws the
 * new profile, each frame red where its time grew and blue where it shrank,
 * the deeper the colour the larger the change. */
#include "export/render/svg.h"
#include "src/utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "src/writeerr.h"
#include "export/names/pyreach.h"
#include "src/strtab.h"
#include "src/u64map.h"

#define FRAME_H 16
#define PAD_TOP 40
#define PAD_BOTTOM 30
#define PAD_SIDE 10

struct node {
	int64_t name;               /* strtab id */
	uint32_t parent;
	uint32_t first_child;       /* index into child list after build */
	uint32_t nchildren;
	uint64_t total;             /* samples here and below (new, in a diff) */
	uint64_t base;              /* a diff's base samples here and below */
};

struct flame {
	struct xp_strtab *names;
	struct xp_u64map edges;     /* (parent, name) -> node index */
	struct node *nodes;
	size_t count, cap;
	uint32_t *children;         /* grouped by parent */
	int max_depth;
	int diff;                   /* lines carry two counts */
	double max_delta;           /* largest |new - base| of a frame */
};

static int add_node(struct flame *f, uint32_t parent, int64_t name, uint32_t *out)
{
	uint64_t *slot;
	int fresh, err = xp_u64map_upsert(&f->edges, parent, (uint64_t)name, &slot, &fresh);

	if (err)
		return err;
	if (!fresh) {
		*out = (uint32_t)*slot;
		return 0;
	}
	if (f->count >= XP_SVG_MAX_NODES)
		return -E2BIG;
	if (xp_array__reserve((void **)&f->nodes, &f->cap, f->count + 1, sizeof(*f->nodes), 1024))
		return -ENOMEM;
	f->nodes[f->count] = (struct node){ .name = name, .parent = parent };
	*slot = f->count;
	*out = (uint32_t)f->count++;
	return 0;
}

/* The number after the last space of line, which is cut there; 0 or -1. */
static int cut_count(char *line, uint64_t *count)
{
	char *sp = strrchr(line, ' '), *end;

	if (!sp || sp == line)
		return -1;
	errno = 0;
	*count = strtoull(sp + 1, &end, 10);
	if (errno || end == sp + 1 || (*end && *end != '\n') || sp[1] == '-')
		return -1;
	*sp = '\0';
	return 0;
}

/* "a;b;c 12" (or "a;b;c 10 12" in a diff) -> adds 12 along the path a, b, c.
 * 1 added, 0 bad line. */
static int add_line(struct flame *f, char *line)
{
	char *frame, *save = NULL;
	uint32_t node = 0;
	uint64_t count, base = 0;
	int depth = 0, err;

	if (cut_count(line, &count) || (f->diff && cut_count(line, &base)))
		return 0;
	for (char *p = line; *p; p++)
		depth += *p == ';';
	if (depth >= XP_SVG_MAX_DEPTH)
		return 0;   /* bounds the drawing recursion */
	depth = 0;
	f->nodes[0].total += count;
	f->nodes[0].base += base;
	for (frame = strtok_r(line, ";", &save); frame; frame = strtok_r(NULL, ";", &save)) {
		int64_t name;
		int fresh;

		err = xp_strtab_intern(f->names, frame, strlen(frame), &name, &fresh);
		if (!err)
			err = add_node(f, node, name, &node);
		if (err)
			return err;
		f->nodes[node].total += count;
		f->nodes[node].base += base;
		if (++depth > f->max_depth)
			f->max_depth = depth;
	}
	return 1;
}

static const char *name_of(const struct flame *f, uint32_t i)
{
	return i == 0 ? "all" : xp_strtab_get(f->names, f->nodes[i].name);
}

static const struct flame *sort_ctx;

static int cmp_child(const void *a, const void *b)
{
	return strcmp(name_of(sort_ctx, *(const uint32_t *)a),
		      name_of(sort_ctx, *(const uint32_t *)b));
}

static int build_children(struct flame *f)
{
	uint32_t *fill;

	f->children = malloc((f->count + 1) * sizeof(uint32_t));
	fill = calloc(f->count + 1, sizeof(uint32_t));
	if (!f->children || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (size_t i = 1; i < f->count; i++)
		f->nodes[f->nodes[i].parent].nchildren++;
	for (size_t i = 0, pos = 0; i < f->count; i++) {
		f->nodes[i].first_child = (uint32_t)pos;
		pos += f->nodes[i].nchildren;
	}
	for (size_t i = 1; i < f->count; i++) {
		struct node *p = &f->nodes[f->nodes[i].parent];

		f->children[p->first_child + fill[f->nodes[i].parent]++] = (uint32_t)i;
	}
	free(fill);
	sort_ctx = f;
	for (size_t i = 0; i < f->count; i++)
		if (f->nodes[i].nchildren > 1)
			qsort(f->children + f->nodes[i].first_child, f->nodes[i].nchildren,
			      sizeof(uint32_t), cmp_child);
	return 0;
}

static void xml_escape(FILE *out, const char *s)
{
	for (; *s; s++) {
		if ((unsigned char)*s >= 0x80) {
			/* names come from received runs: invalid UTF-8 is U+FFFD */
			s = xp_utf8_fput(out, s) - 1;
			continue;
		}
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			/* control characters are not allowed in XML 1.0 */
			fputc((unsigned char)*s < 0x20 ? '?' : *s, out);
		}
	}
}

/* A stable warm colour per name; kernel frames orange, Python green, GPU
 * work (the leaves of a GPU-weighted graph) blue. */
static void colour(const char *name, int gpu, char *buf, size_t len)
{
	size_t n = strlen(name);
	uint64_t h = n;
	unsigned v1, v2;

	for (size_t i = 0; i < n; i++)
		h = xp_hash64(h ^ (unsigned char)name[i]);
	v1 = (unsigned)(h % 1000);
	v2 = (unsigned)((h >> 20) % 1000);
	if (gpu)
		snprintf(buf, len, "rgb(%u,%u,%u)", 40 + v1 % 40, 120 + v2 % 60, 200 + v1 % 50);
	else if (n > 4 && !strcmp(name + n - 4, "_[k]"))
		snprintf(buf, len, "rgb(%u,%u,%u)", 220 + v1 % 35, 110 + v2 % 60, 20);
	else if (xp_is_python_text(name, n))
		snprintf(buf, len, "rgb(%u,%u,%u)", 60 + v1 % 60, 180 + v2 % 60, 60);
	else
		snprintf(buf, len, "rgb(%u,%u,%u)", 205 + v1 % 50, v2 % 230, 40 + v1 % 30);
}

/* White for no change, to full red (grew) or blue (shrank) at the largest
 * change of any frame, as flamegraph.pl draws differential graphs. */
static void diff_colour(const struct flame *f, const struct node *n, char *buf, size_t len)
{
	double d = (double)n->total - (double)n->base;
	unsigned v = f->max_delta > 0 ? (unsigned)(210.0 * (1.0 - fabs(d) / f->max_delta) + 0.5) : 210;

	if (d > 0)
		snprintf(buf, len, "rgb(255,%u,%u)", v, v);
	else if (d < 0)
		snprintf(buf, len, "rgb(%u,%u,255)", v, v);
	else
		snprintf(buf, len, "rgb(250,250,250)");
}

static const char script[] =
"<script type=\"text/ecmascript\"><![CDATA[\n"
"'use strict';\n"
"/* One listener for all frames, labels written by the renderer: a graph of\n"
"   tens of thousands of frames opens without touching each one. */\n"
"var svg, frames = null, details, matchedtxt, W, zoomed = null;\n"
"function all() { if (!frames) frames = document.querySelectorAll('g.f'); return frames; }\n"
"function frameOf(e) { return e.target.closest ? e.target.closest('g.f') : null; }\n"
"function nameOf(g) { var t = g.querySelector('title').textContent, i = t.lastIndexOf(' ('); return i < 0 ? t : t.substr(0, i); }\n"
"function init() {\n"
"  svg = document.documentElement;\n"
"  details = document.getElementById('details'); matchedtxt = document.getElementById('matched');\n"
"  W = +svg.getAttribute('data-inner');\n"
"  svg.addEventListener('click', function (e) { var g = frameOf(e); if (g) zoom(g); });\n"
"  svg.addEventListener('mouseover', function (e) { var g = frameOf(e); if (g) details.textContent = g.querySelector('title').textContent; });\n"
"  svg.addEventListener('mouseout', function (e) { if (frameOf(e)) details.textContent = ' '; });\n"
"  document.getElementById('reset').addEventListener('click', function (e) { e.stopPropagation(); reset(); });\n"
"  document.getElementById('search').addEventListener('click', function (e) { e.stopPropagation(); search(); });\n"
"  window.addEventListener('keydown', function (e) {\n"
"    if ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); search(); }\n"
"    if (e.key === 'Escape') { clearSearch(); }\n"
"  });\n"
"}\n"
"function fit(g, px) {\n"
"  var t = g.querySelector('text'), name = nameOf(g);\n"
"  var n = Math.floor((px - 6) / 7);\n"
"  t.textContent = n < 3 ? '' : (name.length <= n ? name : name.substr(0, n - 2) + '..');\n"
"}\n"
"function layout(x0, w0, d0) {\n"
"  all().forEach(function (g) {\n"
"    var x = +g.getAttribute('data-x'), w = +g.getAttribute('data-w'), d = +g.getAttribute('data-d');\n"
"    var r = g.querySelector('rect'), t = g.querySelector('text'), nx, nw;\n"
"    var inside = x >= x0 - 1e-12 && x + w <= x0 + w0 + 1e-12;\n"
"    var ancestor = d < d0 && x <= x0 + 1e-12 && x + w >= x0 + w0 - 1e-12;\n"
"    if (!inside && !ancestor) { g.style.display = 'none'; return; }\n"
"    g.style.display = '';\n"
"    nx = ancestor ? 0 : (x - x0) / w0; nw = ancestor ? 1 : w / w0;\n"
"    r.setAttribute('x', 10 + nx * W); r.setAttribute('width', Math.max(nw * W - 0.5, 0.1));\n"
"    t.setAttribute('x', 13 + nx * W);\n"
"    g.style.opacity = ancestor ? 0.6 : 1;\n"
"    fit(g, nw * W);\n"
"  });\n"
"}\n"
"function zoom(g) {\n"
"  zoomed = g;\n"
"  layout(+g.getAttribute('data-x'), +g.getAttribute('data-w'), +g.getAttribute('data-d'));\n"
"  document.getElementById('reset').style.opacity = 1;\n"
"}\n"
"function reset() { zoomed = null; layout(0, 1, -1); document.getElementById('reset').style.opacity = 0.3; }\n"
"function clearSearch() {\n"
"  all().forEach(function (g) {\n"
"    var r = g.querySelector('rect');\n"
"    if (r.hasAttribute('data-fill')) { r.setAttribute('fill', r.getAttribute('data-fill')); r.removeAttribute('data-fill'); }\n"
"  });\n"
"  matchedtxt.textContent = ' ';\n"
"}\n"
"function search() {\n"
"  var term = prompt('Search frames (regular expression):', '');\n"
"  if (term === null) return;\n"
"  clearSearch(); if (term === '') return;\n"
"  var re; try { re = new RegExp(term); } catch (e) { alert('bad expression: ' + e.message); return; }\n"
"  var spans = [];\n"
"  all().forEach(function (g) {\n"
"    if (!re.test(nameOf(g))) return;\n"
"    var r = g.querySelector('rect');\n"
"    r.setAttribute('data-fill', r.getAttribute('fill')); r.setAttribute('fill', 'rgb(230,0,230)');\n"
"    spans.push([+g.getAttribute('data-x'), +g.getAttribute('data-x') + +g.getAttribute('data-w')]);\n"
"  });\n"
"  /* nested matches count once: merge overlapping spans */\n"
"  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
"  var total = 0, end = -1;\n"
"  spans.forEach(function (s) { if (s[0] >= end) { total += s[1] - s[0]; end = s[1]; } else if (s[1] > end) { total += s[1] - end; end = s[1]; } });\n"
"  matchedtxt.textContent = 'Matched: ' + (100 * total).toFixed(1) + '%';\n"
"}\n"
"window.addEventListener('load', init);\n"
"]]></script>\n";

struct emit {
	const struct flame *f;
	FILE *out;
	double inner;               /* drawable width in pixels */
	double min_width;           /* pixels: narrower frames are not drawn */
	const char *unit;
	int height;
	int gpu_leaves;
};

/* The frame's label as the script's fit() makes it: as many 7-pixel
 * characters as fit, cut with "..", none under three. */
static void label(FILE *out, const char *name, double px)
{
	long fits = (long)((px - 6) / 7);
	size_t chars = 0, i, cut = 0;
	char buf[1024];

	if (fits < 3)
		return;
	for (i = 0; name[i]; i++)
		if (((unsigned char)name[i] & 0xc0) != 0x80 && ++chars == (size_t)fits - 1)
			cut = i;        /* where fits - 2 characters end */
	if (chars <= (size_t)fits) {
		xml_escape(out, name);
		return;
	}
	snprintf(buf, sizeof(buf), "%.*s..", (int)(cut < sizeof(buf) - 3 ? cut : sizeof(buf) - 3), name);
	xml_escape(out, buf);
}

static int cmp_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x < y) - (x > y);
}

/* The default minimum width: XP_SVG_MIN_WIDTH pixels, raised so that at most
 * XP_SVG_MAX_FRAMES frames are drawn (the widest; a frame is never wider
 * than its caller, so the drawn ones form whole towers). */
static double budget_width(const struct flame *f, double inner)
{
	uint64_t *totals, kth;
	double px;

	if (f->count <= XP_SVG_MAX_FRAMES || !f->nodes[0].total)
		return XP_SVG_MIN_WIDTH;
	if (!(totals = malloc(f->count * sizeof(*totals))))
		return XP_SVG_MIN_WIDTH;
	for (size_t i = 0; i < f->count; i++)
		totals[i] = f->nodes[i].total;
	qsort(totals, f->count, sizeof(*totals), cmp_desc);
	/* one more than the frame at the budget: ties at the edge go too */
	kth = totals[XP_SVG_MAX_FRAMES] + 1;
	free(totals);
	px = (double)kth / (double)f->nodes[0].total * inner;
	return px > XP_SVG_MIN_WIDTH ? px : XP_SVG_MIN_WIDTH;
}

static void emit_node(const struct emit *e, uint32_t i, double x, int depth)
{
	const struct flame *f = e->f;
	const struct node *n = &f->nodes[i];
	double w = (double)n->total / (double)f->nodes[0].total;
	const char *name = name_of(f, i);
	char fill[32];
	double cx = x;

	if (w * e->inner < e->min_width)
		return;
	if (f->diff)
		diff_colour(f, n, fill, sizeof(fill));
	else
		colour(name, e->gpu_leaves && !n->nchildren, fill, sizeof(fill));
	/* the name once, in the title (the tooltip; the script reads it back) */
	fprintf(e->out, "<g class=\"f\" data-x=\"%.9g\" data-w=\"%.9g\" data-d=\"%d\"><title>",
		x, w, depth);
	xml_escape(e->out, name);
	if (f->diff && n->base)
		fprintf(e->out, " (%" PRIu64 " %s, %.2f%%; base %" PRIu64 ", %+.2f%%)", n->total,
			e->unit, 100.0 * w, n->base, 100.0 * ((double)n->total - (double)n->base) /
			(double)n->base);
	else if (f->diff)
		fprintf(e->out, " (%" PRIu64 " %s, %.2f%%; new)", n->total, e->unit, 100.0 * w);
	else
		fprintf(e->out, " (%" PRIu64 " %s, %.2f%%)", n->total, e->unit, 100.0 * w);
	fprintf(e->out, "</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\""
		" fill=\"%s\"/><text x=\"%.1f\" y=\"%d\">", PAD_SIDE + x * e->inner,
		e->height - PAD_BOTTOM - (depth + 1) * FRAME_H, w * e->inner - 0.5 > 0.1 ?
		w * e->inner - 0.5 : 0.1, FRAME_H - 1, fill, PAD_SIDE + 3 + x * e->inner,
		e->height - PAD_BOTTOM - depth * FRAME_H - 4);
	label(e->out, name, w * e->inner);
	fputs("</text></g>\n", e->out);
	for (uint32_t c = 0; c < n->nchildren; c++) {
		uint32_t child = f->children[n->first_child + c];

		emit_node(e, child, cx, depth + 1);
		cx += (double)f->nodes[child].total / (double)f->nodes[0].total;
	}
}

/* The folded lines of in into f's tree (node 0: "all"), the children
 * lists and the largest difference. 0 or -errno. */
static int read_folded(struct flame *f, FILE *in, uint64_t *bad_lines)
{
	char *line = NULL;
	size_t cap = 0;
	uint32_t root;
	ssize_t n;
	int err = add_node(f, UINT32_MAX, 0, &root);

	while (!err && (n = getline(&line, &cap, in)) >= 0) {
		int r;

		if ((size_t)n > XP_SVG_LINE_MAX || n <= 1) {
			*bad_lines += n > 1;
			continue;
		}
		r = add_line(f, line);
		if (r < 0)
			err = r;
		else if (r == 0)
			(*bad_lines)++;
	}
	free(line);
	if (!err)
		err = build_children(f);
	for (size_t i = 0; !err && i < f->count; i++) {
		double d = fabs((double)f->nodes[i].total - (double)f->nodes[i].base);

		if (d > f->max_delta)
			f->max_delta = d;
	}
	return err;
}

/* The document's head: size, style, script, title, the controls, the legend. */
static void svg_head(const struct emit *e, const struct xp_svg_opts *o, int width)
{
	FILE *out = e->out;

	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
		" xmlns=\"http://www.w3.org/2000/svg\" data-width=\"%d\" data-inner=\"%g\">\n"
		"<style>text { font-family: monospace; font-size: 12px; fill: #000; pointer-events: none; }"
		" g.f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; }"
		" .ui { cursor: pointer; pointer-events: auto; }</style>\n%s"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		"<text x=\"%d\" y=\"24\" style=\"font-size: 17px\" text-anchor=\"middle\">",
		width, e->height, width, e->height, width, e->inner, script, width / 2);
	xml_escape(out, o->title ? o->title : "Flame Graph");
	fprintf(out, "</text>\n<text id=\"reset\" class=\"ui\" x=\"%d\" y=\"24\" style=\"opacity: 0.3\">"
		"Reset zoom</text>\n<text id=\"search\" class=\"ui\" x=\"%d\" y=\"24\""
		" text-anchor=\"end\">Search (Ctrl-F)</text>\n"
		"<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"> </text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n",
		PAD_SIDE, width - PAD_SIDE, width - PAD_SIDE, e->height - 10, PAD_SIDE, e->height - 10);
	/* what the colours mean, where they mean something */
	if (e->f->diff || o->gpu_leaves)
		fprintf(out, "<text id=\"legend\" x=\"%d\" y=\"37\" text-anchor=\"middle\""
			" style=\"font-size: 11px\">%s</text>\n", width / 2, e->f->diff ?
			"width: the second run; red: grew, blue: shrank (the deeper, the more); white: same" :
			"blue: GPU work (kernels, copies, sets); green: Python; above them the CPU stacks"
			" that launched it");
}

int xp_svg_render(FILE *in, const struct xp_svg_opts *o, FILE *out, uint64_t *bad_lines)
{
	struct flame f = { 0 };
	struct emit e;
	int width = o->width > 0 ? o->width : 1200, err;

	*bad_lines = 0;
	f.diff = o->differential;
	xp_u64map_init(&f.edges);
	f.names = xp_strtab_new();
	if (!f.names)
		return -ENOMEM;
	err = read_folded(&f, in, bad_lines);
	if (err)
		goto out;
	e.f = &f;
	e.out = out;
	e.inner = width - 2 * PAD_SIDE;
	e.min_width = o->min_width > 0 ? o->min_width : budget_width(&f, e.inner);
	e.unit = o->unit ? o->unit : "samples";
	e.gpu_leaves = o->gpu_leaves;
	e.height = (f.max_depth + 1) * FRAME_H + PAD_TOP + PAD_BOTTOM;
	svg_head(&e, o, width);
	if (f.nodes[0].total)
		emit_node(&e, 0, 0.0, 0);
	fprintf(out, "</svg>\n");
	if (ferror(out))
		err = xp_write_errno();         /* the caller sees ferror(out) */
out:
	free(f.nodes);
	free(f.children);
	xp_u64map_free(&f.edges);
	xp_strtab_free(f.names);
	return err;
}
