/* folded.c - samples -> folded stacks; see folded.h.
 * The database is grouped by (thread, stack) in SQL, so memory grows with
 * distinct stacks, never with samples; each stack's text is built from the
 * prefix tree held in arrays indexed by node id. */
#include "folded.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "db_schema.h"
#include "strtab.h"

#define MAX_DEPTH 4096              /* frames per stack; the tree is acyclic by construction */

struct tree {
	int64_t *parent, *frame;    /* by node id */
	int64_t nnodes;
	char **frame_text;          /* by frame id: the name as it appears in a line */
	uint8_t *frame_kernel;
	int64_t nframes;
};

static void tree_free(struct tree *t)
{
	for (int64_t i = 0; i < t->nframes; i++)
		free(t->frame_text ? t->frame_text[i] : NULL);
	free(t->frame_text);
	free(t->frame_kernel);
	free(t->parent);
	free(t->frame);
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

static int64_t max_id(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = 0;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int load_tree(sqlite3 *db, struct tree *t)
{
	sqlite3_stmt *st = NULL;
	int64_t n;

	n = max_id(db, "SELECT coalesce(max(id), 0) FROM xp_frames");
	if (n < 0)
		return -EIO;
	t->nframes = n + 1;
	t->frame_text = calloc((size_t)t->nframes, sizeof(char *));
	t->frame_kernel = calloc((size_t)t->nframes, 1);
	n = max_id(db, "SELECT coalesce(max(id), 0) FROM xp_stacks");
	if (n < 0)
		return -EIO;
	t->nnodes = n + 1;
	t->parent = calloc((size_t)t->nnodes, sizeof(int64_t));
	t->frame = calloc((size_t)t->nnodes, sizeof(int64_t));
	if (!t->frame_text || !t->frame_kernel || !t->parent || !t->frame)
		return -ENOMEM;
	if (sqlite3_prepare_v2(db, "SELECT f.id, s.value, f.kind FROM xp_frames f"
			       " JOIN StringIds s ON s.id = f.symbol", -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);
		int kind = sqlite3_column_int(st, 2);
		const char *name = (const char *)sqlite3_column_text(st, 1);

		if (id <= 0 || id >= t->nframes || !name)
			continue;
		t->frame_kernel[id] = kind == XP_FRAME_KERNEL || kind == XP_FRAME_KERNEL_UNRESOLVED;
		t->frame_text[id] = frame_text(name, t->frame_kernel[id]);
		if (!t->frame_text[id]) {
			sqlite3_finalize(st);
			return -ENOMEM;
		}
	}
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(db, "SELECT id, parent, frame FROM xp_stacks", -1, &st, NULL)
	    != SQLITE_OK)
		return -EIO;
	while (sqlite3_step(st) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(st, 0);

		if (id <= 0 || id >= t->nnodes)
			continue;
		t->parent[id] = sqlite3_column_int64(st, 1);
		t->frame[id] = sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	return 0;
}

/* Text of one line (without the count) into a growing buffer. */
static int render(const struct tree *t, const struct xp_folded_opts *o, int64_t node,
		  const char *prefix, char **buf, size_t *cap, size_t *len)
{
	int64_t path[MAX_DEPTH];
	int depth = 0, frames = 0;

	/* parents always have smaller ids (created first), so this ends */
	while (node > 0 && node < t->nnodes && depth < MAX_DEPTH) {
		path[depth++] = node;
		if (t->parent[node] >= node)
			break;
		node = t->parent[node];
	}
	*len = 0;
	for (int i = depth; i >= -1; i--) {
		const char *s;
		size_t n;

		if (i == depth)
			s = prefix;
		else if (i >= 0) {
			int64_t f = t->frame[path[i]];

			if (f <= 0 || f >= t->nframes || !t->frame_text[f])
				s = "[bad frame]";
			else if (o->no_kernel && t->frame_kernel[f])
				continue;
			else
				s = t->frame_text[f];
			frames++;
		} else
			s = frames ? NULL : "[no stack]";
		if (!s || !*s)
			continue;
		n = strlen(s);
		if (*len + n + 2 > *cap) {
			size_t c = (*cap + n + 2) * 2;
			char *p = realloc(*buf, c);

			if (!p)
				return -ENOMEM;
			*buf = p;
			*cap = c;
		}
		if (*len)
			(*buf)[(*len)++] = ';';
		memcpy(*buf + *len, s, n);
		*len += n;
		(*buf)[*len] = '\0';
	}
	return 0;
}

struct line {
	const char *text;
	uint64_t count;
};

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct line *)a)->text, ((const struct line *)b)->text);
}

