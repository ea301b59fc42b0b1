/* rundb.c - the run directory's database files, opened and created safely;
 * see rundb.h. */
#include "db/rundb.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "db/dbcheck.h"
#include "db/fddb.h"
#include "src/runfmt.h"
#include "src/safeopen.h"

const char *xp_file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return "a regular file";
	case S_IFDIR: return "a directory";
	case S_IFLNK: return "a symbolic link";
	case S_IFIFO: return "a FIFO";
	case S_IFSOCK: return "a socket";
	default: return "a device";
	}
}

/* The directory's path without links, as the kernel names the fd; else
 * realpath. Either must still be the directory we opened. */
static int canonical(struct xp_rundir *d, const struct stat *st)
{
	char proc[64];
	struct stat pst;
	ssize_t n;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", d->fd);
	n = readlink(proc, d->path, sizeof(d->path) - 1);
	d->path[n > 0 ? n : 0] = '\0';
	if (d->path[0] == '/' && !stat(d->path, &pst) && pst.st_dev == st->st_dev &&
	    pst.st_ino == st->st_ino)
		return 0;
	if (realpath(d->name, d->path) && !stat(d->path, &pst) && pst.st_dev == st->st_dev &&
	    pst.st_ino == st->st_ino)
		return 0;
	return -ESTALE;
}

void xp_rundir_close(struct xp_rundir *d)
{
	xp_fsident__leave(&d->ident, &d->as_owner);
	xp_fsident__free(&d->ident);
	if (d->fd >= 0)
		close(d->fd);
	d->fd = -1;
}

int xp_rundir_open(struct xp_rundir *d, const char *run_dir, char *err, size_t len)
{
	struct stat st;
	int e;

	memset(d, 0, sizeof(*d));
	d->name = run_dir;
	/* a link in the name the user typed is theirs to follow; from here on
	 * only this fd, so nothing swapped later changes which directory */
	d->fd = open(run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d->fd < 0) {
		e = -errno;
		snprintf(err, len, "cannot open %s: %s", run_dir, strerror(errno));
		return e;
	}
	if (fstat(d->fd, &st)) {
		e = -errno;
		snprintf(err, len, "cannot open %s: %s", run_dir, strerror(errno));
		goto fail;
	}
	d->owner = st.st_uid;
	d->group = st.st_gid;
	d->mode = st.st_mode;
	e = canonical(d, &st);
	if (e) {
		snprintf(err, len, "cannot resolve %s: it moved while being opened", run_dir);
		goto fail;
	}
	/* root in another user's directory: that user's identity, no
	 * supplementary groups; ingest is one thread */
	if (geteuid() == 0 && st.st_uid != 0) {
		e = xp_fsident__init(&d->ident, d->owner, d->group, false);
		if (!e)
			e = xp_fsident__enter(&d->ident, &d->as_owner);
		if (e) {
			snprintf(err, len, "cannot act as the owner (uid %u) of %s: %s",
				 (unsigned)st.st_uid, run_dir, strerror(-e));
			goto fail;
		}
	}
	return 0;
fail:
	xp_rundir_close(d);
	return e;
}

/* The owner's own group (their primary group, named after them, no other
 * member): what umask 002 systems give every directory; no one else can
 * write through it. */
static int private_group(gid_t gid, uid_t owner)
{
	struct passwd *pw = getpwuid(owner);
	struct group *gr;

	if (!pw || pw->pw_gid != gid || !(gr = getgrgid(gid)) || strcmp(gr->gr_name, pw->pw_name))
		return 0;
	for (char **m = gr->gr_mem; m && *m; m++)
		if (strcmp(*m, pw->pw_name))
			return 0;
	return 1;
}

int xp_rundir_check_write(const struct xp_rundir *d, int trust, char *err, size_t len)
{
	char who[300];

	if (trust || geteuid() != 0 || (d->mode & S_ISVTX))
		return 0;
	if (d->mode & S_IWOTH) {
		snprintf(who, sizeof(who), "every user");
	} else if ((d->mode & S_IWGRP) && !private_group(d->group, d->owner)) {
		struct group *gr = getgrgid(d->group);

		if (gr)
			snprintf(who, sizeof(who), "group %s", gr->gr_name);
		else
			snprintf(who, sizeof(who), "group %u", (unsigned)d->group);
	} else {
		return 0;
	}
	snprintf(err, len, "refusing to write into %s as root: %s may write into it too (mode %04o);"
		 " copy the run to a directory of your own, or run xpcorr ingest --trust-run-dir %s",
		 d->name, who, (unsigned)(d->mode & 07777), d->name);
	return -EPERM;
}

/* Our schema before any query (dbcheck.h), then bounded work. */
static int checked(sqlite3 **db, uint64_t bytes, const char *shown, char *err, size_t len)
{
	char why[400];
	int e;

	xp_db_limit_received(*db);
	xp_db_limit_work(*db, bytes);
	e = xp_db_check_schema(*db, why, sizeof(why));
	if (!e)
		return 0;
	if (e == -EIO)
		snprintf(err, len, "cannot read %s: %s", shown, why);
	else
		snprintf(err, len, "%s is not a database of this xpcorr: %s", shown, why);
	sqlite3_close(*db);
	*db = NULL;
	return e;
}

