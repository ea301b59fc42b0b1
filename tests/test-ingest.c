/* test-ingest.c - ingest of a synthetic run over the real fixture: what lands
 * in the database, and what happens with truncated, byte-flipped,
 * zero-filled, wrong-magic and future-version input (never a crash; the
 * valid part kept unless --strict), and that a failed ingest leaves the
 * previous database in place. */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <time.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-main.h"
#include "db/db_schema.h"
#include "db/rundb.h"
#include "ingest/ingest.h"
#include "src/runfmt.h"
#include "synthrun.h"

static struct xp_synth fx;
static char dir[64], cpu[128], db_path[128];

static void setup(void)
{
	fx.exe = getenv("XP_FIXTURE_EXE");
	fx.lib = getenv("XP_FIXTURE_LIB");
	ck_assert_msg(fx.exe && fx.lib, "XP_FIXTURE_EXE/LIB not set (run through meson test)");
	ck_assert_int_eq(xp_synth_load_elves(&fx), 0);
	strcpy(dir, "/tmp/xp-test-ingest-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(xp_synth_write_golden(&fx, dir), 0);
	snprintf(cpu, sizeof(cpu), "%s/cpu.xpr", dir);
	snprintf(db_path, sizeof(db_path), "%s/xpcorr.db", dir);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static int64_t query(const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int64_t v = -1;

	ck_assert_int_eq(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	return v;
}

static int ingest(int strict, struct xp_load_result *res)
{
	struct xp_load_opts o = { .run_dir = dir, .strict = strict };

	return xp_ingest(&o, res);
}

static int has_warning(const struct xp_load_result *res, const char *text)
{
	for (unsigned i = 0; i < res->nwarnings && i < XP_LOAD_WARNINGS_KEPT; i++)
		if (strstr(res->warnings[i], text))
			return 1;
	return 0;
}

/* xpcorr.db.tmp-* files in the run, the last one's path in path. */
static int count_temps(char *path, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, XP_DB_TMP_PREFIX, strlen(XP_DB_TMP_PREFIX))) {
			snprintf(path, len, "%s/%.100s", dir, de->d_name);
			n++;
		}
	closedir(d);
	return n;
}

static off_t file_size(const char *path)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	return st.st_size;
}

static void patch(off_t off, const void *bytes, size_t len)
{
	int fd = open(cpu, O_WRONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pwrite(fd, bytes, len, off), (ssize_t)len);
	close(fd);
}

START_TEST(good_run_loads_symbolized)
{
	struct xp_load_result res;

	ck_assert_int_eq(ingest(0, &res), 0);
	ck_assert_uint_eq(res.samples, 18);
	ck_assert_int_eq(query("SELECT count(*) FROM xp_samples"), 18);
	ck_assert_int_eq(query("PRAGMA user_version"), 1);
	/* caller frames found through ip - 1: xp_run, never the function after it */
	ck_assert_int_eq(query("SELECT count(*) FROM xp_frame_names WHERE symbol = 'xp_run'"), 1);
	ck_assert_int_eq(query("SELECT count(*) FROM xp_frame_names"
			       " WHERE symbol = 'xp::Widget::draw(int)'"), 1);
	ck_assert_int_eq(query("SELECT count(*) FROM xp_frame_names WHERE symbol = 'py::train:train.py'"), 1);
	ck_assert_int_eq(query("SELECT count(*) FROM xp_frame_names WHERE symbol = 'schedule' AND kind = 1"), 1);
	/* the stale process: module + offset, nothing guessed */
	ck_assert_int_eq(query("SELECT count(*) FROM xp_frame_names WHERE symbol = 'libxptarget.so+0x1020'"
			       " AND kind = 3"), 1);
	ck_assert_int_eq(query("SELECT count(*) FROM SAMPLING_CALLCHAINS c JOIN xp_samples s ON s.id = c.id"
			       " JOIN xp_frames f ON f.symbol = c.symbol AND f.kind = 0 WHERE s.pid = 3000"), 0);
	ck_assert_int_eq(query("SELECT count(*) FROM xp_modules WHERE status = 'build_id_mismatch'"), 1);
	/* nsys view: leaf at depth 0 */
	ck_assert_int_eq(query("SELECT count(*) FROM SAMPLING_CALLCHAINS c JOIN StringIds s ON s.id = c.symbol"
			       " WHERE c.stackDepth = 0 AND s.value = 'xp_compute'"), 6);
	ck_assert_int_eq(query("SELECT count(*) FROM COMPOSITE_EVENTS WHERE globalTid = (1000 << 24) | 1001"), 6);
	ck_assert_int_eq(query("SELECT sum(count) FROM xp_losses"), 6);
	/* the launch's stack, leaf first: xp_parse <- xp_run <- main */
	ck_assert_int_eq(query("SELECT count(*) FROM xp_launches l JOIN xp_stacks t ON t.id = l.stack_id"
			       " JOIN xp_frame_names f ON f.id = t.frame WHERE l.correlation_id = 77"
			       " AND f.symbol = 'xp_parse' AND t.depth = 3"), 1);
	ck_assert_int_eq(query("SELECT count(*) FROM xp_switches w JOIN xp_stacks t ON t.id = w.stack_id"
			       " JOIN xp_frame_names f ON f.id = t.frame WHERE w.duration = 5000000"
			       " AND f.symbol = 'schedule'"), 1);
	ck_assert_int_eq(xp_ingest_is_fresh(dir), 1);
}
END_TEST

