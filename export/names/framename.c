/* framename.c - see framename.h. */
#include "export/names/framename.h"

#include <stdio.h>
#include <string.h>

#include "db/db_schema.h"
#include "db/pypath.h"
#include "export/names/elidename.h"

/* The path of a perf-map frame "py::NAME:PATH", or NULL. */
static const char *perfmap_path(const struct xp_frame_row *fr, const char **colon)
{
	if (fr->kind != XP_FRAME_JIT || !fr->sym || strncmp(fr->sym, "py::", 4) ||
	    !(*colon = strchr(fr->sym + 4, ':')))
		return NULL;
	return *colon + 1;
}

void xp_frame_name(const struct xp_frame_row *fr, char *out, size_t len)
{
	const char *colon, *path = perfmap_path(fr, &colon), *base;
	char fn[224];

	if (!fr->sym) {
		snprintf(out, len, "?");
	} else if (path) {
		base = strrchr(path, '/');
		snprintf(out, len, "%s:? %.*s", base ? base + 1 : path, (int)(colon - fr->sym - 4),
			 fr->sym + 4);
	} else if (fr->kind == XP_FRAME_PYTHON || fr->kind == XP_FRAME_UNRESOLVED ||
		   !fr->module || !*fr->module) {
		snprintf(out, len, "%s", fr->sym);
	} else {
		base = strrchr(fr->module, '/');
		xp_elide_name(fr->sym, fn, sizeof(fn));
		snprintf(out, len, "%s (%s)", fn, base ? base + 1 : fr->module);
	}
}

int xp_frame_python_library(const struct xp_frame_row *fr)
{
	const char *colon, *path = perfmap_path(fr, &colon);

	if (path)
		return xp_pypath_is_library(path);
	return fr->kind == XP_FRAME_PYTHON && fr->module && xp_pypath_is_library(fr->module);
}