/* A database file to open: rel in dirfd, sqlite_path its name for
 * SQLite, shown in messages; given: a file the user named, shown so where
 * it plainly is no database. */
struct db_place {
	int dirfd;
	const char *rel, *sqlite_path, *shown, *given;
};

/* "PATH is a FIFO, not a database" and the like, after xp_open_regular's
 * e: what is at the name now. */
static int not_opened(const struct db_place *at, int e, char *err, size_t len)
{
	struct stat st;

	if (e != -ELOOP && e != -ENXIO) {
		snprintf(err, len, "cannot open %s: %s", at->shown, strerror(-e));
		return e;
	}
	if (!fstatat(at->dirfd, at->rel, &st, AT_SYMLINK_NOFOLLOW) && !S_ISREG(st.st_mode))
		snprintf(err, len, "%s is %s, not a database", at->shown, xp_file_kind(st.st_mode));
	else
		snprintf(err, len, "cannot open %s: it was replaced while being opened", at->shown);
	return -ENXIO;
}

/* A file the user named that plainly is no database (empty, a run's
 * record stream, no SQLite header): said instead of a schema version. */
static int plainly_not(int fd, const struct stat *st, const struct db_place *at, char *err,
		       size_t len)
{
	char head[16] = { 0 };
	size_t n = strlen(at->rel);

	if (st->st_size == 0) {
		snprintf(err, len, "%s is an empty file, not a database: give a run directory or its "
			 XP_DB_NAME, at->given);
		return -EBADMSG;
	}
	if (pread(fd, head, sizeof(head), 0) < 0)
		head[0] = '\0';
	if (!memcmp(head, "SQLite format 3", 16))
		return 0;
	if (!memcmp(head, XP_MAGIC, 8) || (n > 4 && !strcmp(at->rel + n - 4, ".xpr")))
		snprintf(err, len, "%s is a record stream of a run, not a database: give its run"
			 " directory", at->given);
	else
		snprintf(err, len, "%s is not a database (no SQLite header): give a run directory or"
			 " its " XP_DB_NAME, at->given);
	return -EBADMSG;
}

/* Regular files only, opened without blocking (a FIFO) or following a
 * link; then SQLite on that descriptor (fddb.h), never on the name: what
 * is checked is what is read, whatever the name leads to by then. */
static int open_db(const struct db_place *at, sqlite3 **db, char *err, size_t len)
{
	struct stat st;
	int fd, e;

	*db = NULL;
	fd = xp_open_regular(at->dirfd, at->rel, 0, &st);
	if (fd < 0)
		return not_opened(at, fd, err, len);
	if (at->given && (e = plainly_not(fd, &st, at, err, len))) {
		close(fd);
		return e;
	}
	e = xp_db_open_fd(fd, at->sqlite_path, db);
	close(fd);
	if (e != SQLITE_OK) {
		snprintf(err, len, "cannot open %s: %s", at->shown,
			 *db ? sqlite3_errmsg(*db) : "out of memory");
		sqlite3_close(*db);
		*db = NULL;
		return -EIO;
	}
	return checked(db, (uint64_t)st.st_size, at->shown, err, len);
}

int xp_db_open_file(const char *path, sqlite3 **db, char *err, size_t len)
{
	return open_db(&(struct db_place){ AT_FDCWD, path, path, path, NULL }, db, err, len);
}

int xp_db_open_given(const char *path, const char *given, sqlite3 **db, char *err, size_t len)
{
	return open_db(&(struct db_place){ AT_FDCWD, path, path, path, given }, db, err, len);
}

static const char *db_name(const struct xp_rundir *d)
{
	return d->db_name ? d->db_name : XP_DB_NAME;
}

int xp_rundir_open_db(struct xp_rundir *d, sqlite3 **db, char *err, size_t len)
{
	char path[2 * PATH_MAX], shown[2 * PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", d->path, db_name(d));
	snprintf(shown, sizeof(shown), "%s/%s", d->name, db_name(d));
	return open_db(&(struct db_place){ d->fd, db_name(d), path, shown, NULL }, db, err, len);
}

int xp_db_open_again(sqlite3 *db, sqlite3 **again)
{
	const char *path = sqlite3_db_filename(db, "main");
	char err[PATH_MAX + 128];
	int fd = xp_db_fd(db);

	*again = NULL;
	/* not a file we opened (one just ingested, still writable) */
	if (fd < 0 || !path)
		return -ENOENT;
	/* the very file db reads, through its descriptor: no name looked up;
	 * its queries' work bounded by the budget the first connection brought */
	if (xp_db_open_fd(fd, path, again) != SQLITE_OK) {
		sqlite3_close(*again);
		*again = NULL;
		return -EIO;
	}
	return checked(again, 0, path, err, sizeof(err));
}

int xp_rundir_stat_db(const struct xp_rundir *d, struct stat *st)
{
	return fstatat(d->fd, db_name(d), st, AT_SYMLINK_NOFOLLOW) ? -errno : 0;
}

static void random_name(struct xp_tmpdb *t)
{
	uint64_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)clock();
	snprintf(t->name, sizeof(t->name), XP_DB_TMP_PREFIX "%ld-%016" PRIx64, (long)getpid(), r);
}