/* one loss, one name: meta.json's "stack" (capture's key) and a record's
 * XP_LOST_STACK both land as "stack_unreadable" (runnames.h) */
START_TEST(meta_loss_keys_take_the_database_names)
{
	struct xp_load_result res;
	char path[160], buf[8192];
	FILE *f;
	size_t n;
	char *at;

	snprintf(path, sizeof(path), "%s/meta.json", dir);
	ck_assert_ptr_nonnull(f = fopen(path, "r"));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	ck_assert_ptr_nonnull(at = strstr(buf, "\"stack\": 0"));
	at[9] = '4';
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	ck_assert_int_eq(fwrite(buf, 1, n, f), n);
	fclose(f);
	ck_assert_int_eq(ingest(0, &res), 0);
	ck_assert_int_eq(query("SELECT sum(count) FROM xp_losses WHERE kind = 'sample'"
			       " AND reason = 'stack_unreadable' AND source = 'meta.json'"), 4);
	ck_assert_int_eq(query("SELECT count(*) FROM xp_losses WHERE reason = 'stack'"), 0);
}
END_TEST

START_TEST(truncated_keeps_valid_part_or_fails_strict)
{
	struct xp_load_result res;

	ck_assert_int_eq(truncate(cpu, file_size(cpu) - 400), 0);
	ck_assert_int_eq(ingest(1, &res), -EBADMSG);
	ck_assert_msg(strstr(res.error, "cpu.xpr at offset ") && strstr(res.error, "truncated"),
		      "error: %s", res.error);
	ck_assert_int_eq(access(db_path, F_OK), -1);    /* strict: no database */
	ck_assert_int_eq(ingest(0, &res), 0);
	ck_assert_uint_eq(res.nwarnings, 2);             /* perf map line + truncation */
	ck_assert(has_warning(&res, "truncated record"));
	ck_assert_int_gt(res.samples, 10);
	ck_assert_int_lt(res.samples, 18);
	ck_assert_int_eq(query("SELECT count(*) FROM xp_warnings"), 2);
}
END_TEST

START_TEST(every_byte_flipped_never_crashes)
{
	off_t size = file_size(cpu);
	unsigned char orig, flipped;
	struct xp_load_result res;
	int fd;

	for (off_t off = 0; off < size; off += 3) {
		fd = open(cpu, O_RDWR);
		ck_assert_int_eq(pread(fd, &orig, 1, off), 1);
		flipped = orig ^ 0xa5;
		ck_assert_int_eq(pwrite(fd, &flipped, 1, off), 1);
		close(fd);
		for (int strict = 0; strict <= 1; strict++) {
			int err = ingest(strict, &res);

			ck_assert_msg(err == 0 || err == -EBADMSG || err == -EPROTO,
				      "offset %ld: %d %s", (long)off, err, res.error);
			if (err)
				ck_assert_msg(strstr(res.error, "cpu.xpr"), "no file named: %s", res.error);
		}
		patch(off, &orig, 1);
	}
}
END_TEST

