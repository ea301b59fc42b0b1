/* folded.c - samples, GPU work, off-CPU time or API calls -> folded
 * stacks; see folded.h. The database is grouped by (thread, stack, leaf) in
 * SQL (weights.c), so memory grows with distinct stacks, never with rows;
 * each stack's text is built from the prefix tree held in arrays indexed by
 * node place (stacktable.h). Launch stacks lose their CUDA-layer frames at the leaf end, as
 * in report, so that the kernel hangs under the caller's own code. */
#include "export/render/folded.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "src/writeerr.h"
#include "db/db_schema.h"
#include "db/launch.h"
#include "export/names/pyreach.h"
#include "db/stacktable.h"
#include "export/render/weights.h"
#include "src/textesc.h"

#define MAX_DEPTH 4096              /* frames per stack; the tree is acyclic by construction */

struct folded_tree {
	struct xp_stack_table s;    /* parent, frame and frame classes by place */
	char **frame_text;          /* by frame place: the name as it appears in a line */
	size_t ntext;               /* entries of frame_text */
};

static void tree_free(struct folded_tree *t)
{
	for (size_t i = 0; i < t->ntext; i++)
		free(t->frame_text[i]);
	free(t->frame_text);
	xp_stack_table_free(&t->s);
}

/* ';' separates frames and '\n' lines: keep names from breaking either. */
static char *frame_text(const char *name, int kernel)
{
	size_t n = strlen(name);
	char *s = malloc(n + 5);

	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++)
		s[i] = name[i] == ';' ? ':' : (name[i] == '\n' || name[i] == '\r') ? ' ' : name[i];
	strcpy(s + n, kernel ? "_[k]" : "");
	return s;
}

/* The table's load gives each frame's place (below its count of frames). */
static int keep_text(void *ctx, int64_t place, const char *symbol, const char *module,
		     unsigned frame_class)
{
	struct folded_tree *t = ctx;
	size_t cap = t->ntext;

	(void)module;
	if (place < 0)
		return 0;
	if ((size_t)place >= t->ntext) {
		if (xp_array__reserve((void **)&t->frame_text, &cap, (size_t)place + 1,
				      sizeof(char *), 256))
			return -ENOMEM;
		memset(t->frame_text + t->ntext, 0, (cap - t->ntext) * sizeof(char *));
		t->ntext = cap;
	}
	t->frame_text[place] = frame_text(symbol, frame_class & XP_FRAME_IS_KERNEL);
	return t->frame_text[place] ? 0 : -ENOMEM;
}

static int load_tree(sqlite3 *db, struct folded_tree *t)
{
	return xp_stack_table_load(db, keep_text, t, &t->s);
}

static int append(char **buf, size_t *cap, size_t *len, const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	if (xp_array__reserve((void **)buf, cap, *len + n + m + 2, 1, 256))
		return -ENOMEM;
	if (*len)
		(*buf)[(*len)++] = ';';
	memcpy(*buf + *len, s, n);
	memcpy(*buf + *len + n, suffix, m);
	*len += n + m;
	(*buf)[*len] = '\0';
	return 0;
}

struct line_in {
	int64_t node;               /* stack leaf, <= 0: none */
	const char *prefix;         /* root frame or "" */
	const char *leaf;           /* kernel or API name, or NULL */
	const char *how;            /* attribution of a GPU or API row, or NULL */
};

/* How many leaf-most frames of a launch stack (path, leaf first) go: a
 * launch stack starts at the caller's code, unless that is all there is. */
static int launch_cut(const struct folded_tree *t, const struct xp_folded_opts *o,
		      const struct line_in *in, const int64_t *path, int depth)
{
	int cut = 0;

	while (cut < depth) {
		int64_t f = t->s.frame[path[cut]];

		if (f <= 0 || f >= t->s.nframes || !((t->s.frame_class[f] & XP_FRAME_IS_KERNEL) || (t->s.frame_class[f] & XP_FRAME_IS_CUDA)))
			break;
		cut++;
	}
	if (cut == depth)
		cut = 0;
	/* nvcc's host stub carries the kernel's own name: one frame, not twins */
	if (cut < depth - 1 && in->leaf && !o->no_leaf) {
		int64_t f = t->s.frame[path[cut]];

		if (f > 0 && (size_t)f < t->ntext && t->frame_text[f] && !strcmp(t->frame_text[f], in->leaf))
			cut++;
	}
	return cut;
}

