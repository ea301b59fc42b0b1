/* fddb.h - SQLite on a file descriptor we opened and checked ourselves.
 * SQLite opens a database by name, so a reader that checked the name (a
 * regular file, not a link) leaves a moment in which the file's owner can
 * put a FIFO there, and SQLite's open() of it blocks for ever. Through the
 * "xp-fd" VFS (a shim over the default one) the main database file is a
 * dup of the descriptor given, read with pread, never opened by name;
 * read-only and immutable (no lock, no journal, no -wal or -shm file), or
 * writable for a file the caller made (xp_db_create_fd);
 * SQLite's temporary files (sorts) are the default VFS's own.
 *
 *   int fd = xp_open_regular(AT_FDCWD, path, 0, &st);   // src/safeopen.h
 *   if (fd >= 0 && !xp_db_open_fd(fd, path, &db)) ...;  // then close(fd)
 */
#ifndef XP_FDDB_H
#define XP_FDDB_H

#include <sqlite3.h>

/* *db on fd (a regular file open for reading; the caller keeps and closes
 * it): path only names it (sqlite3_db_filename, messages). SQLITE_OK or
 * SQLite's code; *db closed by the caller either way. */
int xp_db_open_fd(int fd, const char *path, sqlite3 **db);
/* The same on an empty (or our own) file open for reading and writing,
 * which the caller made and locked: SQLite writes it through fd alone,
 * with no journal or other file beside it (run journal_mode=OFF on it).
 * For ingest's temporary database (db/rundb.h): never opened by name. */
int xp_db_create_fd(int fd, const char *path, sqlite3 **db);
/* The descriptor a connection made by xp_db_open_fd reads (its own, open
 * while db is), for another connection to the same file; -1 for any other
 * connection. */
int xp_db_fd(sqlite3 *db);

#endif
