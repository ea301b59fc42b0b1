/* load_stream.c - one CPU-side stream (cpu.xpr, launch-PID.xpr,
 * pyframes.xpr) read in one pass: opened (a launch stream that cannot be
 * read is skipped with a warning), each record to records.c, a malformed
 * record or a damaged tail a warning unless strict, the run's read budget
 * shared by the streams, and the counts of each kind (pass 2).
 */
#include "ingest/loader.h"

/* Which of the run's limits stopped a reader, and how to raise it. */
const char *xp_loader_budget_hint(struct loader *L, int err)
{
	if (err != -E2BIG)
		return "";
	if (L->budget.over == XP_BUDGET_EXPAND)
		snprintf(L->budget_hint, sizeof(L->budget_hint), " (the run's budget: compressed blocks"
			 " decode to at most %" PRIu32 " times the bytes read from disk, beyond the"
			 " first %llu MiB and %llu records of the run; --max-expand or XPCORR_MAX_EXPAND"
			 " raises it)", L->budget.expand, XP_READ_EXPAND_FREE_BYTES >> 20,
			 XP_READ_EXPAND_FREE_RECORDS);
	else
		snprintf(L->budget_hint, sizeof(L->budget_hint), " (the run's budget: %" PRIu64
			 " records in all its streams; --max-records or XPCORR_MAX_RECORDS raises it)",
			 L->max_records);
	return L->budget_hint;
}

/* Opens a stream: 0 with *out set, 1 when it is skipped with a warning (a
 * launch-PID.xpr that is a link, a FIFO, a directory or damaged is one
 * process's launch stacks, not the run, as gpu-PID.xpr), or an error. */
static int open_stream(struct loader *L, const char *path, const char *file, int pass,
		       struct xp_reader **out)
{
	struct xp_reader *r = NULL;
	int err;

	*out = NULL;
	err = xp_reader_open(&r, path);
	if (!err) {
		*out = r;
		return 0;
	}
	if (strcmp(file, "cpu.xpr") && !L->o->strict && err != -ENOMEM && err != -EPROTO) {
		if (pass == 1)
			err = r ? xp_loader_warn(L, file, 0, "%s at offset 0: %s; the stream is skipped", path,
				       xp_reader_error(r))
				: xp_loader_warn(L, file, 0, "cannot read %s: %s; the stream is skipped", path,
				       xp_run_file_strerror(err));
		xp_reader_close(r);
		return pass == 1 && err ? err : 1;
	}
	if (r && err != -ENOMEM && (err == -EBADMSG || err == -EPROTO))
		snprintf(L->res->error, sizeof(L->res->error),
			 "%s at offset 0: %s%s", path, xp_reader_error(r),
			 err == -EPROTO ? " (written by a newer xpcap; upgrade xpcorr)" : "");
	else
		snprintf(L->res->error, sizeof(L->res->error), "cannot read %s: %s",
			 path, xp_run_file_strerror(err));
	xp_reader_close(r);
	return err == -ENOENT || err == -EPROTO || err == -ENOMEM ? err : -EBADMSG;
}

/* One record of the pass: a malformed one is a warning unless strict. */
static int take_record(struct loader *L, struct xp_reader *r, const char *path, const char *file,
		       int pass, const struct xp_record_header *h)
{
	int handled = pass == 1 ? xp_loader_pass1_record(L, h) : xp_loader_pass2_record(L, h);
	uint64_t off;

	L->counts[h->type < 128 ? h->type : 0]++;
	if (handled != -EBADMSG)
		return handled < 0 ? handled : 0;
	off = xp_reader_offset(r);
	if (L->o->strict) {
		snprintf(L->res->error, sizeof(L->res->error), "%s at offset %" PRIu64
			 ": malformed %s record", path, off, xp_loader_kind_name(h->type));
		return -EBADMSG;
	}
	return xp_loader_warn(L, file, off, "%s at offset %" PRIu64 ": malformed %s record skipped",
		       path, off, xp_loader_kind_name(h->type));
}