START_TEST(zero_filled_and_wrong_magic_refused)
{
	struct xp_load_result res;
	char *zeros = calloc(1, (size_t)file_size(cpu));

	patch(0, "NOTXPCAP", 8);
	ck_assert_int_eq(ingest(0, &res), -EBADMSG);
	ck_assert_msg(strstr(res.error, "cpu.xpr at offset 0: not an xpcap record stream"),
		      "%s", res.error);
	patch(0, zeros, (size_t)file_size(cpu));
	ck_assert_int_eq(ingest(0, &res), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(res.error, "bad magic"));
	free(zeros);
}
END_TEST

START_TEST(future_version_refused_clearly)
{
	struct xp_load_result res;
	uint32_t v = XP_FORMAT_VERSION + 1;
	char meta[256];
	FILE *f;

	patch(8, &v, sizeof(v));
	ck_assert_int_eq(ingest(0, &res), -EPROTO);
	ck_assert_msg(strstr(res.error, "newer"), "%s", res.error);
	/* meta.json saying so is enough too */
	v = XP_FORMAT_VERSION;
	patch(8, &v, sizeof(v));
	snprintf(meta, sizeof(meta), "%s/meta.json", dir);
	f = fopen(meta, "w");
	fprintf(f, "{\"format_version\": %d}\n", XP_FORMAT_VERSION + 1);
	fclose(f);
	ck_assert_int_eq(ingest(0, &res), -EPROTO);
	ck_assert_msg(strstr(res.error, "meta.json") && strstr(res.error, "newer"), "%s", res.error);
}
END_TEST

START_TEST(missing_or_broken_meta_is_a_warning)
{
	struct xp_load_result res;
	char meta[256];
	FILE *f;

	snprintf(meta, sizeof(meta), "%s/meta.json", dir);
	ck_assert_int_eq(unlink(meta), 0);
	ck_assert_int_eq(ingest(1, &res), 0);
	ck_assert(has_warning(&res, "meta.json: missing"));
	f = fopen(meta, "w");
	fputs("{\"hostname\": ", f);
	fclose(f);
	ck_assert_int_eq(ingest(0, &res), 0);
	ck_assert(has_warning(&res, "not valid JSON"));
	ck_assert_uint_eq(res.samples, 18);
}
END_TEST

START_TEST(failed_ingest_leaves_previous_db)
{
	struct xp_load_result res;
	struct stat before, after;
	char tmpname[256];

	ck_assert_int_eq(ingest(0, &res), 0);
	ck_assert_int_eq(stat(db_path, &before), 0);
	ck_assert_int_eq(truncate(cpu, file_size(cpu) - 400), 0);
	ck_assert_int_eq(ingest(1, &res), -EBADMSG);
	ck_assert_int_eq(stat(db_path, &after), 0);
	ck_assert_int_eq(before.st_ino, after.st_ino);  /* not replaced */
	ck_assert_int_eq(query("SELECT count(*) FROM xp_samples"), 18);
	ck_assert_int_eq(count_temps(tmpname, sizeof(tmpname)), 0);    /* no leftover */
	/* and a missing stream is a failure that keeps it too */
	ck_assert_int_eq(unlink(cpu), 0);
	ck_assert_int_eq(ingest(0, &res), -ENOENT);
	ck_assert_int_eq(query("SELECT count(*) FROM xp_samples"), 18);
	ck_assert_int_eq(xp_ingest_is_fresh(dir), 1);
}
END_TEST

START_TEST(stale_db_detected)
{
	struct xp_load_result res;
	struct timespec later[2] = { { .tv_sec = 0, .tv_nsec = UTIME_NOW },
				     { .tv_sec = 0, .tv_nsec = UTIME_NOW } };

	ck_assert_int_eq(xp_ingest_is_fresh(dir), 0);
	ck_assert_int_eq(ingest(0, &res), 0);
	ck_assert_int_eq(xp_ingest_is_fresh(dir), 1);
	later[0].tv_nsec = later[1].tv_nsec = 0;
	later[0].tv_sec = later[1].tv_sec = time(NULL) + 100;
	ck_assert_int_eq(utimensat(AT_FDCWD, cpu, later, 0), 0);
	ck_assert_int_eq(xp_ingest_is_fresh(dir), 0);
}
END_TEST

