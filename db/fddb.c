/* fddb.c - SQLite on a descriptor, never a name (fddb.h): the "xp-fd" VFS,
 * the default VFS with its open of the main database replaced. */
#include "db/fddb.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define VFS_NAME "xp-fd"

struct fd_file {
	sqlite3_file base;
	int fd;                     /* our dup of the caller's descriptor */
};

static sqlite3_vfs fd_vfs;
static sqlite3_vfs *real;           /* the default VFS: temporary files, time, randomness */

static int fd_close(sqlite3_file *f)
{
	close(((struct fd_file *)f)->fd);
	return SQLITE_OK;
}

static int fd_read(sqlite3_file *f, void *buf, int amt, sqlite3_int64 off)
{
	int fd = ((struct fd_file *)f)->fd;
	char *p = buf;
	int got = 0;

	while (got < amt) {
		ssize_t n = pread(fd, p + got, (size_t)(amt - got), off + got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return SQLITE_IOERR_READ;
		if (n == 0)
			break;
		got += (int)n;
	}
	if (got == amt)
		return SQLITE_OK;
	/* SQLite's rule: the rest zeroed (a file cut short by its owner reads as
	 * a damaged database, not stale bytes) */
	memset(p + got, 0, (size_t)(amt - got));
	return SQLITE_IOERR_SHORT_READ;
}

static int fd_write(sqlite3_file *f, const void *buf, int amt, sqlite3_int64 off)
{
	(void)f, (void)buf, (void)amt, (void)off;
	return SQLITE_READONLY;
}

static int fd_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	(void)f, (void)size;
	return SQLITE_READONLY;
}

static int fd_sync(sqlite3_file *f, int flags)
{
	(void)f, (void)flags;
	return SQLITE_OK;
}

/* The writable file (xp_db_create_fd): ours alone, locked by its maker. */
static int rw_write(sqlite3_file *f, const void *buf, int amt, sqlite3_int64 off)
{
	int fd = ((struct fd_file *)f)->fd;
	const char *p = buf;
	int put = 0;

	while (put < amt) {
		ssize_t n = pwrite(fd, p + put, (size_t)(amt - put), off + put);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return errno == ENOSPC || errno == EDQUOT ? SQLITE_FULL : SQLITE_IOERR_WRITE;
		put += (int)n;
	}
	return SQLITE_OK;
}

static int rw_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	return ftruncate(((struct fd_file *)f)->fd, size) ? SQLITE_IOERR_TRUNCATE : SQLITE_OK;
}

static int rw_sync(sqlite3_file *f, int flags)
{
	(void)flags;
	return fdatasync(((struct fd_file *)f)->fd) ? SQLITE_IOERR_FSYNC : SQLITE_OK;
}

static int rw_device(sqlite3_file *f)
{
	(void)f;
	return 0;
}

static int fd_size(sqlite3_file *f, sqlite3_int64 *size)
{
	struct stat st;

	if (fstat(((struct fd_file *)f)->fd, &st))
		return SQLITE_IOERR_FSTAT;
	*size = st.st_size;
	return SQLITE_OK;
}

/* immutable: SQLite takes no lock, but answers are owed */
static int fd_lock(sqlite3_file *f, int level)
{
	(void)f, (void)level;
	return SQLITE_OK;
}

static int fd_reserved(sqlite3_file *f, int *out)
{
	(void)f;
	*out = 0;
	return SQLITE_OK;
}

static int fd_control(sqlite3_file *f, int op, void *arg)
{
	(void)f, (void)op, (void)arg;
	return SQLITE_NOTFOUND;
}

static int fd_sector(sqlite3_file *f)
{
	(void)f;
	return 4096;
}

static int fd_device(sqlite3_file *f)
{
	(void)f;
	return SQLITE_IOCAP_IMMUTABLE;
}

/* version 1: no shared memory (no WAL) and no memory mapping, whose pages
 * would fault (SIGBUS) once the owner truncates the file */
static const sqlite3_io_methods fd_methods = {
	.iVersion = 1, .xClose = fd_close, .xRead = fd_read, .xWrite = fd_write,
	.xTruncate = fd_truncate, .xSync = fd_sync, .xFileSize = fd_size, .xLock = fd_lock,
	.xUnlock = fd_lock, .xCheckReservedLock = fd_reserved, .xFileControl = fd_control,
	.xSectorSize = fd_sector, .xDeviceCharacteristics = fd_device,
};

/* The same, writable: no journal (ingest's temporary database runs with
 * journal_mode=OFF and is renamed into place once whole), no lock beyond
 * the flock its maker holds. */
static const sqlite3_io_methods rw_methods = {
	.iVersion = 1, .xClose = fd_close, .xRead = fd_read, .xWrite = rw_write,
	.xTruncate = rw_truncate, .xSync = rw_sync, .xFileSize = fd_size, .xLock = fd_lock,
	.xUnlock = fd_lock, .xCheckReservedLock = fd_reserved, .xFileControl = fd_control,
	.xSectorSize = fd_sector, .xDeviceCharacteristics = rw_device,
};