/* A stream that ends early (err < 0 from the reader): the records before
 * it are kept, unless strict or the machine failed. */
static int damaged_tail(struct loader *L, struct xp_reader *r, const char *path, const char *file,
			int pass, int err)
{
	uint64_t off = xp_reader_offset(r);

	if (err == -ENOMEM || err == -EIO) {
		snprintf(L->res->error, sizeof(L->res->error), "%s at offset %" PRIu64
			 ": %s", path, off, xp_reader_error(r));
		return err;
	}
	if (L->o->strict) {
		snprintf(L->res->error, sizeof(L->res->error), "%s at offset %" PRIu64
			 ": %s%s", path, off, xp_reader_error(r), xp_loader_budget_hint(L, err));
		return err == -E2BIG ? err : -EBADMSG;
	}
	/* say once (pass 1) what was cut */
	return pass == 1 ? xp_loader_warn(L, file, off, "%s at offset %" PRIu64 ": %s; the records"
				  " before it are kept%s", path, off, xp_reader_error(r),
				  xp_loader_budget_hint(L, err)) : 0;
}

/* xp_record_counts: records of each kind in this stream (pass 2). */
static int write_counts(struct loader *L, const char *file)
{
	int err = 0;

	for (uint32_t t = 0; t < 128 && !err; t++) {
		if (!L->counts[t])
			continue;
		sqlite3_bind_text(L->st[STMT_COUNT], 1, file, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(L->st[STMT_COUNT], 2, xp_loader_kind_name(t), -1, SQLITE_STATIC);
		sqlite3_bind_int64(L->st[STMT_COUNT], 3, (int64_t)L->counts[t]);
		err = xp_loader_step(L, STMT_COUNT);
	}
	return err;
}

/* Reads one stream in one pass. A damaged tail (or a malformed record) is a
 * warning unless strict; an unusable header fails the load. */
int xp_loader_stream(struct loader *L, const char *path, const char *file, int pass,
		       int index)
{
	struct xp_read_budget replay = { .records = L->stream_records[index],
					 .expand = L->budget.expand };
	struct xp_reader *r;
	const struct xp_record_header *h;
	uint64_t n = 0, last = 0;
	int err;

	memset(L->counts, 0, sizeof(L->counts));
	err = open_stream(L, path, file, pass, &r);
	if (err)
		return err > 0 ? 0 : err;
	/* pass 2 takes what pass 1 took of the run's budget, no more */
	xp_reader_set_budget(r, pass == 1 ? &L->budget : &replay);
	L->stream_pid = xp_reader_header(r)->pid;
	xp_pystore_stream(L->py, !strcmp(file, "pyframes.xpr"));     /* xpcap's frame reader */
	while ((err = xp_reader_next(r, &h)) > 0) {
		if ((err = take_record(L, r, path, file, pass, h)))
			goto out;
		if (L->o->cancel && *L->o->cancel) {
			snprintf(L->res->error, sizeof(L->res->error), "interrupted");
			err = -ECANCELED;
			goto out;
		}
		if (++n - last >= PROGRESS_EVERY && L->o->progress) {
			last = n;
			L->o->progress(L->o->progress_ctx, L->bytes_done + xp_reader_offset(r),
				       L->bytes_total);
		}
	}
	if (err < 0 && (err = damaged_tail(L, r, path, file, pass, err)))
		goto out;
	/* a launch stream is one process's: its unwinding session is done */
	if (pass == 2 && strcmp(file, "cpu.xpr") && L->uw)
		xp_unwinder_exited(L->uw, L->stream_pid);
	err = pass == 2 ? write_counts(L, file) : 0;
out:
	if (pass == 1)
		L->stream_records[index] = n;
	L->bytes_done += xp_reader_offset(r);
	xp_reader_close(r);
	return err;
}
