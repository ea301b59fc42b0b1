/* load.c - run directory -> SQLite rows, symbolized; see load.h.
 *
 * The hot path is one CPU sample: its raw stack is first looked up whole in
 * a cache keyed by a 128-bit hash of (pid, IPs), which hits for the vast
 * majority of samples of a real program; only a miss resolves IPs to frames
 * (cached per module offset) and walks the stack prefix tree. Every distinct
 * string, frame and stack node is inserted once, when first seen.
 */
#include "ingest/loader.h"
#include "ingest/metarank.h"
#include "ingest/rangecut.h"

#include <sys/resource.h>

static const char *const stmt_sql[NSTMT] = {
	[STMT_STRING] = "INSERT INTO StringIds(id, value) VALUES (?, ?)",
	[STMT_FRAME] = "INSERT INTO xp_frames(id, symbol, module, kind, line) VALUES (?, ?, ?, ?, ?)",
	[STMT_STACK] = "INSERT INTO xp_stacks(id, parent, frame, depth) VALUES (?, ?, ?, ?)",
	[STMT_SAMPLE] = "INSERT INTO xp_samples(ts, pid, tid, cpu, stack_id, period)"
			" VALUES (?, ?, ?, ?, ?, ?)",
	[STMT_TASK] = "INSERT INTO xp_tasks(ts, event, pid, tid, ppid, ptid, name)"
		      " VALUES (?, ?, ?, ?, ?, ?, ?)",
	[STMT_MAPPING] = "INSERT INTO xp_mappings(pid, start, end, pgoff, ts, from_proc, module)"
			 " VALUES (?, ?, ?, ?, ?, ?, ?)",
	[STMT_MODULE] = "INSERT INTO xp_modules(id, path, build_id, status) VALUES (?, ?, ?, ?)",
	[STMT_LOSS] = "INSERT INTO xp_losses(ts, kind, reason, count, source) VALUES (?, ?, ?, ?, ?)",
	[STMT_META] = "INSERT INTO META_DATA_EXPORT(name, value) VALUES (?, ?)",
	[STMT_COUNT] = "INSERT INTO xp_record_counts(stream, kind, records) VALUES (?, ?, ?)",
	[STMT_WARNING] = "INSERT INTO xp_warnings(file, offset, message) VALUES (?, ?, ?)",
	[STMT_THREAD] = "INSERT INTO ThreadNames(nameId, priority, globalTid) VALUES (?, 0, ?)",
	[STMT_PROCESS] = "INSERT INTO PROCESSES(globalPid, pid, name) VALUES (?, ?, ?)",
	[STMT_ENV] = "INSERT INTO TARGET_INFO_SYSTEM_ENV(name, value) VALUES (?, ?)",
	[STMT_LAUNCH] = XP_LAUNCH_INSERT_SQL,
	[STMT_SWITCH] = "INSERT INTO xp_switches(ts, duration, pid, tid, cpu, prev_state, stack_id)"
			" VALUES (?, ?, ?, ?, ?, ?, ?)",
};

static int db_fail(struct loader *L, const char *what)
{
	snprintf(L->res->error, sizeof(L->res->error), "database: %s: %s", what,
		 sqlite3_errmsg(L->db));
	return -EIO;
}

int xp_loader_step(struct loader *L, int which)
{
	sqlite3_stmt *s = L->st[which];
	int rc = sqlite3_step(s);

	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return db_fail(L, stmt_sql[which]);
	return 0;
}

