/* archive.c - archive.* facts of a run; see archive.h. */
#include "db/archive.h"

#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum ftype { F_STR, F_INT };

static const struct field {
	const char *key;            /* META_DATA_EXPORT name */
	enum ftype type;
	size_t off, len;
} fields[] = {
#define S(k, m) { "archive." k, F_STR, offsetof(struct xp_archive, m), sizeof(((struct xp_archive *)0)->m) }
#define I(k, m) { "archive." k, F_INT, offsetof(struct xp_archive, m), 0 }
	S("host", host), S("command", command), S("gpu", gpu), S("cuda_driver", driver),
	S("cupti", cupti), S("xpcap_version", xpcap_version), S("xpcorr_version", xpcorr_version),
	S("git_describe", git), S("git_dir", git_dir), I("start_realtime_ns", start_realtime_ns),
	I("duration_ns", duration_ns), I("gpu_ns", gpu_ns), I("sample_frequency_hz", sample_hz),
#undef S
#undef I
};

/* First column of the first row as text into buf (empty when NULL). */
static int text(sqlite3 *db, const char *sql, char *buf, size_t len)
{
	sqlite3_stmt *st;
	int rc;

	buf[0] = '\0';
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(buf, len, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -EIO;
}

static int integer(sqlite3 *db, const char *sql, int64_t *v)
{
	char buf[32];
	int err = text(db, sql, buf, sizeof(buf));

	*v = err ? 0 : strtoll(buf, NULL, 10);
	return err;
}

#define META(k) "(SELECT value FROM META_DATA_EXPORT WHERE name = '" k "')"

int xp_archive_collect(sqlite3 *db, struct xp_archive *a)
{
	int64_t drv = 0;
	int err = 0;

	memset(a, 0, sizeof(*a));
	/* the command as meta.json has it: an argv array, or one string */
	err |= text(db, "SELECT ifnull((SELECT group_concat(value, ' ') FROM (SELECT value FROM"
		    " META_DATA_EXPORT WHERE name GLOB 'meta.command.[0-9]*'"
		    " ORDER BY CAST(substr(name, 14) AS INTEGER))), " META("meta.command") ")",
		    a->command, sizeof(a->command));
	err |= text(db, "SELECT " META("meta.hostname"), a->host, sizeof(a->host));
	/* taken by xpcap at record time: xpcorr runs no program on a run's paths */
	err |= text(db, "SELECT " META("meta.git.describe"), a->git, sizeof(a->git));
	err |= text(db, "SELECT " META("meta.git.dir"), a->git_dir, sizeof(a->git_dir));
	err |= text(db, "SELECT " META("meta.tool_version"), a->xpcap_version,
		    sizeof(a->xpcap_version));
	err |= text(db, "SELECT group_concat(name, ', ') FROM (SELECT DISTINCT name FROM"
		    " TARGET_INFO_GPU WHERE name IS NOT NULL ORDER BY name)", a->gpu, sizeof(a->gpu));
	err |= integer(db, "SELECT max(driver_version) FROM xp_gpu_processes", &drv);
	if (drv > 0)    /* cuDriverGetVersion: 1000 * major + 10 * minor */
		snprintf(a->driver, sizeof(a->driver), "%" PRId64 ".%" PRId64, drv / 1000,
			 drv % 1000 / 10);
	err |= text(db, "SELECT max(cupti_version) FROM xp_gpu_processes", a->cupti,
		    sizeof(a->cupti));
	snprintf(a->xpcorr_version, sizeof(a->xpcorr_version), "%s", XP_VERSION);
	err |= integer(db, "SELECT " META("meta.start_realtime_ns"), &a->start_realtime_ns);
	err |= integer(db, "SELECT " META("meta.sample_frequency_hz"), &a->sample_hz);
	err |= integer(db, "SELECT " META("meta.stop_monotonic_ns") " - "
		       META("meta.start_monotonic_ns"), &a->duration_ns);
	if (a->duration_ns <= 0)
		err |= integer(db, "SELECT max(e) - min(s) FROM (SELECT min(start) s, max(end) e FROM"
			       " CUPTI_ACTIVITY_KIND_KERNEL UNION ALL SELECT min(start), max(end) FROM"
			       " CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL SELECT min(start), max(end) FROM"
			       " CUPTI_ACTIVITY_KIND_MEMSET)", &a->duration_ns);
	err |= integer(db, "SELECT (SELECT ifnull(sum(end - start), 0) FROM CUPTI_ACTIVITY_KIND_KERNEL)"
		       " + (SELECT ifnull(sum(end - start), 0) FROM CUPTI_ACTIVITY_KIND_MEMCPY)"
		       " + (SELECT ifnull(sum(end - start), 0) FROM CUPTI_ACTIVITY_KIND_MEMSET)",
		       &a->gpu_ns);
	return err ? -EIO : 0;
}

int xp_archive_record(sqlite3 *db)
{
	struct xp_archive a;
	sqlite3_stmt *st;
	int rc = SQLITE_OK;

	if (xp_archive_collect(db, &a))
		return -EIO;
	if (sqlite3_exec(db, "DELETE FROM META_DATA_EXPORT WHERE name GLOB 'archive.*'", NULL, NULL,
			 NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO META_DATA_EXPORT(name, value) VALUES (?, ?)", -1,
			       &st, NULL) != SQLITE_OK)
		return -EIO;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]) && rc == SQLITE_OK; i++) {
		const char *p = (const char *)&a + fields[i].off;

		sqlite3_bind_text(st, 1, fields[i].key, -1, SQLITE_STATIC);
		if (fields[i].type == F_INT)
			sqlite3_bind_int64(st, 2, *(const int64_t *)(const void *)p);
		else
			sqlite3_bind_text(st, 2, p, -1, SQLITE_STATIC);
		rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? 0 : -EIO;
}

int xp_archive_read(sqlite3 *db, struct xp_archive *a)
{
	sqlite3_stmt *st;
	int found = 0, rc;

	memset(a, 0, sizeof(*a));
	if (sqlite3_prepare_v2(db, "SELECT name, value FROM META_DATA_EXPORT WHERE name GLOB 'archive.*'",
			       -1, &st, NULL) != SQLITE_OK)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		const char *v = (const char *)sqlite3_column_text(st, 1);

		for (size_t i = 0; k && i < sizeof(fields) / sizeof(fields[0]); i++) {
			char *p = (char *)a + fields[i].off;

			if (strcmp(k, fields[i].key))
				continue;
			found = 1;
			if (fields[i].type == F_INT)
				*(int64_t *)(void *)p = v ? strtoll(v, NULL, 10) : 0;
			else
				snprintf(p, fields[i].len, "%s", v ? v : "");
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return -EIO;
	/* a database from an ingest before archive.* existed */
	return found ? 0 : xp_archive_collect(db, a);
}
