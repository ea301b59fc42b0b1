/* rundb.h - the run directory as ingest and the readers touch it: opened
 * once, every database opened and created through its fd. A run may come
 * from another user or another machine, so:
 *   - a run's xpcorr.db is opened read-only only when it is a regular file
 *     (O_NOFOLLOW|O_NONBLOCK, fstat), and SQLite reads that descriptor
 *     (fddb.h), never the name again: a FIFO, device, link or directory put
 *     there at any moment never hangs, redirects or confuses a reader;
 *   - the temporary database is made by us, exclusively, in the directory,
 *     flock'ed while the ingest lives, and SQLite only opens that existing
 *     file (never SQLITE_OPEN_CREATE): it can create nothing anywhere;
 *   - as root, in a directory owned by someone else, all file work runs
 *     with that owner's filesystem identity (setfsuid/setfsgid, no
 *     supplementary groups), so nothing root-owned lands there and no link
 *     of theirs leads root anywhere; a directory others may write into is
 *     refused for writing unless trusted explicitly.
 *
 *   struct xp_rundir d;
 *   char err[512];
 *   if (xp_rundir_open(&d, "run", err, sizeof(err)) < 0) fail(err);
 *   xp_rundir_remove_stale(&d);           // temps of killed ingests
 *   xp_rundir_open_db(&d, &db, err, sizeof(err));
 *   xp_rundir_close(&d);                  // the caller's identity again
 */
#ifndef XP_RUNDB_H
#define XP_RUNDB_H

#include <limits.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <sqlite3.h>

#include "src/fsident.h"

#define XP_DB_NAME "xpcorr.db"
#define XP_DB_TMP_PREFIX XP_DB_NAME ".tmp-"

struct xp_rundir {
	int fd;                         /* the run directory, O_DIRECTORY */
	const char *name;               /* as the user gave it, for messages */
	char path[PATH_MAX];            /* canonical (no links), for SQLite */
	uid_t owner;                    /* of the directory */
	gid_t group;
	mode_t mode;
	struct xp_fsident ident;         /* the owner's, when root acts as them */
	struct xp_fsident_saved as_owner; /* on: root acts as the owner until close */
	const char *db_name;            /* the database's name in it; NULL: xpcorr.db */
};

struct xp_tmpdb {
	int fd;                         /* ours, flock'ed; -1 when none */
	char name[64];                  /* xpcorr.db.tmp-PID-RANDOM */
	dev_t dev;                      /* what we made, checked before rename */
	ino_t ino;
};

/* Opens run_dir once; as root, takes on the owner's filesystem identity
 * when that is another user. 0 or a negative errno with err set. */
int xp_rundir_open(struct xp_rundir *d, const char *run_dir, char *err, size_t len);
/* Gives the caller's identity back and closes the directory. */
void xp_rundir_close(struct xp_rundir *d);
/* Whether this process may write into the directory: as root, not when
 * its group (other than the owner's own) or others may write into it
 * without the sticky bit, unless trust is set. 0 or -EPERM with err. */
int xp_rundir_check_write(const struct xp_rundir *d, int trust, char *err, size_t len);

/* The one way to open an existing database read-only: the regular file
 * path (its last component never followed; the caller resolved the links
 * of a path the user gave), opened once and read through that descriptor,
 * then its schema checked and its queries' work bounded (dbcheck.h). 0, or
 * -ENOENT, -ENXIO (not a regular file; err says what it is), -EPROTO
 * (another schema version), -EBADMSG (not our schema; err says how), -EIO. */
int xp_db_open_file(const char *path, sqlite3 **db, char *err, size_t len);
/* The same for a file the user named (given: as typed, path: resolved):
 * one that plainly is no database (empty, a run's record stream, no SQLite
 * header) is -EBADMSG, err saying so and what to give instead. */
int xp_db_open_given(const char *path, const char *given, sqlite3 **db, char *err, size_t len);
/* run/xpcorr.db (or d->db_name) through the directory fd, the same way. */
int xp_rundir_open_db(struct xp_rundir *d, sqlite3 **db, char *err, size_t len);
/* Another read-only connection to the file db reads, for another thread
 * (a connection is one thread's at a time): on db's own descriptor (the
 * same inode, whatever its name leads to now), its schema checked again.
 * 0, or a negative errno: -ENOENT for a database not opened by the
 * functions above (one just ingested, still writable). */
int xp_db_open_again(sqlite3 *db, sqlite3 **again);
/* run/xpcorr.db's lstat; 0 or -errno. */
int xp_rundir_stat_db(const struct xp_rundir *d, struct stat *st);

/* A new empty temporary database file in the directory, held and locked
 * (flock) by t->fd. */
int xp_tmpdb_create(struct xp_rundir *d, struct xp_tmpdb *t);
/* SQLite on t->fd (fddb.h), never on the name, journal_mode=OFF: no file
 * beside it is opened either. SQLITE_OK or SQLite's code (*db closed by
 * the caller either way). */
int xp_tmpdb_open(const struct xp_rundir *d, const struct xp_tmpdb *t, sqlite3 **db);
/* fsync, check the name is still the file we made, rename it to
 * xpcorr.db (or d->db_name). 0 or a negative errno. */
int xp_tmpdb_commit(struct xp_rundir *d, struct xp_tmpdb *t);
/* Removes the temporary file (if the name is still ours) and unlocks. */
void xp_tmpdb_discard(struct xp_rundir *d, struct xp_tmpdb *t);
/* Removes the xpcorr.db.tmp-* files whose lock nobody holds: those of
 * ingests that were killed. A live ingest, in any pid namespace, holds its
 * lock. Errors are ignored (a read-only directory keeps them). */
void xp_rundir_remove_stale(struct xp_rundir *d);

/* "a FIFO", "a directory", ... for messages. */
const char *xp_file_kind(mode_t mode);

#endif
