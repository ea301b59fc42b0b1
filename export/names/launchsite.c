/* launchsite.c - a launch stack in a few words (launchsite.h). */
#include "export/names/launchsite.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "db/db_schema.h"
#include "export/names/elidename.h"
#include "export/names/framename.h"
#include "db/launch.h"
#include "export/names/launcher.h"
#include "export/names/pyreach.h"
#include "db/pypath.h"
#include "db/stackwalk.h"
#include "db/waitnote.h"
#include "src/u64map.h"

struct xp_sites {
	struct xp_stackwalk *walk;
	struct xp_u64map seen;      /* stack id -> index + 1 into names */
	char **names;
	size_t n, cap;
	int own_python;             /* xp_sites_prefer_own */
	int host_names;             /* xp_sites_host_names */
};

int xp_framework_op(const char *sym, char *op, size_t len)
{
	const char *name, *end, *under;

	if (!sym || strncmp(sym, "at::_ops::", 10))
		return 0;
	name = sym + 10;
	end = strstr(name, "::");
	if (!end || (strncmp(end, "::call(", 7) && strncmp(end, "::redispatch(", 13)))
		return 0;
	under = memrchr(name, '_', (size_t)(end - name));
	if (under && under > name && under[1] >= 'A' && under[1] <= 'Z')
		snprintf(op, len, "aten::%.*s.%.*s", (int)(under - name), name, (int)(end - under - 1),
			 under + 1);
	else
		snprintf(op, len, "aten::%.*s", (int)(end - name), name);
	return 1;
}

int xp_sites_new(sqlite3 *db, struct xp_sites **out)
{
	struct xp_sites *s = calloc(1, sizeof(*s));
	int rc;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	xp_u64map_init(&s->seen);
	if ((rc = xp_stackwalk_open(db, &s->walk)) < 0) {
		xp_sites_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

struct xp_stackwalk *xp_sites_walk(struct xp_sites *s)
{
	return s->walk;
}

/* A native frame's name into out: shortened, or with host_names as the
 * idle view's host causes are named. */
static void native_name(const struct xp_sites *s, const struct xp_frame_row *fr, char *out,
			size_t len)
{
	if (s->host_names)
		xp_frame_name(fr, out, len);
	else
		xp_elide_name(fr->sym, out, len);
}

/* Walks a stack from its leaf and writes its site into buf. */
static int name_site(struct xp_sites *s, int64_t id, char *buf, size_t len)
{
	char op[128] = "", first[256] = "", own[256] = "", pylib[256] = "", py[256];
	struct xp_launcher_scan who;
	struct xp_frame_row fr;
	enum xp_launcher w;
	int past_cuda = 0;
	const char *waited = "";

	xp_launcher_begin(&who);
	while (xp_stackwalk_next(s->walk, &id, &fr)) {
		const char *sym = fr.sym;

		/* a runtime thread's launch placed at the line that waited
		 * (ingest/waitlines.h): said, not taken for the line's own */
		if (xp_wait_note(fr.kind, sym))
			waited = " \u2039launched while it waited\u203a";
		xp_launcher_frame(&who, fr.kind, sym, fr.module);
		xp_framework_op(sym, op, sizeof(op));
		if (xp_is_python_frame(fr.kind, sym)) {
			if (s->host_names) {
				xp_frame_name(&fr, py, sizeof(py));
				sym = py;
			}
			/* a library's line is kept only until the program's own comes */
			if (s->own_python && fr.module && xp_pypath_is_library(fr.module)) {
				if (!pylib[0])
					snprintf(pylib, sizeof(pylib), "%s", sym);
				continue;
			}
			snprintf(buf, len, "%s%s%s%s%s%s", sym, op[0] && !s->own_python ? " \u203a " : "",
				 s->own_python ? "" : op, who.backward[0] ? " " : "", who.backward, waited);
			xp_stackwalk_done(s->walk);
			return 0;
		}
		if (fr.kind == XP_FRAME_KERNEL || fr.kind == XP_FRAME_KERNEL_UNRESOLVED ||
		    fr.kind == XP_FRAME_NOTE || !sym)
			continue;
		/* the CUDA layers and the kernel's host stub are not the caller's code */
		if (!past_cuda && (xp_is_cuda_layer(sym, fr.module) || fr.host_stub))
			continue;
		past_cuda = 1;
		if (!first[0])
			native_name(s, &fr, first, sizeof(first));
		/* a native program's own code, below cuBLAS and the like, names it */
		if (!own[0] && !xp_is_library_frame(sym, fr.module))
			native_name(s, &fr, own, sizeof(own));
	}
	xp_stackwalk_done(s->walk);
	w = xp_launcher_end(&who);
	if (pylib[0])
		snprintf(buf, len, "%s%s%s%s", pylib, who.backward[0] ? " " : "", who.backward, waited);
	else if (w == XP_LAUNCHER_AUTOGRAD || w == XP_LAUNCHER_NCCL || w == XP_LAUNCHER_XLA)
		snprintf(buf, len, "%s%s%s%s%s", xp_launcher_label(w), who.what[0] ? ": " : "",
			 who.what, op[0] ? " \u203a " : "", op);
	else
		snprintf(buf, len, "%s", own[0] ? own : first[0] ? first : "?");
	return 0;
}

const char *xp_sites_get(struct xp_sites *s, int64_t stack_id)
{
	uint64_t *slot;
	char buf[512];
	int fresh;

	(void)fresh;
	if (xp_u64map_upsert(&s->seen, (uint64_t)stack_id, 0, &slot, &fresh))
		return NULL;
	if (*slot)
		return s->names[*slot - 1];
	if (name_site(s, stack_id, buf, sizeof(buf)) ||
	    xp_array__reserve((void **)&s->names, &s->cap, s->n + 1, sizeof(*s->names), 64) ||
	    !(s->names[s->n] = strdup(buf))) {
		return NULL;    /* the slot stays 0: tried again next time */
	}
	*slot = ++s->n;
	return s->names[s->n - 1];
}

void xp_sites_prefer_own(struct xp_sites *s)
{
	s->own_python = 1;
}

void xp_sites_host_names(struct xp_sites *s)
{
	s->host_names = 1;
}

void xp_sites_free(struct xp_sites *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->names[i]);
	free(s->names);
	xp_u64map_free(&s->seen);
	xp_stackwalk_close(s->walk);
	free(s);
}