START_TEST(hostile_record_sizes_and_depths)
{
	struct xp_load_result res;
	/* first record after the header: a COMM; make it claim 0xfffffff0 bytes */
	uint32_t huge = 0xfffffff0u, depth = 0xffff;
	off_t hdr = (off_t)sizeof(struct xp_file_header);

	patch(hdr + 4, &huge, 4);
	ck_assert_int_eq(ingest(0, &res), 0);   /* nothing valid, but a db saying so */
	ck_assert_int_eq(ingest(1, &res), -EBADMSG);
	ck_assert_ptr_nonnull(strstr(res.error, "record larger than the format allows"));
	teardown();
	setup();
	/* a sample whose depth claims more IPs than the record holds: find the
	 * first sample record and patch its user_depth */
	{
		int fd = open(cpu, O_RDWR);
		struct xp_record_header h;
		off_t off = hdr;

		while (pread(fd, &h, sizeof(h), off) == sizeof(h) && h.type != XP_REC_SAMPLE)
			off += h.size;
		ck_assert_int_eq(h.type, XP_REC_SAMPLE);
		ck_assert_int_eq(pwrite(fd, &depth, 2, off + 8 + offsetof(struct xp_sample, stack)), 2);
		close(fd);
	}
	ck_assert_int_eq(ingest(0, &res), 0);
	ck_assert_uint_eq(res.samples, 17);
	ck_assert(has_warning(&res, "malformed sample record"));
	ck_assert_int_eq(ingest(1, &res), -EBADMSG);
}
END_TEST


/* Called while the ingest loads (a bench run: progress every 65536
 * records): look at its temporary database, or plant a link in its place. */
static int progress_calls, plant_link;
static char outside[128];

static void inspect_temp(void *ctx, uint64_t done, uint64_t total)
{
	char path[256], want[64], err[256];
	struct xp_rundir d;
	struct stat st;
	int fd;

	(void)ctx, (void)done, (void)total;
	if (progress_calls++)
		return;
	ck_assert_int_eq(count_temps(path, sizeof(path)), 1);
	snprintf(want, sizeof(want), "/" XP_DB_TMP_PREFIX "%ld-", (long)getpid());
	ck_assert_msg(strstr(path, want) && strlen(strstr(path, want)) == strlen(want) + 16,
		      "%s: not named PID-RANDOM", path);
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	/* locked by the ingest: another open file cannot take it, and the
	 * clean-up of killed ingests (here from a second reader) keeps it */
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX | LOCK_NB), -1);
	ck_assert_int_eq(errno, EWOULDBLOCK);
	close(fd);
	ck_assert_int_eq(xp_rundir_open(&d, dir, err, sizeof(err)), 0);
	xp_rundir_remove_stale(&d);
	xp_rundir_close(&d);
	ck_assert_int_eq(access(path, F_OK), 0);
	if (plant_link) {
		/* what a user who owns the run directory can do to root's ingest */
		ck_assert_int_eq(unlink(path), 0);
		ck_assert_int_eq(symlink(outside, path), 0);
	}
}