int xp_folded_write(sqlite3 *db, const struct xp_folded_opts *o, FILE *out)
{
	struct tree t = { 0 };
	struct xp_strtab *lines = xp_strtab_new();
	uint64_t *counts = NULL;
	size_t counts_cap = 0, cap = 0, len;
	struct line *sorted = NULL;
	sqlite3_stmt *st = NULL;
	char *buf = NULL, prefix[128];
	int err;

	if (!lines)
		return -ENOMEM;
	err = load_tree(db, &t);
	if (err)
		goto out;
	if (sqlite3_prepare_v2(db,
		"SELECT x.pid, x.tid, coalesce(n.value, ''), x.stack_id, count(*)"
		" FROM xp_samples x"
		" LEFT JOIN ThreadNames tn ON tn.globalTid = (x.pid << 24) | x.tid"
		" LEFT JOIN StringIds n ON n.id = tn.nameId"
		" WHERE (?1 < 0 OR x.pid = ?1) AND (?2 < 0 OR x.tid = ?2)"
		" GROUP BY x.pid, x.tid, x.stack_id", -1, &st, NULL) != SQLITE_OK) {
		err = -EIO;
		goto out;
	}
	sqlite3_bind_int64(st, 1, o->pid);
	sqlite3_bind_int64(st, 2, o->tid);
	while ((err = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t pid = sqlite3_column_int64(st, 0), tid = sqlite3_column_int64(st, 1);
		const char *comm = (const char *)sqlite3_column_text(st, 2);
		int64_t id;
		int fresh;

		if (o->comm && strcmp(o->comm, comm))
			continue;
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
		err = render(&t, o, sqlite3_column_int64(st, 3), prefix, &buf, &cap, &len);
		if (err)
			goto out;
		err = xp_strtab_intern(lines, buf, len, &id, &fresh);
		if (err)
			goto out;
		if ((size_t)id >= counts_cap) {
			size_t c = counts_cap ? counts_cap * 2 : 1024;
			uint64_t *p = realloc(counts, c * sizeof(*p));

			if (!p) {
				err = -ENOMEM;
				goto out;
			}
			memset(p + counts_cap, 0, (c - counts_cap) * sizeof(*p));
			counts = p;
			counts_cap = c;
		}
		counts[id] += (uint64_t)sqlite3_column_int64(st, 4);
	}
	if (err != SQLITE_DONE) {
		err = -EIO;
		goto out;
	}
	err = 0;
	sorted = malloc((xp_strtab_count(lines) + 1) * sizeof(*sorted));
	if (!sorted) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < xp_strtab_count(lines); i++) {
		sorted[i].text = xp_strtab_get(lines, (int64_t)i + 1);
		sorted[i].count = counts[i + 1];
	}
	qsort(sorted, xp_strtab_count(lines), sizeof(*sorted), cmp_line);
	for (size_t i = 0; i < xp_strtab_count(lines); i++)
		if (fprintf(out, "%s %" PRIu64 "\n", sorted[i].text, sorted[i].count) < 0) {
			err = -EIO;
			break;
		}
out:
	sqlite3_finalize(st);
	free(sorted);
	free(counts);
	free(buf);
	xp_strtab_free(lines);
	tree_free(&t);
	return err;
}
