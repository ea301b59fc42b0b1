/* stackwriter.h - the one writer of a database's names, frames and stack
 * nodes (StringIds, xp_frames, xp_stacks): each row inserted once for its
 * content and numbered after the rows the database already holds, so that
 * ingest's loader, the passes after it (DDP buckets, the backward join) and
 * merge make these rows one way. Ids are the database's own: 1, 2, ... in
 * an empty one, max(id) + 1, ... in one that has rows. One writer per
 * database at a time (two would hand out the same ids).
 *
 *   struct xp_stackwriter *w;
 *   int64_t mod, sym, frame, leaf;
 *   if (xp_stackwriter_open(db, &w) == 0) {
 *           xp_stackwriter_string(w, "/usr/lib/libc.so.6", 18, &mod, NULL);
 *           xp_stackwriter_string(w, "main", 4, &sym, NULL);
 *           xp_stackwriter_frame(w, &(struct xp_frame_key){ sym, mod, XP_FRAME_USER, 0, 0 },
 *                                &frame, NULL);
 *           xp_stackwriter_node(w, 0, frame, 1, &leaf, NULL);   // a root: depth 1
 *           xp_stackwriter_close(w);
 *   }
 *
 * Every call returns 0 or a negative errno: -ENOMEM, -EIO (the insert
 * failed: sqlite3_errmsg says why, xp_stackwriter_what which statement).
 */
#ifndef XP_STACKWRITER_H
#define XP_STACKWRITER_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

struct xp_stackwriter;

/* A frame: the columns of its xp_frames row but the id. Two frames are one
 * row when all of these are equal. */
struct xp_frame_key {
	int64_t symbol;             /* StringIds id below 2^32 (-1: dangling) */
	int64_t module;             /* StringIds id: module path, Python file or a note's group */
	int64_t kind;               /* enum xp_frame_kind (db_schema.h); its low 8 bits
				     * tell frames apart */
	int has_line;               /* a Python line (pyframe.h): its line is part of it */
	int64_t line;               /* with has_line: -1 (none known) .. 2^32 - 3 */
};

/* Which rows xp_stackwriter_made counts. */
enum xp_stackwriter_table { XP_SW_STRINGS, XP_SW_FRAMES, XP_SW_NODES };

/* The three tables must exist. 0, -EIO or -ENOMEM (*out NULL). */
int xp_stackwriter_open(sqlite3 *db, struct xp_stackwriter **out);
void xp_stackwriter_close(struct xp_stackwriter *w);      /* NULL: nothing */

/* The id of len bytes of s, inserted the first time this writer sees them
 * (*fresh, when not NULL, says so). -E2BIG for more than 1 MiB. */
int xp_stackwriter_string(struct xp_stackwriter *w, const char *s, size_t len, int64_t *id,
			  int *fresh);
/* The text of a string this writer made with xp_stackwriter_string, else NULL. */
const char *xp_stackwriter_text(const struct xp_stackwriter *w, int64_t id);

/* The id of a frame, inserted the first time this writer sees it. */
int xp_stackwriter_frame(struct xp_stackwriter *w, const struct xp_frame_key *f, int64_t *id,
			 int *fresh);

/* The node of frame under parent (0: a root), inserted the first time this
 * writer sees the pair, with the depth given (xpcorr-db(5): frames from the
 * root, this one included). */
int xp_stackwriter_node(struct xp_stackwriter *w, int64_t parent, int64_t frame, int64_t depth,
			int64_t *id, int *fresh);
/* The same under a node of the database (parent > 0), one deeper than it:
 * -ENOENT when the database has no such node. */
int xp_stackwriter_child(struct xp_stackwriter *w, int64_t parent, int64_t frame, int64_t *id);

/* A note frame (XP_FRAME_NOTE) of text in module, with a string row and a
 * frame row of its own even when the same text was written before, and
 * remembered by neither memo: DDP's buckets and the callers of backward()
 * have always made one per stack, and their ids stay as they were. */
int xp_stackwriter_new_note(struct xp_stackwriter *w, const char *text, int64_t module,
			    int64_t *frame);

/* How many rows of a table this writer inserted. */
uint64_t xp_stackwriter_made(const struct xp_stackwriter *w, enum xp_stackwriter_table t);
/* The statement whose step failed last (its SQL), for a message beside
 * sqlite3_errmsg; "" when none did. */
const char *xp_stackwriter_what(const struct xp_stackwriter *w);

#endif
