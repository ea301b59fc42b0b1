/* dbtask.c - a read on a thread of its own (dbtask.h). */
#include "db/dbtask.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "db/rundb.h"

struct xp_db_task {
	sqlite3 *db;                /* the caller's */
	xp_db_task_fn fn;
	void *arg;
	pthread_t thread;
	int running;                /* started, not yet joined */
	int opened;                 /* the thread had its connection: rc is fn's */
	int rc;
};

static void *run(void *p)
{
	struct xp_db_task *t = p;
	sqlite3 *again;

	if (xp_db_open_again(t->db, &again) == 0) {
		t->opened = 1;
		t->rc = t->fn(again, t->arg);
		sqlite3_close(again);
	}
	return NULL;
}

int xp_db_task_start(sqlite3 *db, xp_db_task_fn fn, void *arg, struct xp_db_task **out)
{
	struct xp_db_task *t = calloc(1, sizeof(*t));

	*out = t;
	if (!t)
		return -ENOMEM;
	*t = (struct xp_db_task){ .db = db, .fn = fn, .arg = arg };
	t->running = pthread_create(&t->thread, NULL, run, t) == 0;
	return 0;
}

int xp_db_task_join(struct xp_db_task *t)
{
	int rc;

	if (!t)
		return 0;
	if (t->running)
		pthread_join(t->thread, NULL);
	rc = t->opened ? t->rc : t->fn(t->db, t->arg);
	free(t);
	return rc;
}

void xp_db_task_drop(struct xp_db_task *t)
{
	if (!t)
		return;
	if (t->running)
		pthread_join(t->thread, NULL);
	free(t);
}
