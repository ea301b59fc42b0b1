/* launchsite.c - a launch stack in a few words (launchsite.h). */
#include "launchsite.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "db_schema.h"
#include "elidename.h"
#include "launch.h"
#include "launcher.h"
#include "pyreach.h"
#include "u64map.h"

struct xp_sites {
	sqlite3_stmt *frame;
	struct xp_u64map seen;      /* stack id -> index + 1 into names */
	char **names;
	size_t n, cap;
	int64_t *kernel_names;      /* sorted StringIds ids: a frame so named is a host stub */
	size_t nkernel_names;
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

static int cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

int xp_sites_new(sqlite3 *db, struct xp_sites **out)
{
	struct xp_sites *s = calloc(1, sizeof(*s));
	sqlite3_stmt *k = NULL;
	size_t cap = 0;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	xp_u64map_init(&s->seen);
	if (sqlite3_prepare_v2(db, "SELECT n.parent, s.value, f.kind, m.value, f.symbol FROM xp_stacks n"
			       " LEFT JOIN xp_frames f ON f.id = n.frame"
			       " LEFT JOIN StringIds s ON s.id = f.symbol"
			       " LEFT JOIN StringIds m ON m.id = f.module WHERE n.id = ?",
			       -1, &s->frame, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT DISTINCT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL"
			       " WHERE demangledName IS NOT NULL", -1, &k, NULL) != SQLITE_OK) {
		xp_sites_free(s);
		return -EIO;
	}
	while (sqlite3_step(k) == SQLITE_ROW) {
		if (xp_array__reserve((void **)&s->kernel_names, &cap, s->nkernel_names + 1,
				      sizeof(*s->kernel_names), 64)) {
			sqlite3_finalize(k);
			xp_sites_free(s);
			return -ENOMEM;
		}
		s->kernel_names[s->nkernel_names++] = sqlite3_column_int64(k, 0);
	}
	sqlite3_finalize(k);
	if (s->nkernel_names)
		qsort(s->kernel_names, s->nkernel_names, sizeof(*s->kernel_names), cmp_id);
	*out = s;
	return 0;
}

/* Walks a stack from its leaf and writes its site into buf. */
static int name_site(struct xp_sites *s, int64_t id, char *buf, size_t len)
{
	char op[128] = "", first[256] = "";
	struct xp_launcher_scan who;
	enum xp_launcher w;
	unsigned guard = 0;
	int past_cuda = 0;

	xp_launcher_begin(&who);
	/* a cycle in a corrupt tree must end */
	while (id > 0 && guard++ < 4096) {
		const char *sym, *mod;
		int64_t symid;
		int kind;

		sqlite3_reset(s->frame);
		sqlite3_bind_int64(s->frame, 1, id);
		if (sqlite3_step(s->frame) != SQLITE_ROW)
			break;
		id = sqlite3_column_int64(s->frame, 0);
		sym = (const char *)sqlite3_column_text(s->frame, 1);
		kind = sqlite3_column_int(s->frame, 2);
		mod = (const char *)sqlite3_column_text(s->frame, 3);
		symid = sqlite3_column_int64(s->frame, 4);
		xp_launcher_frame(&who, kind, sym, mod);
		xp_framework_op(sym, op, sizeof(op));
		if (xp_is_python_frame(kind, sym)) {
			snprintf(buf, len, "%s%s%s", sym, op[0] ? " \u203a " : "", op);
			sqlite3_reset(s->frame);
			return 0;
		}
		if (kind == XP_FRAME_KERNEL || kind == XP_FRAME_KERNEL_UNRESOLVED || !sym)
			continue;
		/* the CUDA layers and the kernel's host stub are not the caller's code */
		if (!past_cuda && (xp_is_cuda_layer(sym, mod) ||
				   (s->nkernel_names && sqlite3_column_type(s->frame, 4) != SQLITE_NULL &&
				    bsearch(&symid, s->kernel_names, s->nkernel_names, sizeof(symid), cmp_id))))
			continue;
		past_cuda = 1;
		if (!first[0])
			xp_elide_name(sym, first, sizeof(first));
	}
	sqlite3_reset(s->frame);
	w = xp_launcher_end(&who);
	if (w == XP_LAUNCHER_AUTOGRAD || w == XP_LAUNCHER_NCCL || w == XP_LAUNCHER_XLA)
		snprintf(buf, len, "%s%s%s%s%s", xp_launcher_label(w), who.what[0] ? ": " : "",
			 who.what, op[0] ? " \u203a " : "", op);
	else
		snprintf(buf, len, "%s", first[0] ? first : "?");
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

void xp_sites_free(struct xp_sites *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		free(s->names[i]);
	free(s->names);
	free(s->kernel_names);
	xp_u64map_free(&s->seen);
	sqlite3_finalize(s->frame);
	free(s);
}
