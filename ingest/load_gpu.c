/* load_gpu.c - pass 3 of the load: one gpu-<pid>.xpr through gpu_load.c,
 * lent the loader's string table, stack tree and read budget; what the
 * GPU loader reports becomes the run's warnings (a damaged stream keeps its
 * valid part unless strict, a stream without a clean end says what is lost).
 */
#include "ingest/loader.h"

/* xp_gpu_sink_ops for the GPU loader: our string table and stack tree; an
 * id or the loader's -errno (-EIO: a database failure, which stops the load
 * rather than being taken as damage in the stream). */
static int64_t sink_string(void *ctx, const char *s)
{
	int64_t id;
	int err = xp_loader_intern_str(ctx, s, &id);

	return err ? err : id;
}

static int64_t sink_stack(void *ctx, uint32_t pid, uint64_t ts, const uint64_t *kips,
			  unsigned nk, const uint64_t *uips, unsigned nu)
{
	uint64_t ips[2 * XP_MAX_STACK_DEPTH];
	int64_t id;
	int err;

	if (nk > XP_MAX_STACK_DEPTH || nu > XP_MAX_STACK_DEPTH)
		return -EBADMSG;
	memcpy(ips, kips, nk * sizeof(*ips));
	memcpy(ips + nk, uips, nu * sizeof(*ips));
	err = xp_loader_stack_id(ctx, pid, ts, ips, nk, nu, NULL, &id);
	return err ? err : id;
}

static struct xp_read_budget *sink_budget(void *ctx)
{
	return &((struct loader *)ctx)->budget;
}

/* Whether the library wrote its clean-end status into the stream: without
 * it (SIGKILL, a crash past the signal handlers) the tail was never flushed. */
static int gpu_stream_stopped(sqlite3 *db, const char *file)
{
	sqlite3_stmt *s;
	int found = 1;      /* a failed query claims nothing */

	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM xp_gpu_status WHERE source = ? AND code = ?",
			       -1, &s, NULL) != SQLITE_OK)
		return found;
	sqlite3_bind_text(s, 1, file, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 2, XP_GPU_ST_STOPPED);
	if (sqlite3_step(s) == SQLITE_ROW)
		found = sqlite3_column_int(s, 0) > 0;
	sqlite3_finalize(s);
	return found;
}

/* The CUPTI side: gpu-<pid>.xpr into the nsys-named GPU tables. A damaged
 * stream keeps its valid part and warns, unless strict. */
int xp_loader_gpu_stream(struct loader *L, const char *path, const char *file)
{
	static const struct xp_gpu_sink_ops ops = { sink_string, sink_stack, sink_budget };
	struct xp_gpu_load_stats st = { 0 };
	char why[XP_LOAD_MSG_LEN];
	int err;

	err = xp_gpu_load_stream(L->db, path, &ops, L, &st, why, sizeof(why));
	L->res->gpu_streams++;
	if (err == -ENOMEM || err == -EIO || err == -EPROTO || (err && L->o->strict)) {
		snprintf(L->res->error, sizeof(L->res->error), "%s", why);
		return err;
	}
	if (st.bad_times) {
		int w = xp_loader_warn(L, file, 0, "%s: %" PRIu64 " records whose start and end are"
				       " more than 104 days apart (the first: %" PRId64 " .. %" PRId64
				       " ns) were skipped", file, st.bad_times, st.bad_start, st.bad_end);

		if (w)
			return w;
	}
	if (err)
		return xp_loader_warn(L, file, 0, "%s; the records before it are kept%s", why,
			    xp_loader_budget_hint(L, err));
	return st.records && !gpu_stream_stopped(L->db, file)
		? xp_loader_warn(L, file, 0, "%s: no clean end (the process was killed or died before its exit"
		       " handlers ran): its GPU records since the library's last periodic flush"
		       " (at most %d ms) are missing; the %" PRIu64 " records before are kept", file,
		       XP_GPU_FLUSH_PERIOD_MS, st.records)
		: 0;
}
