/* load.h - decode a run directory and load it, symbolized, into an open
 * SQLite database whose schema the caller created (db_schema.h). This is
 * the work of `xpcorr ingest`; ingest.h wraps it in the atomic file dance.
 *
 *   struct xp_load_opts o = { .run_dir = "run" };
 *   struct xp_load_result res;
 *   if (xp_load_run(db, &o, &res) < 0) fprintf(stderr, "xpcorr: %s\n", res.error);
 *   for (unsigned i = 0; i < res.nwarnings && i < XP_LOAD_WARNINGS_KEPT; i++) ...
 *
 * Two passes over the record streams: the first collects tasks and
 * mappings (so that a sample is symbolized with the mappings valid at its
 * time, whatever order capture wrote them in), the second loads samples.
 */
#ifndef XP_LOAD_H
#define XP_LOAD_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#define XP_LOAD_WARNINGS_KEPT 8
#define XP_LOAD_MSG_LEN 512

struct xp_load_result;

struct xp_load_opts {
	const char *run_dir;
	const char *out_db;         /* xp_ingest: this database file, not run_dir/xpcorr.db */
	int strict;                 /* a damaged stream fails the load */
	const char *symfs;          /* prefix for module paths, or NULL */
	int trust_run_dir;          /* xp_ingest as root: write where others may too */
	int raw_launch_stacks;      /* xp_ingest: runtime threads' launches keep their own
				     * stacks, not the line their Python thread waited in
				     * (waitlines.h) */
	/* called now and then with bytes read so far and in all (may be NULL) */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
	/* called with progress_ctx as each step begins, what it does in a few
	 * words ("reading GPU records", "indexing"): the steps after the
	 * reading make no byte progress (may be NULL) */
	void (*phase)(void *ctx, const char *what);
	/* set non-zero (from a signal handler) to stop: -ECANCELED, nothing kept */
	const volatile int *cancel;
	/* Budget of a run that came from someone else (runfile.h): records in
	 * all streams, and how far compressed streams may expand. 0: from
	 * XPCORR_MAX_RECORDS / XPCORR_MAX_EXPAND when set, else the defaults. A
	 * stream that goes over is cut there (a warning, an error if strict). */
	uint64_t max_records;
	uint32_t max_expand;
	/* xp_ingest: run in the load's transaction after the indexes, before
	 * the archive facts and the rename (cmd: the correlation). 0 or a
	 * negative errno with res->error set. May be NULL. */
	int (*after_load)(void *ctx, sqlite3 *db, struct xp_load_result *res);
	void *after_load_ctx;
};

struct xp_load_result {
	char error[XP_LOAD_MSG_LEN];        /* on failure: "run/cpu.xpr at offset 4096: truncated record" */
	unsigned nwarnings;                 /* all warnings; the first few kept below */
	char warnings[XP_LOAD_WARNINGS_KEPT][XP_LOAD_MSG_LEN];
	uint64_t samples;                   /* rows in xp_samples */
	uint64_t stacks, frames, strings;   /* distinct rows */
	uint64_t sample_frames;             /* frames over all samples */
	uint64_t sample_frames_resolved;    /* of which symbolized */
	uint64_t stacks_unwound;            /* dwarf copies walked further than frame pointers */
	/* in-process launch stacks that named an earlier copy's frames, those
	 * whose copy never came, and the copies that checked a key again
	 * (cupti/stackreuse.h), with those that found other frames */
	uint64_t launches_borrowed, borrowed_missing, stack_checks, stack_checks_differed;
	uint64_t addresses;                 /* distinct user addresses symbolized (cache misses) */
	uint64_t symbolize_ns, unwind_ns;   /* time spent symbolizing them, unwinding copies */
	uint64_t gpu_streams;               /* gpu-<pid>.xpr files loaded */
};

/* 0 (warnings possible), or a negative errno with res->error set:
 * -EPROTO newer format, -EBADMSG damaged input (strict, or unusable header),
 * -ENOENT no cpu.xpr, -EIO database error, -ENOMEM, -ECANCELED. */
int xp_load_run(sqlite3 *db, const struct xp_load_opts *o,
		struct xp_load_result *res);

#endif