/* Text of one line (without the count) into a growing buffer. */
static int render(const struct folded_tree *t, const struct xp_folded_opts *o,
		  const struct line_in *in, char **buf, size_t *cap, size_t *len)
{
	int64_t path[MAX_DEPTH], node = xp_stack_table_node(&t->s, in->node);
	int depth = 0, frames = 0, cut = 0, err, py_outer = -1, py_inner = -1;

	/* parents always have smaller places (stacktable.h), so this ends */
	while (node > 0 && node < t->s.nnodes && depth < MAX_DEPTH) {
		path[depth++] = node;
		if (t->s.parent[node] >= node)
			break;
		node = t->s.parent[node];
	}
	depth = xp_stack_table_drop_own(&t->s, path, depth);
	if (in->how)
		cut = launch_cut(t, o, in, path, depth);
	*len = 0;
	if (o->root == XP_ROOT_PYTHON) {
		/* the outermost Python frame starts the line; the innermost one ends
		 * the part where the interpreter's frames are left out */
		int outer = -1, inner = -1;

		for (int i = depth - 1; i >= cut; i--) {
			int64_t f = t->s.frame[path[i]];

			if (f > 0 && f < t->s.nframes && (t->s.frame_class[f] & XP_FRAME_IS_PYTHON)) {
				if (outer < 0)
					outer = i;
				inner = i;
			}
		}
		if (outer < 0 && (err = append(buf, cap, len, "[no Python frame]", "")))
			return err;
		if (outer >= 0) {
			py_outer = outer;
			py_inner = inner;
		}
	} else if (*in->prefix && (err = append(buf, cap, len, in->prefix, ""))) {
		return err;
	}
	for (int i = (py_outer >= 0 ? py_outer : depth - 1); i >= cut; i--) {
		int64_t f = t->s.frame[path[i]];
		const char *s;

		/* the interpreter between two Python frames, and under the innermost
		 * one before the native code it calls */
		if (py_inner >= 0 && !o->native && f > 0 && f < t->s.nframes &&
		    ((i > py_inner && !(t->s.frame_class[f] & XP_FRAME_IS_PYTHON)) || (i < py_inner && (t->s.frame_class[f] & XP_FRAME_IS_INTERP))))
			continue;

		if (f <= 0 || (size_t)f >= t->ntext || !t->frame_text[f])
			s = "[bad frame]";
		else if (o->no_kernel && (t->s.frame_class[f] & XP_FRAME_IS_KERNEL))
			continue;
		else
			s = t->frame_text[f];
		frames++;
		if ((err = append(buf, cap, len, s, "")))
			return err;
	}
	if (!frames && (err = append(buf, cap, len, in->how && !strcmp(in->how, "none") ?
				     "[unattributed]" : in->how ? "[no launch stack]" : "[no stack]", "")))
		return err;
	if (in->leaf && !o->no_leaf) {
		char *leaf = frame_text(in->leaf, 0);

		if (!leaf)
			return -ENOMEM;
		err = append(buf, cap, len, leaf, in->how && !strcmp(in->how, "inferred") ?
			     " [inferred]" : "");
		free(leaf);
	}
	return err;
}

int xp_folded_collect(sqlite3 *db, const struct xp_folded_opts *o, struct xp_wtab *lines,
		      int side)
{
	struct folded_tree t = { 0 };
	size_t cap = 0, len;
	sqlite3_stmt *st = NULL;
	char *buf = NULL, prefix[128];
	const char *sql = xp_weight_sql(o->weight);
	int err;

	if (!sql)
		return -EINVAL;
	err = load_tree(db, &t);
	if (err)
		goto out;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		err = -EIO;
		goto out;
	}
	sqlite3_bind_int64(st, 1, o->pid);
	sqlite3_bind_int64(st, 2, o->tid);
	while ((err = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t pid = sqlite3_column_int64(st, 0), tid = sqlite3_column_int64(st, 1);
		const char *comm = (const char *)sqlite3_column_text(st, 2);
		struct line_in in = {
			.node = sqlite3_column_int64(st, 3),
			.prefix = prefix,
			.leaf = (const char *)sqlite3_column_text(st, 4),
			.how = (const char *)sqlite3_column_text(st, 5),
		};
		int64_t w = sqlite3_column_int64(st, 6), n = sqlite3_column_int64(st, 7);

		if (!comm)
			comm = "";
		if (o->comm && strcmp(o->comm, comm))
			continue;
		if (o->exact_only && in.how && strcmp(in.how, "exact"))
			continue;
		if (!*comm && in.how)
			comm = tid ? "[unnamed]" : "[no API call]";
		switch (o->root) {
		case XP_ROOT_COMM:
			snprintf(prefix, sizeof(prefix), "%s", comm);
			break;
		case XP_ROOT_PID:
			snprintf(prefix, sizeof(prefix), "%s-%" PRId64, comm, pid);
			break;
		case XP_ROOT_TID:
			snprintf(prefix, sizeof(prefix), "%s-%" PRId64 "/%" PRId64, comm, pid, tid);
			break;
		default:
			prefix[0] = '\0';
		}
		for (char *p = prefix; *p; p++)
			if (*p == ';' || *p == '\n')
				*p = ':';
		err = render(&t, o, &in, &buf, &cap, &len);
		if (err)
			goto out;
		err = xp_wtab_add(lines, side, buf, len, w > 0 ? (uint64_t)w : 0,
				  n > 0 ? (uint64_t)n : 0);
		if (err)
			goto out;
	}
	err = err == SQLITE_DONE ? 0 : -EIO;
out:
	sqlite3_finalize(st);
	free(buf);
	tree_free(&t);
	return err;
}

int xp_folded_write(sqlite3 *db, const struct xp_folded_opts *o, FILE *out)
{
	struct xp_wtab *lines = xp_wtab_new();
	struct xp_wrow *rows = NULL;
	size_t n = 0;
	int err;

	if (!lines)
		return -ENOMEM;
	err = xp_folded_collect(db, o, lines, 0);
	if (!err)
		err = xp_wtab_rows(lines, &rows, &n);
	for (size_t i = 0; !err && i < n; i++)
		if (rows[i].w[0] && fprintf(out, "%s %" PRIu64 "\n", xp_esc(rows[i].key), rows[i].w[0]) < 0)
			err = xp_write_errno();         /* the caller sees ferror(out) */
	free(rows);
	xp_wtab_free(lines);
	return err;
}