/* Records a warning (kept in xp_warnings and, for the first few, in res). */
int xp_loader_warn(struct loader *L, const char *file, uint64_t offset, const char *fmt, ...)
{
	char raw[XP_LOAD_MSG_LEN], msg[XP_LOAD_MSG_LEN], name[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* paths of a received run, and a message cut inside a character */
	xp_utf8_sanitize(msg, sizeof(msg), raw, strlen(raw));
	xp_utf8_sanitize(name, sizeof(name), file, strlen(file));
	file = name;
	if (L->res->nwarnings < XP_LOAD_WARNINGS_KEPT)
		snprintf(L->res->warnings[L->res->nwarnings], XP_LOAD_MSG_LEN, "%s", msg);
	L->res->nwarnings++;
	sqlite3_bind_text(L->st[STMT_WARNING], 1, file, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(L->st[STMT_WARNING], 2, (int64_t)offset);
	sqlite3_bind_text(L->st[STMT_WARNING], 3, msg, -1, SQLITE_TRANSIENT);
	return xp_loader_step(L, STMT_WARNING);
}

static int intern(struct loader *L, const char *s, size_t len, int64_t *id)
{
	char *clean = NULL;
	int fresh, err;

	/* names from a received run (symbols, paths, perf maps, a name cut at
	 * NAME_MAX_LEN) reach the database as valid UTF-8: U+FFFD for the rest */
	if (!xp_utf8_valid(s, len)) {
		clean = malloc(3 * len + 1);
		if (!clean)
			return -ENOMEM;
		len = xp_utf8_sanitize(clean, 3 * len + 1, s, len);
		s = clean;
	}
	err = xp_strtab_intern(L->strs, s, len, id, &fresh);
	if (!err && fresh) {
		sqlite3_bind_int64(L->st[STMT_STRING], 1, *id);
		sqlite3_bind_text(L->st[STMT_STRING], 2, s, (int)len, SQLITE_STATIC);
		err = xp_loader_step(L, STMT_STRING);
	}
	free(clean);
	return err;
}

int xp_loader_intern_str(struct loader *L, const char *s, int64_t *id)
{
	return intern(L, s, strlen(s), id);
}

/* xp_gpu_sink_ops for the GPU loader: our string table and stack tree. */
static int64_t sink_string(void *ctx, const char *s)
{
	int64_t id;

	return xp_loader_intern_str(ctx, s, &id) ? -1 : id;
}

static int64_t sink_stack(void *ctx, uint32_t pid, uint64_t ts, const uint64_t *kips,
			  unsigned nk, const uint64_t *uips, unsigned nu)
{
	uint64_t ips[2 * XP_MAX_STACK_DEPTH];
	int64_t id;

	if (nk > XP_MAX_STACK_DEPTH || nu > XP_MAX_STACK_DEPTH)
		return -1;
	memcpy(ips, kips, nk * sizeof(*ips));
	memcpy(ips + nk, uips, nu * sizeof(*ips));
	return xp_loader_stack_id(ctx, pid, ts, ips, nk, nu, NULL, &id) ? -1 : id;
}

/* Which of the run's limits stopped a reader, and how to raise it. */
static const char *budget_hint(struct loader *L, int err)
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

static struct xp_read_budget *sink_budget(void *ctx)
{
	return &((struct loader *)ctx)->budget;
}

static int is_gpu_stream(const char *name)
{
	return !strncmp(name, "gpu-", 4);
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
static int load_gpu_stream(struct loader *L, const char *path, const char *file)
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
			    budget_hint(L, err));
	return st.records && !gpu_stream_stopped(L->db, file)
		? xp_loader_warn(L, file, 0, "%s: no clean end (the process was killed or died before its exit"
		       " handlers ran): its GPU records since the library's last periodic flush"
		       " (at most %d ms) are missing; the %" PRIu64 " records before are kept", file,
		       XP_GPU_FLUSH_PERIOD_MS, st.records)
		: 0;
}

static int is_stream(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 4 && !strcmp(d->d_name + n - 4, ".xpr");
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
			 ": %s%s", path, off, xp_reader_error(r), budget_hint(L, err));
		return err == -E2BIG ? err : -EBADMSG;
	}
	/* say once (pass 1) what was cut */
	return pass == 1 ? xp_loader_warn(L, file, off, "%s at offset %" PRIu64 ": %s; the records"
				  " before it are kept%s", path, off, xp_reader_error(r),
				  budget_hint(L, err)) : 0;
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
static int load_stream(struct loader *L, const char *path, const char *file, int pass,
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

static int meta_pair(void *ctx, const char *key, const char *value)
{
	struct loader *L = ctx;
	char name[1100];
	const char *last = strrchr(key, '.');
	int err;

	snprintf(name, sizeof(name), "meta.%s", key);
	sqlite3_bind_text(L->st[STMT_META], 1, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(L->st[STMT_META], 2, value, -1, SQLITE_TRANSIENT);
	err = xp_loader_step(L, STMT_META);
	if (err)
		return err;
	if (!strcmp(key, "kallsyms_bytes") && value[0] >= '0' && value[0] <= '9')
		L->kallsyms_bytes = strtoll(value, NULL, 10);
	if (!strcmp(key, "kallsyms_error"))
		snprintf(L->kallsyms_error, sizeof(L->kallsyms_error), "%s", value);
	/* system facts also where nsys keeps them */
	if (!strcmp(key, "hostname") || !strcmp(key, "kernel_release") ||
	    !strcmp(key, "cpu_count") || !strcmp(key, "sample_frequency_hz")) {
		sqlite3_bind_text(L->st[STMT_ENV], 1, key, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(L->st[STMT_ENV], 2, value, -1, SQLITE_TRANSIENT);
		err = xp_loader_step(L, STMT_ENV);
		if (err)
			return err;
	}
	/* "records.sample.lost.ringbuf_full": 12 -> a loss counted by the capture */
	if (!strncmp(key, "records.", 8) && last && strtoll(value, NULL, 10) > 0) {
		char kind[256];
		const char *lost = strstr(key + 8, ".lost.");

		if (!lost || lost + 5 != last)
			return 0;
		uint32_t reason = xp_loss_reason_of_meta_key(last + 1);

		snprintf(kind, sizeof(kind), "%.*s", (int)(lost - (key + 8)), key + 8);
		sqlite3_bind_null(L->st[STMT_LOSS], 1);
		sqlite3_bind_text(L->st[STMT_LOSS], 2, kind, -1, SQLITE_TRANSIENT);
		/* one loss, one name: meta.json's "stack" is the records' "stack_unreadable" */
		sqlite3_bind_text(L->st[STMT_LOSS], 3, reason ? xp_loss_reason_name(reason) : last + 1,
				  -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(L->st[STMT_LOSS], 4, strtoll(value, NULL, 10));
		sqlite3_bind_text(L->st[STMT_LOSS], 5, "meta.json", -1, SQLITE_STATIC);
		return xp_loader_step(L, STMT_LOSS);
	}
	return 0;
}

/* Options first, then the environment (a report that ingests on its own
 * has no options for it), then the defaults. */
static void budget_init(struct loader *L)
{
	const char *env;
	char *end;

	L->budget.records = L->o->max_records;
	L->budget.expand = L->o->max_expand;
	if (!L->budget.records && (env = getenv("XPCORR_MAX_RECORDS")) &&
	    (L->budget.records = strtoull(env, &end, 10), *end))
		L->budget.records = 0;
	if (!L->budget.expand && (env = getenv("XPCORR_MAX_EXPAND"))) {
		unsigned long v = strtoul(env, &end, 10);

		L->budget.expand = !*end && v <= UINT32_MAX ? (uint32_t)v : 0;
	}
	if (!L->budget.records)
		L->budget.records = XP_READ_RECORDS_DEFAULT;
	if (!L->budget.expand)
		L->budget.expand = XP_READ_EXPAND_DEFAULT;
	L->max_records = L->budget.records;
}

static int load_meta(struct loader *L)
{
	char path[4096];
	json_t *j = NULL;
	int line, err;
	int64_t ver;

	snprintf(path, sizeof(path), "%s/meta.json", L->o->run_dir);
	err = xp_meta_load(&j, path, &line);
	if (err == -ENOENT)
		return xp_loader_warn(L, "meta.json", 0, "%s: missing; run facts and capture losses unknown",
			    path);
	if (err == -EBADMSG)
		return xp_loader_warn(L, "meta.json", 0, "%s at line %d: not valid JSON; ignored", path, line);
	if (err)
		return xp_loader_warn(L, "meta.json", 0, "%s: %s; ignored", path, xp_run_file_strerror(err));
	ver = xp_meta_int(j, "format_version", 0);
	if (ver > XP_FORMAT_VERSION) {
		snprintf(L->res->error, sizeof(L->res->error), "%s: run format version %" PRId64
			 " is newer than this xpcorr reads (%d); upgrade xpcorr", path, ver,
			 XP_FORMAT_VERSION);
		json_decref(j);
		return -EPROTO;
	}
	err = xp_meta_flatten(j, meta_pair, L);
	json_decref(j);
	return err;
}

static int load_kallsyms(struct loader *L)
{
	char path[4096];
	int err;

	snprintf(path, sizeof(path), "%s/kallsyms", L->o->run_dir);
	err = xp_kallsyms_load(&L->ksyms, path);
	if (err == -ENOENT && L->kallsyms_error[0])
		return xp_loader_warn(L, "kallsyms", 0, "%s: not recorded (meta.json kallsyms_error:"
				      " %s); kernel frames stay addresses", path, L->kallsyms_error);
	if (err == -ENOENT)
		return 0;   /* told in info: kernel frames stay addresses */
	if (err == -ENOMEM)
		return err;
	if (err)
		return xp_loader_warn(L, "kallsyms", 0, "%s: %s; kernel frames stay addresses", path,
			    err == -E2BIG ? "larger than a kernel's symbols (256 MiB, 4M symbols)"
					  : xp_run_file_strerror(err));
	if (xp_kallsyms_skipped(L->ksyms) > 0 && xp_kallsyms_count(L->ksyms) == 0)
		return xp_loader_warn(L, "kallsyms", 0, "%s: no text symbols", path);
	/* a copy cut short (xpcap killed while writing it) must not lend its
	 * last symbol to every address above: told in finish(), with a count */
	if (!xp_kallsyms_complete(L->ksyms))
		L->ksyms_cut = "it ends in the middle of a line";
	else if (L->kallsyms_bytes >= 0 &&
		 (uint64_t)L->kallsyms_bytes != xp_kallsyms_bytes(L->ksyms))
		L->ksyms_cut = "its size is not the one meta.json gives (kallsyms_bytes)";
	if (L->ksyms_cut)
		xp_kallsyms_set_truncated(L->ksyms);
	return 0;
}

static const char *status_name(enum xp_module_status s)
{
	switch (s) {
	case XP_MODULE_OK: return "ok";
	case XP_MODULE_MISSING: return "missing";
	case XP_MODULE_NOT_ELF: return "not_elf";
	case XP_MODULE_BUILD_ID_MISMATCH: return "build_id_mismatch";
	case XP_MODULE_ANON: return "anon";
	default: return "unused";
	}
}

/* Dwarf copies that could not be walked, or not to their end, by reason. */
static int unwind_warnings(struct loader *L)
{
	const struct xp_unwind_stats *u = xp_unwinder_stats(L->uw);
	struct rlimit rl;
	int err = 0;

	if (u->no_fd && !getrlimit(RLIMIT_NOFILE, &rl))
		err = xp_loader_warn(L, "cpu.xpr", 0, "%" PRIu64 " of %" PRIu64 " dwarf stack copies"
				     " were not unwound, or not to their end: no file descriptor left"
				     " (EMFILE, ulimit -n %llu); raise ulimit -n and ingest again",
				     u->no_fd, u->copies, (unsigned long long)rl.rlim_cur);
	if (!err && u->not_walked)
		err = xp_loader_warn(L, "cpu.xpr", 0, "%" PRIu64 " of %" PRIu64 " dwarf stack copies"
				     " were not unwound: libdwfl could not start a session (out of"
				     " memory?)", u->not_walked, u->copies);
	return err;
}

/* xp_threads and xp_processes, in key order (the maps' slots are not). */
static int write_tasks(struct loader *L)
{
	struct xp_u64map_entry *e = NULL;
	size_t n = 0;
	int err = xp_u64map_sorted(&L->threads, &e, &n);

	for (size_t i = 0; i < n && !err; i++) {
		sqlite3_bind_int64(L->st[STMT_THREAD], 1, (int64_t)e[i].value);
		sqlite3_bind_int64(L->st[STMT_THREAD], 2, xp_gtid(e[i].k1, e[i].k2));
		err = xp_loader_step(L, STMT_THREAD);
	}
	free(e);
	e = NULL;
	if (!err)
		err = xp_u64map_sorted(&L->procs, &e, &n);
	for (size_t i = 0; i < n && !err; i++) {
		sqlite3_bind_int64(L->st[STMT_PROCESS], 1, xp_gpid(e[i].k1));
		sqlite3_bind_int64(L->st[STMT_PROCESS], 2, (int64_t)e[i].k1);
		sqlite3_bind_text(L->st[STMT_PROCESS], 3, xp_strtab_get(L->strs, (int64_t)e[i].value),
				  -1, SQLITE_STATIC);
		err = xp_loader_step(L, STMT_PROCESS);
	}
	free(e);
	return err;
}

/* Final rows: modules, threads, processes, summary facts. */
static int finish(struct loader *L)
{
	char val[64], hex[2 * XP_BUILD_ID_MAX + 1];
	int err = 0;

	for (uint32_t i = 0; i < xp_symbolizer_count(L->sym) && !err; i++) {
		const char *path = xp_symbolizer_path(L->sym, i);
		const uint8_t *bid = NULL;
		size_t bid_len;
		int64_t path_id;

		err = xp_loader_intern_str(L, path, &path_id);
		if (err)
			break;
		sqlite3_bind_int64(L->st[STMT_MODULE], 1, i + 1);
		sqlite3_bind_int64(L->st[STMT_MODULE], 2, path_id);
		bid_len = xp_symbolizer_build_id(L->sym, i, &bid);
		for (size_t b = 0; b < bid_len; b++)
			snprintf(hex + 2 * b, 3, "%02x", bid[b]);
		if (bid_len)
			sqlite3_bind_text(L->st[STMT_MODULE], 3, hex, (int)(2 * bid_len),
					  SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(L->st[STMT_MODULE], 3);
		sqlite3_bind_text(L->st[STMT_MODULE], 4, status_name(xp_symbolizer_status(L->sym, i)),
				  -1, SQLITE_STATIC);
		err = xp_loader_step(L, STMT_MODULE);
	}
	if (!err)
		err = write_tasks(L);
	if (!err)
		err = unwind_warnings(L);
	if (!err && L->ksyms_cut)
		err = xp_loader_warn(L, "kallsyms", 0, "%s/kallsyms: truncated (%s): %" PRIu64 " kernel"
			   " addresses past its last symbol stay addresses", L->o->run_dir,
			   L->ksyms_cut, L->ksyms_beyond);
	if (!err && !(err = xp_pystore_save(L->db, L->py)))
		err = xp_pywaits_save(L->db, L->pyw);
	if (!err)
		err = xp_agstore_save(L->db, L->ag);
	if (err == -EIO)
		return db_fail(L, "xp_python_processes");
	if (!err && xp_meta_rank_save(L->db) < 0)
		return db_fail(L, "xp_ranks");
	L->res->stacks = (uint64_t)xp_stacktree_count(&L->tree);
	L->res->frames = (uint64_t)(L->next_frame - 1);
	L->res->strings = xp_strtab_count(L->strs);
	{
		const struct { const char *k; uint64_t v; } facts[] = {
			{ "xp_schema_version", XP_DB_SCHEMA_VERSION },
			{ "xp.sample_frames", L->res->sample_frames },
			{ "xp.sample_frames_resolved", L->res->sample_frames_resolved },
			{ "xp.kallsyms_symbols", xp_kallsyms_count(L->ksyms) },
			{ "xp.kallsyms_truncated", L->ksyms_cut != NULL },
			{ "xp.kernel_addresses_past_kallsyms", L->ksyms_beyond },
			{ "xp.stack_copies", xp_unwinder_stats(L->uw)->copies },
			{ "xp.stacks_unwound", L->res->stacks_unwound },
			{ "xp.unwinds_no_fd", xp_unwinder_stats(L->uw)->no_fd },
			{ "xp.unwinds_not_walked", xp_unwinder_stats(L->uw)->not_walked },
			{ "xp.unwinds_stopped_moved", xp_unwinder_stats(L->uw)->moved },
			{ "xp.unwind_sessions", xp_unwinder_stats(L->uw)->sessions_opened },
			{ "xp.launches_borrowed", L->res->launches_borrowed },
			{ "xp.borrowed_missing", L->res->borrowed_missing },
			{ "xp.stack_checks", L->res->stack_checks },
			{ "xp.stack_checks_differed", L->res->stack_checks_differed },
			{ "xp.symbolized_addresses", L->res->addresses },
			{ "xp.symbolize_ns", L->res->symbolize_ns },
			{ "xp.unwind_ns", L->res->unwind_ns },
			{ "xp.warnings", L->res->nwarnings },
		};

		for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]) && !err; i++) {
			snprintf(val, sizeof(val), "%" PRIu64, facts[i].v);
			sqlite3_bind_text(L->st[STMT_META], 1, facts[i].k, -1, SQLITE_STATIC);
			sqlite3_bind_text(L->st[STMT_META], 2, val, -1, SQLITE_TRANSIENT);
			err = xp_loader_step(L, STMT_META);
		}
	}
	return err;
}

static void loader_free(struct loader *L)
{
	for (int i = 0; i < NSTMT; i++)
		sqlite3_finalize(L->st[i]);
	xp_strtab_free(L->strs);
	xp_u64map_free(&L->frames);
	free(L->frame_resolved);
	free(L->frame_own);
	xp_stacktree_free(&L->tree);
	free(L->nodes);
	xp_u64map_free(&L->ipcache);
	xp_u64map_free(&L->rawstacks);
	xp_mappings_free(L->maps);
	xp_unwinder_free(L->uw);
	xp_borrowed_free(L->borrowed);
	xp_symbolizer_free(L->sym);
	xp_kallsyms_free(L->ksyms);
	xp_u64map_free(&L->perfmaps);
	xp_u64map_free(&L->pm_inodes);
	for (size_t i = 0; i < L->npmaps; i++)
		xp_perfmap_free(L->pmaps[i]);
	free(L->pmaps);
	free(L->chains);
	free(L->inl);
	xp_u64map_free(&L->threads);
	xp_u64map_free(&L->procs);
	free(L->stream_records);
	xp_pystore_free(L->py);
	xp_pywaits_free(L->pyw);
	xp_agstore_free(L->ag);
}

/* The loader's tables and helpers (xp_load_run frees them): 0 or -ENOMEM. */
static int loader_alloc(struct loader *L)
{
	L->strs = xp_strtab_new();
	L->maps = xp_mappings_new();
	L->sym = xp_symbolizer_new(L->o->symfs);
	L->uw = L->maps && L->sym ? xp_unwinder_new(L->maps, L->sym) : NULL;
	L->inl = calloc(XP_INLINE_MAX, sizeof(*L->inl));
	L->py = xp_pystore_new();
	L->pyw = xp_pywaits_new();
	L->ag = xp_agstore_new();
	L->borrowed = xp_borrowed_new();
	return L->strs && L->maps && L->sym && L->uw && L->inl && L->py && L->pyw && L->ag && L->borrowed ?
		0 : -ENOMEM;
}

/* The steps a load goes through, for the progress line (load.h's phase). */
static const char *const pass_what[] = { "reading tasks and mappings",
	"reading and symbolizing CPU samples and launches", "reading GPU records" };

static void announce(const struct xp_load_opts *o, const char *what)
{
	if (o->phase)
		o->phase(o->progress_ctx, what);
}

/* A GPU stream is read as a whole (gpu_load.c): its bytes count when it is done. */
static void gpu_stream_read(struct loader *L, const char *path)
{
	struct stat st;

	if (!L->o->progress)
		return;
	if (!lstat(path, &st) && S_ISREG(st.st_mode))
		L->bytes_done += (uint64_t)st.st_size;
	L->o->progress(L->o->progress_ctx, L->bytes_done, L->bytes_total);
}

/* The statements and the modules every run has: 0 or -errno. */
static int loader_prepare(struct loader *L)
{
	int err;

	for (int i = 0; i < NSTMT; i++)
		if (sqlite3_prepare_v2(L->db, stmt_sql[i], -1, &L->st[i], NULL) != SQLITE_OK)
			return db_fail(L, stmt_sql[i]);
	if ((err = xp_loader_intern_str(L, "[kernel.kallsyms]", &L->kernel_module)) ||
	    (err = xp_loader_intern_str(L, "[unknown]", &L->unknown_module)) ||
	    (err = xp_loader_intern_str(L, "[jit]", &L->jit_module)))
		return err;
	return 0;
}

/* The run's streams into *names (*n of them, sorted), their bytes into
 * L->bytes_total; a directory without cpu.xpr is no run. 0 or -errno. */
static int list_streams(struct loader *L, struct dirent ***names, int *n)
{
	const char *dir = L->o->run_dir;
	struct xp_load_result *res = L->res;
	char path[4096];
	int has_cpu = 0;

	*n = scandir(dir, names, is_stream, alphasort);
	if (*n < 0) {
		int err = -errno;

		*n = 0;
		snprintf(res->error, sizeof(res->error), "cannot read %s: %s", dir, strerror(-err));
		return err;
	}
	if (*n > MAX_STREAMS) {
		snprintf(res->error, sizeof(res->error), "%s: %d streams, more than %d", dir, *n,
			 MAX_STREAMS);
		return -E2BIG;
	}
	L->stream_records = calloc((size_t)*n + 1, sizeof(*L->stream_records));
	if (!L->stream_records)
		return -ENOMEM;
	for (int i = 0; i < *n; i++) {
		const char *file = (*names)[i]->d_name;
		struct stat st;

		has_cpu |= !strcmp(file, "cpu.xpr");
		snprintf(path, sizeof(path), "%s/%s", dir, file);
		/* lstat: a link is not read, its target's size is not ours */
		if (!lstat(path, &st) && S_ISREG(st.st_mode))   /* GPU streams: read once */
			L->bytes_total += (is_gpu_stream(file) ? 1 : 2) * (uint64_t)st.st_size;
	}
	if (!has_cpu) {
		snprintf(res->error, sizeof(res->error), "%s/cpu.xpr: no such file (not a run"
			 " directory?)", dir);
		return -ENOENT;
	}
	return 0;
}

/* The three passes over the streams (pass_what). 0 or -errno. */
static int read_streams(struct loader *L, struct dirent **names, int n)
{
	const struct xp_load_opts *o = L->o;
	char path[4096];
	int err;

	for (int pass = 1; pass <= 3; pass++) {
		announce(o, pass_what[pass - 1]);
		for (int i = 0; i < n; i++) {
			const char *file = names[i]->d_name;

			if ((pass == 3) != is_gpu_stream(file))
				continue;
			snprintf(path, sizeof(path), "%s/%s", o->run_dir, file);
			err = pass == 3 ? load_gpu_stream(L, path, file)
					: load_stream(L, path, file, pass, i);
			if (err)
				return err;
			if (pass == 3)
				gpu_stream_read(L, path);
		}
	}
	if (o->progress)        /* every stream read */
		o->progress(o->progress_ctx, L->bytes_total, L->bytes_total);
	return 0;
}

/* --capture-range that xpcap could not bound: the CPU records outside the
 * windows go now, before anything counts or joins them. */
static int cut_to_range(struct loader *L)
{
	struct xp_range_cut c;
	int err = xp_range_cut(L->db, &c);

	if (err == -EIO)
		return db_fail(L, "xp_samples (capture range)");
	if (!err)
		L->res->samples -= c.samples < L->res->samples ? c.samples : L->res->samples;
	return err;
}

int xp_load_run(sqlite3 *db, const struct xp_load_opts *o, struct xp_load_result *res)
{
	struct loader *L = calloc(1, sizeof(*L));
	struct dirent **names = NULL;
	int n = 0, err;

	memset(res, 0, sizeof(*res));
	if (!L)
		return -ENOMEM;
	L->db = db;
	L->o = o;
	L->res = res;
	L->next_frame = 1;
	L->kallsyms_bytes = -1;
	L->pm_budget = (struct xp_perfmap_budget){ XP_PERFMAP_RUN_BYTES, XP_PERFMAP_RUN_LINES };
	budget_init(L);
	xp_stacktree_init(&L->tree);
	if (!(err = loader_alloc(L)) && !(err = loader_prepare(L)) &&
	    !(err = list_streams(L, &names, &n)) && !(err = load_meta(L)) &&
	    !(err = load_kallsyms(L)) && !(err = read_streams(L, names, n)) &&
	    !(err = cut_to_range(L))) {
		announce(o, "writing modules, threads and Python code");
		err = finish(L);
	}
	if (err == -ENOMEM && !res->error[0])
		snprintf(res->error, sizeof(res->error), "out of memory");
	else if (err && !res->error[0])
		snprintf(res->error, sizeof(res->error), "%s", strerror(-err));
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	loader_free(L);
	free(L);
	return err;
}

