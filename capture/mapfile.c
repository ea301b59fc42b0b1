/* mapfile.c - see mapfile.h. */
#include "capture/mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/fstrust.h"
#include "src/safeopen.h"

static uint64_t refused;

uint64_t mapfile_refused(void)
{
	return __atomic_load_n(&refused, __ATOMIC_RELAXED);
}

static int refuse(int fd)
{
	if (fd >= 0)
		close(fd);
	__atomic_add_fetch(&refused, 1, __ATOMIC_RELAXED);
	return -EPERM;
}

/* What the path leads to is not the mapping's file (a link, something
 * else, a name on the way that is no directory now). */
static bool not_regular(int err)
{
	return err == -ENXIO || err == -ELOOP || err == -ENOTDIR;
}

/* The lookup ends here: found, refused, or on a mount not known local. */
static bool final(int fd)
{
	return fd >= 0 || not_regular(fd) || fd == -EREMOTE;
}

/* An O_PATH fd of the regular file the mapping maps (map_files) or its
 * path names now (never through a link), src/safeopen.h, on a local file
 * system (fstrust.h: no stat, open or read goes to a FUSE or network
 * one, whose server may never answer); -EREMOTE when on another, -ENXIO,
 * -ELOOP or -ENOTDIR when that is something else, -ENOENT when neither
 * can be reached. */
static int open_path(const struct mapfile_id *id, struct stat *st)
{
	char name[96];
	int fd = -ENOENT, err;

	if (id->pid > 0 && id->start < id->end) {
		snprintf(name, sizeof(name), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
			 (int)id->pid, id->start, id->end);
		/* the magic link leads to the mapped file itself: no lookup */
		fd = openat(AT_FDCWD, name, O_PATH | O_CLOEXEC);
		fd = fd < 0 ? -errno : fd;
		if (fd >= 0 && (err = fstrust_fd(fd, id->pid))) {
			close(fd);
			fd = err == -EREMOTE ? err : -ENOENT;
		}
	}
	if (!final(fd) && id->path && id->path[0] == '/')
		fd = fstrust_open_path(id->path, 0);
	if (fd >= 0)
		fd = xp_regular_path_check(fd, st);
	return final(fd) ? fd : -ENOENT;
}

int mapfile_open(const struct mapfile_id *id)
{
	struct stat st;
	int pfd, fd;

	if (!id->ino)
		return -ENOENT;
	pfd = open_path(id, &st);
	if (pfd == -EREMOTE)
		return pfd;         /* counted by fstrust */
	if (not_regular(pfd))
		return refuse(-1);
	if (pfd < 0)
		return pfd;
	if (st.st_dev != id->dev || (uint64_t)st.st_ino != id->ino)
		return refuse(pfd);
	/* the same inode, now opened for reading: a regular file, so no
	 * open routine of a device or FIFO runs */
	fd = xp_open_regular_reopen(pfd, &st);
	close(pfd);
	if (fd == -ENXIO)
		return refuse(-1);
	return fd < 0 ? -ENOENT : fd;
}
