/* idle_cause.h - the causes --by idle finds (idle_cause.c), for any stretch
 * of one device: what its GPU ran, and in its idle gaps what the host did
 * (a Python line, a blocking call, launch to start, a wait off CPU), for
 * --by wait (view_wait.c), which compares two ranks' stretches.
 *
 *   struct xp_idle *I;
 *   xp_idle_open(db, pid, &I);               // pid 0: every process
 *   xp_idle_use(I, tl);                       // a device of a timeline set
 *   xp_idle_span(I, a, b, on_busy, ctx);      // gaps' causes; other segments to on_busy
 *   for (i = 0; xp_idle_row(I, i, &row); i++) ...
 *   xp_idle_close(I);
 */
#ifndef XP_IDLE_CAUSE_H
#define XP_IDLE_CAUSE_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "export/analysis/timeline.h"

struct xp_idle;

/* One cause of a span's idle time. where: interned, one pointer per text
 * for the engine's life (so a pointer is a key); kind: a small number,
 * estimated kinds reported as the kind they estimate. */
struct xp_idle_row {
	int kind;
	const char *key, *label;    /* "host", "host running" */
	const char *where;
	int64_t ns;
};

/* The engine over a run's database (its samples, stacks, sites), the
 * samples of process pid alone unless 0. 0 or -errno. */
int xp_idle_open(sqlite3 *db, uint32_t pid, struct xp_idle **out);
void xp_idle_close(struct xp_idle *I);
/* The device spans are taken on next: its process's blocking calls and
 * off-CPU waits loaded. 0 or -errno. */
int xp_idle_use(struct xp_idle *I, const struct xp_tl *tl);
/* The causes of [a, b) of the device: its idle gaps attributed as --by idle
 * does (rows), every other segment (compute, communication, memory, waiting
 * for a rank) handed to busy. Replaces the rows of the last span. */
int xp_idle_span(struct xp_idle *I, int64_t a, int64_t b, xp_tl_segment_fn busy, void *ctx);
/* The causes of [a, b) of thread gtid of the device's process, named as
 * --by idle names a gap's host time (blocking calls, waits off CPU, its
 * samples) whatever the GPU did meanwhile: a host's way to a collective
 * it waited in on the host (host_coll.h). Replaces the last span's rows. */
int xp_idle_host_span(struct xp_idle *I, int64_t gtid, int64_t a, int64_t b);
/* Row i of the last span into *row: 1, or 0 past the last. */
int xp_idle_row(struct xp_idle *I, size_t i, struct xp_idle_row *row);
/* The label ("host running", key 0) or key ("host", key 1) of a row's
 * kind; NULL for a kind not the engine's. */
const char *xp_idle_kind(int kind, int key);
/* text interned in the engine (the same pointer for the same text); NULL:
 * out of memory. */
const char *xp_idle_intern(struct xp_idle *I, const char *text);
/* The launch site of a stack, interned ("(no launch stack)" for none). */
const char *xp_idle_site(struct xp_idle *I, int64_t stack);

#endif
