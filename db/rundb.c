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

/* file:PATH?immutable=1: ingest never changes a database in place (it
 * renames a new one over it), so a reader needs no lock and no -journal,
 * -wal or -shm file, which a run's owner could plant. */
static int uri(const char *path, char *out, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	static const char tail[] = "?immutable=1";
	size_t n = 0;

	n += (size_t)snprintf(out, len, "file:");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (n + 4 > len)
			return -ENAMETOOLONG;
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("/-_.~", *p)) {
			out[n++] = (char)*p;
		} else {
			out[n++] = '%';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 15];
		}
	}
	if (n + sizeof(tail) > len)
		return -ENAMETOOLONG;
	memcpy(out + n, tail, sizeof(tail));
	return 0;
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

/* A database file to open: rel in dirfd, sqlite_path for SQLite, shown in
 * messages; again: a second connection to a file opened already, whose
 * queries' work is bounded by the budget the first one brought. */
struct db_place {
	int dirfd;
	const char *rel, *sqlite_path, *shown;
	int again;
};

/* Regular files only, opened without blocking (a FIFO) or following a
 * link; then SQLite, which must not follow one either. */
static int open_db(const struct db_place *at, sqlite3 **db, char *err, size_t len)
{
	int dirfd = at->dirfd;
	const char *rel = at->rel, *sqlite_path = at->sqlite_path, *shown = at->shown;
	char path[3 * PATH_MAX + 32];
	struct stat st;
	int fd, e;

	*db = NULL;
	if (fstatat(dirfd, rel, &st, AT_SYMLINK_NOFOLLOW)) {
		e = -errno;
		snprintf(err, len, "cannot open %s: %s", shown, strerror(errno));
		return e;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, len, "%s is %s, not a database", shown, xp_file_kind(st.st_mode));
		return -ENXIO;
	}
	fd = xp_open_regular(dirfd, rel, 0, &st);
	if (fd < 0) {
		e = fd == -ELOOP ? -ENXIO : fd;
		snprintf(err, len, "cannot open %s: %s", shown,
			 e == -ENXIO ? "it was replaced while being opened" : strerror(-e));
		return e;
	}
	/* our fd stays open until SQLite has its own: closing it later would
	 * drop SQLite's POSIX locks, and it holds none yet */
	e = uri(sqlite_path, path, sizeof(path)) ? SQLITE_CANTOPEN :
		sqlite3_open_v2(path, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW |
				SQLITE_OPEN_URI, NULL);
	close(fd);
	if (e != SQLITE_OK) {
		snprintf(err, len, "cannot open %s: %s", shown,
			 *db ? sqlite3_errmsg(*db) : "out of memory");
		sqlite3_close(*db);
		*db = NULL;
		return -EIO;
	}
	return checked(db, at->again ? 0 : (uint64_t)st.st_size, shown, err, len);
}

static int open_file(const char *path, int again, sqlite3 **db, char *err, size_t len)
{
	return open_db(&(struct db_place){ AT_FDCWD, path, path, path, again }, db, err, len);
}

int xp_db_open_file(const char *path, sqlite3 **db, char *err, size_t len)
{
	return open_file(path, 0, db, err, len);
}

static const char *db_name(const struct xp_rundir *d)
{
	return d->db_name ? d->db_name : XP_DB_NAME;
}

static int open_run_db(struct xp_rundir *d, int again, sqlite3 **db, char *err, size_t len)
{
	char path[2 * PATH_MAX], shown[2 * PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", d->path, db_name(d));
	snprintf(shown, sizeof(shown), "%s/%s", d->name, db_name(d));
	return open_db(&(struct db_place){ d->fd, db_name(d), path, shown, again }, db, err, len);
}

int xp_rundir_open_db(struct xp_rundir *d, sqlite3 **db, char *err, size_t len)
{
	return open_run_db(d, 0, db, err, len);
}

int xp_db_open_again(sqlite3 *db, sqlite3 **again)
{
	const char *path = sqlite3_db_filename(db, "main"), *base;
	char dir[PATH_MAX], err[PATH_MAX + 128];
	struct xp_rundir d;
	int e;

	*again = NULL;
	if (!path || path[0] != '/' || sqlite3_db_readonly(db, "main") != 1)
		return -ENOENT;
	base = strrchr(path, '/') + 1;
	if (strcmp(base, XP_DB_NAME))
		return open_file(path, 1, again, err, sizeof(err));
	if ((size_t)(base - path) >= sizeof(dir))
		return -ENAMETOOLONG;
	snprintf(dir, sizeof(dir), "%.*s", (int)(base - path - 1), path);
	if ((e = xp_rundir_open(&d, dir[0] ? dir : "/", err, sizeof(err))) < 0)
		return e;
	e = open_run_db(&d, 1, again, err, sizeof(err));
	xp_rundir_close(&d);
	return e;
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
	/* one thread: no SQLite mutex around every call (7% of the correlation);
	 * no CREATE: SQLite opens the file we made or nothing */
	return sqlite3_open_v2(path, db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW |
			       SQLITE_OPEN_NOMUTEX, NULL);
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
