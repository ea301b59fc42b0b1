/* mapfile.c - see mapfile.h. */
#include "capture/mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

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

static bool not_regular(int err)
{
	return err == -ENXIO || err == -ELOOP;
}

/* An O_PATH fd of the regular file the mapping maps (map_files) or its
 * path names now (never a last link), src/safeopen.h; -ENXIO or -ELOOP
 * when that is something else, -ENOENT when neither can be reached. */
static int open_path(const struct mapfile_id *id, struct stat *st)
{
	char name[96];
	int fd = -ENOENT;

	if (id->pid > 0 && id->start < id->end) {
		snprintf(name, sizeof(name), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
			 (int)id->pid, id->start, id->end);
		fd = xp_open_regular_path(AT_FDCWD, name, XP_OPEN_FOLLOW, st);
	}
	if (fd < 0 && !not_regular(fd) && id->path && id->path[0] == '/')
		fd = xp_open_regular_path(AT_FDCWD, id->path, 0, st);
	return fd < 0 && !not_regular(fd) ? -ENOENT : fd;
}

int mapfile_open(const struct mapfile_id *id)
{
	struct stat st;
	int pfd, fd;

	if (!id->ino)
		return -ENOENT;
	pfd = open_path(id, &st);
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