START_TEST(temporary_database_is_ours_locked_and_checked)
{
	struct xp_load_opts o = { .progress = inspect_temp };
	struct xp_load_result res;
	char path[256];
	struct stat st;

	teardown();
	strcpy(dir, "/tmp/xp-test-ingest-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(xp_synth_write_bench(&fx, dir, 70000, 1), 0);
	snprintf(cpu, sizeof(cpu), "%s/cpu.xpr", dir);
	snprintf(db_path, sizeof(db_path), "%s/xpcorr.db", dir);
	o.run_dir = dir;
	progress_calls = plant_link = 0;
	ck_assert_int_eq(xp_ingest(&o, &res), 0);
	ck_assert_int_gt(progress_calls, 0);
	ck_assert_int_eq(count_temps(path, sizeof(path)), 0);
	/* a link planted at the temporary name: never written through, never
	 * renamed into place */
	snprintf(outside, sizeof(outside), "%s.outside", dir);
	unlink(outside);
	utimensat(AT_FDCWD, cpu, (struct timespec[2]){ { 0, UTIME_NOW }, { 0, UTIME_NOW } }, 0);
	progress_calls = 0;
	plant_link = 1;
	ck_assert_int_eq(xp_ingest(&o, &res), -ESTALE);
	ck_assert_msg(strstr(res.error, "the temporary file was replaced"), "%s", res.error);
	ck_assert_int_eq(access(outside, F_OK), -1);
	ck_assert_int_eq(lstat(db_path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));                 /* the first ingest's */
	ck_assert_int_eq(query("SELECT count(*) FROM xp_samples"), 70000);
}
END_TEST

/* The run's owner moves the run directory between the temporary file's
 * create and SQLite's open, and puts a link to a directory of its own, with
 * a file of the same name, in its place: SQLite writes the file we made
 * (through its descriptor), never the one the name now leads to. */
START_TEST(temporary_database_written_through_its_descriptor)
{
	char moved[96], decoy_dir[96], decoy[192], err[256];
	struct xp_rundir d;
	struct xp_tmpdb t = { .fd = -1 };
	struct stat st;
	sqlite3 *db = NULL;
	int fd;

	snprintf(moved, sizeof(moved), "%s.moved", dir);
	snprintf(decoy_dir, sizeof(decoy_dir), "%s.decoy", dir);
	ck_assert_int_eq(mkdir(decoy_dir, 0755), 0);
	ck_assert_int_eq(xp_rundir_open(&d, dir, err, sizeof(err)), 0);
	ck_assert_int_eq(xp_tmpdb_create(&d, &t), 0);
	snprintf(decoy, sizeof(decoy), "%s/%s", decoy_dir, t.name);
	ck_assert_int_ge(fd = open(decoy, O_CREAT | O_EXCL | O_RDWR, 0644), 0);
	close(fd);
	ck_assert_int_eq(rename(dir, moved), 0);
	ck_assert_int_eq(symlink(decoy_dir, dir), 0);
	ck_assert_int_eq(xp_tmpdb_open(&d, &t, &db), SQLITE_OK);
	ck_assert_int_eq(sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES(42);", NULL,
				      NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(sqlite3_close(db), SQLITE_OK);
	ck_assert_int_eq(stat(decoy, &st), 0);
	ck_assert_int_eq(st.st_size, 0);                /* the decoy: untouched */
	ck_assert_int_eq(fstat(t.fd, &st), 0);
	ck_assert_int_gt(st.st_size, 0);                /* ours: written */
	xp_tmpdb_discard(&d, &t);
	xp_rundir_close(&d);
	unlink(dir);
	ck_assert_int_eq(rename(moved, dir), 0);
	unlink(decoy);
	rmdir(decoy_dir);
}
END_TEST

START_TEST(killed_ingests_temporary_database_removed_by_a_reader)
{
	struct xp_load_result res;
	char path[256], err[256];
	struct xp_rundir d;
	sqlite3 *db;
	int ingested, fd;

	ck_assert_int_eq(ingest(0, &res), 0);
	/* what a SIGKILLed ingest leaves: a file nobody holds a lock on, named
	 * by a pid that may be anyone's (another pid namespace) */
	snprintf(path, sizeof(path), "%s/" XP_DB_TMP_PREFIX "%ld-00000000deadbeef", dir,
		 (long)getpid());
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	/* a live one, locked, with a pid that exists nowhere here */
	snprintf(path, sizeof(path), "%s/" XP_DB_TMP_PREFIX "4194000", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(flock(fd, LOCK_EX), 0);
	ck_assert_int_eq(count_temps(path, sizeof(path)), 2);
	ck_assert_int_eq(xp_ingest_open(&(struct xp_load_opts){ .run_dir = dir }, &db, &ingested, &res), 0);
	ck_assert_int_eq(ingested, 0);                  /* a reader, no ingest */
	sqlite3_close(db);
	ck_assert_int_eq(count_temps(path, sizeof(path)), 1);
	ck_assert_ptr_nonnull(strstr(path, "tmp-4194000"));
	close(fd);                                      /* that ingest died too */
	ck_assert_int_eq(xp_rundir_open(&d, dir, err, sizeof(err)), 0);
	xp_rundir_remove_stale(&d);
	xp_rundir_close(&d);
	ck_assert_int_eq(count_temps(path, sizeof(path)), 0);
}
END_TEST

START_TEST(database_that_is_no_regular_file)
{
	struct xp_load_result res;
	char err[256];
	sqlite3 *db = NULL;
	int ingested;

	/* a FIFO: not opened (it would block), said, ingested again */
	ck_assert_int_eq(mkfifo(db_path, 0644), 0);
	ck_assert_int_eq(xp_ingest_is_fresh(dir), 0);
	ck_assert_int_eq(xp_ingest_open(&(struct xp_load_opts){ .run_dir = dir }, &db, &ingested, &res), 0);
	ck_assert_int_eq(ingested, 1);
	ck_assert(has_warning(&res, "xpcorr.db is a FIFO, not a database"));
	sqlite3_close(db);
	ck_assert_int_eq(query("SELECT count(*) FROM xp_samples"), 18);
	/* named directly: refused in one line */
	ck_assert_int_eq(unlink(db_path), 0);
	ck_assert_int_eq(mkfifo(db_path, 0644), 0);
	ck_assert_int_eq(xp_db_open_file(db_path, &db, err, sizeof(err)), -ENXIO);
	ck_assert_ptr_null(db);
	ck_assert_msg(strstr(err, "is a FIFO, not a database"), "%s", err);
	/* a link to a database elsewhere is not followed */
	ck_assert_int_eq(unlink(db_path), 0);
	ck_assert_int_eq(symlink("/dev/null", db_path), 0);
	ck_assert_int_eq(xp_ingest_is_fresh(dir), 0);
	ck_assert_int_eq(xp_db_open_file(db_path, &db, err, sizeof(err)), -ENXIO);
	ck_assert_msg(strstr(err, "is a symbolic link"), "%s", err);
}
END_TEST

/* A database failure while a GPU stream is loaded stops the load with the
 * database's message: it is no damage in the stream, to be warned about
 * and skipped (the loader's string sink once returned -1, read as -EPERM). */
START_TEST(gpu_stream_database_failure_is_an_error)
{
	char run[128];
	struct xp_load_opts o = { .run_dir = run };
	struct xp_load_result res;
	sqlite3 *db;

	snprintf(run, sizeof(run), "%s/scale", dir);
	ck_assert_int_eq(mkdir(run, 0700), 0);
	ck_assert_int_eq(xp_synth_write_scale(&fx, run, 200, 1), 0);
	ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	ck_assert_int_eq(xp_db_create_schema(db), SQLITE_OK);
	ck_assert_int_eq(xp_gpu_schema_create(db), SQLITE_OK);
	/* kernel names come only from the GPU streams (pass 3) */
	ck_assert_int_eq(sqlite3_exec(db, "CREATE TEMP TRIGGER no_kernels BEFORE INSERT ON StringIds"
				      " WHEN NEW.value LIKE '_Z8gemm_%' BEGIN"
				      " SELECT RAISE(ABORT, 'kernel names refused'); END; BEGIN;",
				      NULL, NULL, NULL), SQLITE_OK);
	ck_assert_int_eq(xp_load_run(db, &o, &res), -EIO);
	ck_assert_msg(strstr(res.error, "kernel names refused"), "error: %s", res.error);
	ck_assert_msg(!has_warning(&res, "Operation not permitted"), "warning: %s", res.warnings[0]);
	sqlite3_close(db);
}
END_TEST

Suite *ingest_suite(void)
{
	Suite *s = suite_create("ingest");
	TCase *tc = tcase_create("run");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, good_run_loads_symbolized);
	tcase_add_test(tc, meta_loss_keys_take_the_database_names);
	tcase_add_test(tc, truncated_keeps_valid_part_or_fails_strict);
	tcase_add_test(tc, every_byte_flipped_never_crashes);
	tcase_add_test(tc, zero_filled_and_wrong_magic_refused);
	tcase_add_test(tc, future_version_refused_clearly);
	tcase_add_test(tc, missing_or_broken_meta_is_a_warning);
	tcase_add_test(tc, failed_ingest_leaves_previous_db);
	tcase_add_test(tc, stale_db_detected);
	tcase_add_test(tc, hostile_record_sizes_and_depths);
	tcase_add_test(tc, temporary_database_is_ours_locked_and_checked);
	tcase_add_test(tc, temporary_database_written_through_its_descriptor);
	tcase_add_test(tc, killed_ingests_temporary_database_removed_by_a_reader);
	tcase_add_test(tc, database_that_is_no_regular_file);
	tcase_add_test(tc, gpu_stream_database_failure_is_an_error);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(ingest_suite)
