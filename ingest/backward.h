/* backward.h - backward kernels at the forward line that made their node.
 *
 * The injection library writes PyTorch's autograd state at each launch
 * (XP_REC_AUTOGRAD, runfmt_py.h): on the forward thread the number its next
 * autograd node will take, on autograd's engine threads the node being run
 * (its number and the forward thread that made it). PyTorch makes the node
 * before the op launches its kernels, so the first launch of that thread
 * with seq_next - 1 == the node's number is the forward op that made it;
 * its stack is the forward line. Each backward launch then gets that stack
 * with a note frame under its leaf, "‹backward: AddmmBackward0›"
 * (XP_FRAME_NOTE, module "[autograd]"); a backward launch whose forward
 * launch is not known keeps its own stack, under the same note, and its
 * row in xp_autograd says why. A backward launch at a forward line has the
 * line that called backward() as its outer frame, a note "[backward() at
 * train.py:88 train_step]" above the forward stack (backward_caller.c).
 * A node whose forward op launched nothing (a view) takes the Python line
 * of the launches around its number when they share it, or the line they
 * both ran under, said so in its note (backward_bracket.c).
 *
 *   struct xp_agstore *s = xp_agstore_new();
 *   xp_agstore_record(s, stream_pid, h);     // pass 1, every record: 1 taken
 *   xp_agstore_save(db, s);                   // after the launches: tables
 *   n = xp_autograd_join(db);                 // after the indexes: launches re-stacked
 */
#ifndef XP_BACKWARD_H
#define XP_BACKWARD_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

#include "src/runfmt.h"

struct xp_agstore;

struct xp_agstore *xp_agstore_new(void);   /* NULL: out of memory */
void xp_agstore_free(struct xp_agstore *s);
/* 1: an autograd record, kept; 0: another type; -EBADMSG: malformed;
 * -ENOMEM. */
int xp_agstore_record(struct xp_agstore *s, uint32_t stream_pid, const struct xp_record_header *h);
/* Fills xp_autograd and xp_autograd_processes (db/gpu_schema.c makes them,
 * also when they stay empty, so a reader can tell a run without autograd
 * records from an old database): 0 or -EIO. */
int xp_agstore_save(sqlite3 *db, const struct xp_agstore *s);
/* Joins backward launches to their forward launches and re-stacks them;
 * how many backward launches got a forward stack, or -EIO / -ENOMEM. */
int xp_autograd_join(sqlite3 *db);
/* The lines that called backward() (backward_caller.c): for the join. */
struct xp_bwcallers;
struct xp_stackwriter;
/* Every launch of a forward thread made inside backward() or autograd.grad,
 * with a note frame "[backward() at train.py:88 train_step]" (module id
 * module, written by the join's sw) of the Python line that called it: 0,
 * -EIO or -ENOMEM. */
int xp_bwcallers_load(sqlite3 *db, struct xp_stackwriter *sw, int64_t module,
		      struct xp_bwcallers **out);
/* The note of the latest such call of pid in [after, ts], 0 if none. */
int64_t xp_bwcallers_at(const struct xp_bwcallers *c, int64_t pid, int64_t after, int64_t ts);
void xp_bwcallers_free(struct xp_bwcallers *c);
/* The forward line of a node whose forward op launched nothing, from the
 * launches around its number (backward_bracket.c). */
struct xp_bwbracket {
	sqlite3_stmt *before, *after, *walk, *sym;
};
struct xp_bwbracket_line {
	int64_t frames[256];        /* the Python frames it was made under, root first */
	int n;
	int exact;                  /* 1: at the innermost one; 0: somewhere under it */
	int64_t before_ts;          /* the launch before it: its time */
	char note[200];             /* "ViewBackward0, between two launches of this line" */
};
int xp_bwbracket_open(sqlite3 *db, struct xp_bwbracket *b);   /* 0 or -EIO */
void xp_bwbracket_close(struct xp_bwbracket *b);
/* Node number seq of forward thread thread in process pid: 1 and out
 * filled, 0 when the launches around it share no Python frame, -EIO. */
int xp_bwbracket_find(struct xp_bwbracket *b, int64_t pid, int64_t thread, int64_t seq,
		      const char *node, struct xp_bwbracket_line *out);
/* "AddmmBackward0" of a type name as the ABI mangles it
 * ("N5torch8autograd9generated14AddmmBackward0E"): the innermost name,
 * template arguments left out; the mangled text itself when it is not a
 * name this reads; a name the recorder cut (64 bytes) ends in "…"
 * ("ScaledDotProductEfficientAttentionBa…"). */
void xp_autograd_node_name(const char *mangled, char *out, size_t len);

#endif
