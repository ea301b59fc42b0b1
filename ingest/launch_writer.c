/* launch_writer.c - XP_REC_LAUNCH records of cpu.xpr into xp_launches,
 * each validated before a field is read; its stack goes through the
 * caller's stack tree (ops->intern_stack). Beside the GPU loader because
 * the launch rows are the CPU side of the GPU tables' correlation ids.
 */
#include <errno.h>
#include <stdlib.h>

#include "db/launch.h"
#include "ingest/gpu_loader.h"
#include "src/runfile.h"

/* XP_REC_LAUNCH -> xp_launches */
struct xp_launch_writer {
	sqlite3 *db;
	const struct xp_gpu_sink_ops *ops;
	void *ctx;
	sqlite3_stmt *ins;
};

int xp_launch_writer_open(struct xp_launch_writer **out, sqlite3 *db,
			  const struct xp_gpu_sink_ops *ops, void *ctx)
{
	struct xp_launch_writer *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (!w)
		return -ENOMEM;
	*w = (struct xp_launch_writer){ .db = db, .ops = ops, .ctx = ctx };
	if (sqlite3_prepare_v2(db, XP_LAUNCH_INSERT_SQL, -1, &w->ins, NULL) != SQLITE_OK) {
		free(w);
		return -EIO;
	}
	*out = w;
	return 0;
}

int xp_launch_writer_add(struct xp_launch_writer *w, const struct xp_record_header *h)
{
	const struct xp_launch *l = xp_record_payload(h);
	const uint64_t *ips;
	const char *why;
	int64_t stack = -1;

	if (h->type != XP_REC_LAUNCH || h->size < sizeof(*h) || xp_record_check(h, &why) < 0)
		return -EBADMSG;
	ips = xp_record_stack_ips(h, sizeof(*l), &l->stack);
	if (!ips)
		return -EBADMSG;
	if (l->stack.kernel_depth + l->stack.user_depth > 0) {
		stack = w->ops->intern_stack(w->ctx, l->pid, l->ts, ips, l->stack.kernel_depth,
					     ips + l->stack.kernel_depth, l->stack.user_depth);
		if (stack < 0)
			return stack < -4095 ? -EIO : (int)stack;
	}
	xp_launch_bind(w->ins, l, stack);
	return xp_gpuload_step(w->ins);
}

void xp_launch_writer_close(struct xp_launch_writer *w)
{
	if (!w)
		return;
	sqlite3_finalize(w->ins);
	free(w);
}
