/* safeopen.h - opening for reading a file that must be a regular file,
 * when someone else may have put something else under its name: a FIFO
 * (opening it blocks), a device or tty (its open routine acts) or a link
 * (it leads elsewhere). The name is looked up as an O_PATH handle, which
 * opens nothing; only when that is a regular file is the same inode
 * opened for reading, through /proc/self/fd. The one copy of this check:
 * run files (src/runfile.c), databases (db/rundb.c), files a user planted
 * for xpcap (capture/rundir.c) and mapped files (capture/mapfile.c).
 *
 *   struct stat st;
 *   int fd = xp_open_regular(dirfd, "cpu.xpr", 0, &st);
 *   if (fd == -ELOOP) ... a link, not followed;  -ENXIO: not a regular file
 *
 * A caller with something of its own to check before anything is opened
 * (an owner, an inode) takes the two steps itself:
 *   int at = xp_open_regular_path(AT_FDCWD, path, 0, &st);
 *   if (at >= 0 && st.st_uid == owner) fd = xp_open_regular_reopen(at, &st);
 *
 * And a directory's entries, read without following a link:
 *   DIR *d = xp_opendir_at(dirfd, "tracepoints");
 */
#ifndef XP_SAFEOPEN_H
#define XP_SAFEOPEN_H

#include <dirent.h>
#include <sys/stat.h>

enum xp_open_flags {
	XP_OPEN_FOLLOW = 1 << 0,        /* a last link is followed (a path the user
					 * named, /usr/lib's, /proc/PID/map_files) */
};

/* An O_RDONLY | O_NONBLOCK | O_NOCTTY fd of the regular file dirfd/path,
 * and *st. Without /proc it is opened by name (O_NONBLOCK) and the inode
 * checked. -ELOOP: a link (without XP_OPEN_FOLLOW); -ENXIO: not a regular
 * file, or it was replaced while being opened; -errno. */
int xp_open_regular(int dirfd, const char *path, unsigned flags, struct stat *st);
/* Step one: an O_PATH fd of dirfd/path and *st, when it is a regular file
 * (same errors as xp_open_regular). Nothing has been opened for reading:
 * a library may be handed "/proc/self/fd/N". */
int xp_open_regular_path(int dirfd, const char *path, unsigned flags, struct stat *st);
/* Its second half, for an O_PATH fd the caller looked up itself: pfd and
 * *st when a regular file, else -ELOOP / -ENXIO / -errno with pfd closed. */
int xp_regular_path_check(int pfd, struct stat *st);
/* Step two: opens what the O_PATH fd pfd names (kept open) for reading;
 * -ENXIO when that is no longer the inode st describes, -errno (-ENOENT
 * without /proc). */
int xp_open_regular_reopen(int pfd, const struct stat *st);
/* A stream of the directory dirfd/name ("." for dirfd itself), never
 * through a link, on a description of its own: reading it does not move
 * dirfd's offset. closedir closes it. NULL with errno set. */
DIR *xp_opendir_at(int dirfd, const char *name);

#endif