/* O_TMPFILE, locked, then given its name: no one ever sees it unlocked.
 * 0 with *out, 1 when this filesystem cannot (then O_EXCL), or -errno. */
static int create_unnamed(struct xp_rundir *d, struct xp_tmpdb *t, int *out)
{
	char proc[64];
	int fd = openat(d->fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0644), e;

	*out = -1;
	if (fd < 0)
		return errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL ? 1 : -errno;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		e = -errno;
		close(fd);
		return e;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, d->fd, t->name, AT_SYMLINK_FOLLOW)) {
		e = errno;
		close(fd);
		return e == ENOENT ? 1 : -e;    /* ENOENT: no /proc */
	}
	*out = fd;
	return 0;
}

int xp_tmpdb_create(struct xp_rundir *d, struct xp_tmpdb *t)
{
	struct stat st;
	int fd = -1, e;

	t->fd = -1;
	for (int tries = 0; tries < 16 && fd < 0; tries++) {
		random_name(t);
		e = create_unnamed(d, t, &fd);
		if (e == -EEXIST)
			continue;
		if (e < 0)
			return e;
		if (e == 1) {
			/* a reader may find it in the instant before the lock and
			 * remove it: then SQLite finds no file and the ingest fails */
			fd = openat(d->fd, t->name, O_CREAT | O_EXCL | O_NOFOLLOW | O_RDWR | O_CLOEXEC,
				    0644);
			if (fd < 0 && errno == EEXIST)
				continue;
			if (fd < 0)
				return -errno;
			if (flock(fd, LOCK_EX | LOCK_NB)) {
				close(fd);
				fd = -1;
				continue;
			}
		}
	}
	if (fd < 0)
		return -EEXIST;
	if (fstat(fd, &st)) {
		e = -errno;
		close(fd);
		unlinkat(d->fd, t->name, 0);
		return e;
	}
	t->fd = fd;
	t->dev = st.st_dev;
	t->ino = st.st_ino;
	return 0;
}

int xp_tmpdb_open(const struct xp_rundir *d, const struct xp_tmpdb *t, sqlite3 **db)
{
	char path[PATH_MAX + 80];

	snprintf(path, sizeof(path), "%s/%s", d->path, t->name);
	int rc;

	/* through the descriptor we made and locked, never the name: the run's
	 * owner may swap the directory or the name meanwhile (fddb.h); no
	 * journal beside it (a file by name): a failed write discards it whole */
	rc = xp_db_create_fd(t->fd, path, db);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(*db, "PRAGMA journal_mode=OFF", NULL, NULL, NULL);
	return rc;
}

/* The name still leads to the file we made (not a link put in its place). */
static int still_ours(const struct xp_rundir *d, const struct xp_tmpdb *t)
{
	struct stat st;

	return !fstatat(d->fd, t->name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode) &&
	       st.st_dev == t->dev && st.st_ino == t->ino;
}

int xp_tmpdb_commit(struct xp_rundir *d, struct xp_tmpdb *t)
{
	/* the data on disk before the name: a crash never leaves an empty db */
	if (fsync(t->fd))
		return -errno;
	if (!still_ours(d, t))
		return -ESTALE;
	if (renameat(d->fd, t->name, d->fd, db_name(d)))
		return -errno;
	fsync(d->fd);
	close(t->fd);
	t->fd = -1;
	return 0;
}

void xp_tmpdb_discard(struct xp_rundir *d, struct xp_tmpdb *t)
{
	if (t->fd < 0)
		return;
	if (still_ours(d, t))
		unlinkat(d->fd, t->name, 0);
	close(t->fd);
	t->fd = -1;
}

void xp_rundir_remove_stale(struct xp_rundir *d)
{
	DIR *dir = xp_opendir_at(d->fd, ".");
	struct dirent *de;

	if (!dir)
		return;
	while ((de = readdir(dir))) {
		struct xp_tmpdb t = { .fd = -1 };
		struct stat st;

		if (strncmp(de->d_name, XP_DB_TMP_PREFIX, sizeof(XP_DB_TMP_PREFIX) - 1) ||
		    strlen(de->d_name) >= sizeof(t.name))
			continue;
		t.fd = xp_open_regular(d->fd, de->d_name, 0, &st);
		if (t.fd < 0)
			continue;
		snprintf(t.name, sizeof(t.name), "%s", de->d_name);
		/* locked: a live ingest, whatever its pid namespace (ours too) */
		if (flock(t.fd, LOCK_EX | LOCK_NB)) {
			close(t.fd);
			continue;
		}
		t.dev = st.st_dev;
		t.ino = st.st_ino;
		xp_tmpdb_discard(d, &t);
	}
	closedir(dir);
}
