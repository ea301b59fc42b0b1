/* framename.h - a frame in the words every host cause of the idle view
 * uses (issue 39: one naming everywhere): a Python line as it is
 * ("train.py:42 step"); CPython's perf-map frame "py::load:/app/data.py",
 * which has no line, "data.py:? load" (the form of a line not known,
 * pyframe.h); a native function "function (module)" with its name
 * shortened (elidename.h); an address without a symbol
 * ("libcuda.so.1+0x5066f4") alone, its module already in it.
 *   char s[256];
 *   xp_frame_name(&fr, s, sizeof(s));
 *   if (xp_frame_is_python(&fr) && xp_frame_python_library(&fr)) ... a library's line
 */
#ifndef XP_FRAMENAME_H
#define XP_FRAMENAME_H

#include <stddef.h>

#include "db/stackwalk.h"

/* A perf-map frame "py::NAME:PATH" (or "py::NAME"): 1 with its name in
 * *name (*nlen long, not terminated) and its path in *path (NULL if none);
 * 0 when fr is not one. */
int xp_frame_perfmap(const struct xp_frame_row *fr, const char **name, size_t *nlen,
		     const char **path);
void xp_frame_name(const struct xp_frame_row *fr, char *out, size_t len);
/* A Python frame (a line, or a perf-map frame) of a library's file
 * (site-packages, the standard library): 1, else 0. */
int xp_frame_python_library(const struct xp_frame_row *fr);

#endif