static int fd_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
	struct fd_file *ff = (struct fd_file *)f;
	int rw = (flags & SQLITE_OPEN_READWRITE) != 0, mode;
	sqlite3_int64 given;
	struct stat st;

	(void)vfs;
	/* SQLite's nameless temporary files (sorts, transient tables): its own */
	if (!name)
		return real->xOpen(real, name, f, flags, out);
	if (!(flags & SQLITE_OPEN_MAIN_DB) || (flags & SQLITE_OPEN_CREATE) ||
	    rw != sqlite3_uri_boolean(name, "xp_rw", 0))
		return SQLITE_CANTOPEN;
	given = sqlite3_uri_int64(name, "xp_fd", -1);
	if (given < 0 || given > INT32_MAX)
		return SQLITE_CANTOPEN;
	ff->fd = fcntl((int)given, F_DUPFD_CLOEXEC, 3);
	if (ff->fd < 0)
		return SQLITE_CANTOPEN;
	mode = fcntl(ff->fd, F_GETFL);
	if (fstat(ff->fd, &st) || !S_ISREG(st.st_mode) || mode < 0 ||
	    (rw && (mode & O_ACCMODE) != O_RDWR)) {
		close(ff->fd);
		return SQLITE_CANTOPEN;
	}
	ff->base.pMethods = rw ? &rw_methods : &fd_methods;
	if (out)
		*out = rw ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY;
	return SQLITE_OK;
}

/* No file of ours is ever removed, and none beside the database exists
 * (a -journal or -wal its owner planted is never looked at). */
static int fd_delete(sqlite3_vfs *vfs, const char *name, int sync)
{
	(void)vfs, (void)name, (void)sync;
	return SQLITE_IOERR_DELETE;
}

static int fd_access(sqlite3_vfs *vfs, const char *name, int what, int *out)
{
	(void)vfs, (void)name, (void)what;
	*out = 0;
	return SQLITE_OK;
}

/* The name as given: resolving it (links included) is what we avoid. */
static int fd_fullpath(sqlite3_vfs *vfs, const char *name, int len, char *out)
{
	(void)vfs;
	if ((int)strlen(name) >= len)
		return SQLITE_CANTOPEN;
	memcpy(out, name, strlen(name) + 1);
	return SQLITE_OK;
}

static void setup(void)
{
	real = sqlite3_vfs_find(NULL);
	if (!real)
		return;
	fd_vfs = *real;
	fd_vfs.pNext = NULL;
	fd_vfs.zName = VFS_NAME;
	fd_vfs.pAppData = NULL;
	if ((size_t)fd_vfs.szOsFile < sizeof(struct fd_file))
		fd_vfs.szOsFile = (int)sizeof(struct fd_file);
	fd_vfs.xOpen = fd_open;
	fd_vfs.xDelete = fd_delete;
	fd_vfs.xAccess = fd_access;
	fd_vfs.xFullPathname = fd_fullpath;
	if (sqlite3_vfs_register(&fd_vfs, 0) != SQLITE_OK)
		real = NULL;
}

/* file:PATH?immutable=1&xp_fd=N (writable: ?xp_rw=1&xp_fd=N), PATH
 * percent-encoded */
static char *uri(const char *path, int fd, int rw)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(path), at = 0;
	char *u = malloc(3 * n + 64);

	if (!u)
		return NULL;
	at += (size_t)sprintf(u, "file:");
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("/-_.~", *p)) {
			u[at++] = (char)*p;
		} else {
			u[at++] = '%';
			u[at++] = hex[*p >> 4];
			u[at++] = hex[*p & 15];
		}
	}
	sprintf(u + at, rw ? "?xp_rw=1&xp_fd=%d" : "?immutable=1&xp_fd=%d", fd);
	return u;
}

int xp_db_fd(sqlite3 *db)
{
	sqlite3_file *f = NULL;

	if (sqlite3_file_control(db, "main", SQLITE_FCNTL_FILE_POINTER, &f) != SQLITE_OK || !f ||
	    (f->pMethods != &fd_methods && f->pMethods != &rw_methods))
		return -1;
	return ((struct fd_file *)f)->fd;
}

static int open_fd(int fd, const char *path, int rw, sqlite3 **db)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	char *name;
	int rc;

	*db = NULL;
	pthread_once(&once, setup);
	if (!real)
		return SQLITE_ERROR;
	if (!(name = uri(path, fd, rw)))
		return SQLITE_NOMEM;
	/* one thread a writable connection: no SQLite mutex around every call */
	rc = sqlite3_open_v2(name, db, SQLITE_OPEN_URI | (rw ? SQLITE_OPEN_READWRITE |
				SQLITE_OPEN_NOMUTEX : SQLITE_OPEN_READONLY), VFS_NAME);
	free(name);
	return rc;
}

int xp_db_open_fd(int fd, const char *path, sqlite3 **db)
{
	return open_fd(fd, path, 0, db);
}

int xp_db_create_fd(int fd, const char *path, sqlite3 **db)
{
	return open_fd(fd, path, 1, db);
}
