/* svg.h - render folded stacks as a self-contained interactive flame graph
 * (SVG with inline script, no network): click a frame to zoom, "Reset zoom",
 * Ctrl-F or "Search" to highlight frames matching a regular expression and
 * see the share of samples they account for. In the manner of flamegraph.pl.
 * Differential input ("stack base new", o.differential) is drawn with the
 * new counts, red where a frame grew and blue where it shrank.
 *
 *   struct xp_svg_opts o = { .title = "CPU samples", .width = 1200 };
 *   uint64_t bad;
 *   xp_svg_render(fopen("cpu.folded", "r"), &o, stdout, &bad);
 */
#ifndef XP_SVG_H
#define XP_SVG_H

#include <stdint.h>
#include <stdio.h>

struct xp_svg_opts {
	const char *title;          /* NULL: "Flame Graph" */
	int width;                  /* pixels; 0: 1200 */
	const char *unit;           /* what a count is: NULL "samples", "ns" */
	double min_width;           /* frames narrower than this many pixels are not drawn
				     * (nor their callees); 0: XP_SVG_MIN_WIDTH, raised to
				     * keep XP_SVG_MAX_FRAMES */
	int differential;           /* lines are "stack base new": width new,
	                             * red grew, blue shrank */
	int gpu_leaves;             /* each stack ends in GPU work (kernel, copy, set):
				     * frames with no callee are drawn in the GPU colour */
};

/* 0, -ENOMEM, -E2BIG (more than XP_SVG_MAX_NODES distinct frames), or the
 * errno of a failed write (-EIO when errno is unset). Lines that are not "stack count" are skipped and counted. */
int xp_svg_render(FILE *in, const struct xp_svg_opts *o, FILE *out,
		  uint64_t *bad_lines);

#define XP_SVG_MAX_NODES (16u << 20)
/* A frame under a pixel cannot be seen or clicked; drawing them made the
 * PyTorch fixture's CPU graph 62.7 MB (189,038 frames), past what a browser
 * opens in reasonable time. flamegraph.pl's --minwidth, in pixels. */
#define XP_SVG_MIN_WIDTH 1.0
/* ... and above a few ten thousand frames a browser takes half a minute to
 * draw the SVG (27k frames: 27 s in headless Chromium; 2.8k: 0.9 s): without
 * --minwidth the narrowest frames beyond this many are not drawn either. */
#define XP_SVG_MAX_FRAMES 10000
#define XP_SVG_LINE_MAX (1u << 20)
#define XP_SVG_MAX_DEPTH 4096        /* frames per stack */

#endif
