/* mapfile.h - opens, as root, the file a process has mapped, and nothing
 * else. The path in an mmap record or a maps line is the user's to change:
 * by the time root reads it, it may be a FIFO (a blocking open), a device
 * node, a link to a file only root may read, or "FILE (deleted)". So the
 * mapping is reached through /proc/PID/map_files/START-END where it still
 * exists, else by its path without following a last link; either is first
 * opened O_PATH (no open of the file itself: nothing blocks, no device
 * acts), and read only if it is a regular file with the mapping's device
 * and inode. Nothing of it is touched (not even a stat) unless its mount
 * is of a local file system (fstrust.h): a FUSE server may never answer.
 *   struct mapfile_id id = { .pid = pid, .start = a, .end = b, .dev = dev,
 *                            .ino = ino, .path = path };
 *   int fd = mapfile_open(&id);      // O_RDONLY, or -errno
 */
#ifndef XP_CAPTURE_MAPFILE_H
#define XP_CAPTURE_MAPFILE_H

#include <stdint.h>
#include <sys/types.h>

struct mapfile_id {
	pid_t pid;                  /* the mapping's process; 0: unknown */
	uint64_t start, end;        /* the mapping's range, for map_files */
	dev_t dev;                  /* the mapped inode's device and number; */
	uint64_t ino;               /* ino 0: unknown, then nothing is opened */
	const char *path;           /* as the record or maps line gives it */
};

/* A read-only fd of the mapped file, or -errno: -EPERM when what the
 * path leads to is not the mapped regular file (counted, see
 * mapfile_refused), -EREMOTE when it is on a mount not known local
 * (counted, fstrust_skipped), -ENOENT when it cannot be reached at all. */
int mapfile_open(const struct mapfile_id *id);

/* How many opens were refused so far, in this process. */
uint64_t mapfile_refused(void);

#endif
