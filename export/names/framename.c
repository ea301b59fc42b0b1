/* framename.c - see framename.h. */
#include "export/names/framename.h"

#include <stdio.h>
#include <string.h>

#include "db/db_schema.h"
#include "db/pypath.h"
#include "export/names/elidename.h"

int xp_frame_perfmap(const struct xp_frame_row *fr, const char **name, size_t *nlen,
		     const char **path)
{
	if (fr->kind != XP_FRAME_JIT || !fr->sym || strncmp(fr->sym, "py::", 4) || !fr->sym[4])
		return 0;
	*name = fr->sym + 4;
	*nlen = strcspn(*name, ":");
	*path = (*name)[*nlen] ? *name + *nlen + 1 : NULL;
	return 1;
}

/* The path of a perf-map frame "py::NAME:PATH" (its name in *name, *nlen),
 * or NULL. */
static const char *perfmap_path(const struct xp_frame_row *fr, const char **name, size_t *nlen)
{
	const char *path;

	return xp_frame_perfmap(fr, name, nlen, &path) ? path : NULL;
}

void xp_frame_name(const struct xp_frame_row *fr, char *out, size_t len)
{
	const char *name, *path, *base;
	size_t nlen;
	char fn[224];

	path = perfmap_path(fr, &name, &nlen);

	if (!fr->sym) {
		snprintf(out, len, "?");
	} else if (path) {
		base = strrchr(path, '/');
		snprintf(out, len, "%s:? %.*s", base ? base + 1 : path, (int)nlen, name);
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
	const char *name, *path;
	size_t nlen;

	if ((path = perfmap_path(fr, &name, &nlen)))
		return xp_pypath_is_library(path);
	return fr->kind == XP_FRAME_PYTHON && fr->module && xp_pypath_is_library(fr->module);
}
