/* dbtask.h - a read of a run's database on a thread of its own, over a
 * second read-only connection (xp_db_open_again: opened and checked as the
 * first was), while the caller goes on over its own: for reads as long as
 * what the caller does meanwhile (a view's samples, the timeline's CUDA
 * calls, the kernel names a stack walk needs). Where no second connection
 * opens (a database just ingested, one in memory) or no thread starts, the
 * read runs over the caller's connection when it is joined.
 *
 *   struct xp_db_task *t;
 *   if (xp_db_task_start(db, read_calls, &calls, &t) == 0) {
 *           ... other queries over db ...
 *           rc = xp_db_task_join(t);         // read_calls' result; t is gone
 *   }
 */
#ifndef XP_DBTASK_H
#define XP_DBTASK_H

#include <sqlite3.h>

struct xp_db_task;

/* A read: 0 or a negative errno. It touches nothing the caller touches
 * before the join but arg. */
typedef int (*xp_db_task_fn)(sqlite3 *db, void *arg);

/* Starts fn(a second connection, arg). 0 or -ENOMEM. */
int xp_db_task_start(sqlite3 *db, xp_db_task_fn fn, void *arg, struct xp_db_task **out);
/* Waits for the read (or makes it, over db) and frees t: fn's result.
 * NULL: 0. */
int xp_db_task_join(struct xp_db_task *t);
/* The read is not wanted any more (an error came first): waits for a
 * thread still reading, makes no read over db, and frees t. NULL: none. */
void xp_db_task_drop(struct xp_db_task *t);

#endif
