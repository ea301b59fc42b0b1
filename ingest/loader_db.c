/* loader_db.c - the run loader's statements: prepared once, stepped with
 * the failing statement and sqlite3_errmsg in res->error; strings made
 * valid UTF-8 for the stackwriter (db/stackwriter.h), which writes each
 * name, frame and stack node once; warnings into xp_warnings and the first
 * few into res. Everything load.c's parts write goes through here.
 */
#include "ingest/loader.h"

static const char *const stmt_sql[NSTMT] = {
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

int xp_loader_db_fail(struct loader *L, const char *what)
{
	snprintf(L->res->error, sizeof(L->res->error), "database: %s: %s", what,
		 sqlite3_errmsg(L->db));
	return -EIO;
}

/* A call of the writer's (db/stackwriter.h): its failure with the
 * statement in res->error, as the loader's own. */
int xp_loader_written(struct loader *L, int err)
{
	return err == -EIO ? xp_loader_db_fail(L, xp_stackwriter_what(L->w)) : err;
}

int xp_loader_step(struct loader *L, int which)
{
	sqlite3_stmt *s = L->st[which];
	int rc = sqlite3_step(s);

	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return xp_loader_db_fail(L, stmt_sql[which]);
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
	int err;

	/* names from a received run (symbols, paths, perf maps, a name cut at
	 * NAME_MAX_LEN) reach the database as valid UTF-8: U+FFFD for the rest */
	if (!xp_utf8_valid(s, len)) {
		clean = malloc(3 * len + 1);
		if (!clean)
			return -ENOMEM;
		len = xp_utf8_sanitize(clean, 3 * len + 1, s, len);
		s = clean;
	}
	err = xp_loader_written(L, xp_stackwriter_string(L->w, s, len, id, NULL));
	free(clean);
	return err;
}

int xp_loader_intern_str(struct loader *L, const char *s, int64_t *id)
{
	return intern(L, s, strlen(s), id);
}

/* The statements and the modules every run has: 0 or -errno. */
int xp_loader_prepare(struct loader *L)
{
	int err;

	for (int i = 0; i < NSTMT; i++)
		if (sqlite3_prepare_v2(L->db, stmt_sql[i], -1, &L->st[i], NULL) != SQLITE_OK)
			return xp_loader_db_fail(L, stmt_sql[i]);
	if ((err = xp_stackwriter_open(L->db, &L->w)))
		return err == -EIO ? xp_loader_db_fail(L, "StringIds, xp_frames, xp_stacks") : err;
	if ((err = xp_loader_intern_str(L, "[kernel.kallsyms]", &L->kernel_module)) ||
	    (err = xp_loader_intern_str(L, "[unknown]", &L->unknown_module)) ||
	    (err = xp_loader_intern_str(L, "[jit]", &L->jit_module)))
		return err;
	return 0;
}
