/* mapfile.c - see mapfile.h. */
#include "mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t refused;

uint64_t mapfile_refused(void)
{
	return __atomic_load_n(&refused, __ATOMIC_RELAXED);
}

static int refuse(int fd)
{
	close(fd);
	__atomic_add_fetch(&refused, 1, __ATOMIC_RELAXED);
	return -EPERM;
}

static int is_mapped_file(const struct stat *st, const struct mapfile_id *id)
{
	return S_ISREG(st->st_mode) && st->st_dev == id->dev && (uint64_t)st->st_ino == id->ino;
}

/* An O_PATH fd of what the mapping maps (map_files) or of what its path
 * names now (never a last link), or -errno. */
static int open_path(const struct mapfile_id *id)
{
	char name[96];
	int fd = -1;

	if (id->pid > 0 && id->start < id->end) {
		snprintf(name, sizeof(name), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
			 (int)id->pid, id->start, id->end);
		fd = open(name, O_PATH | O_CLOEXEC);
	}
	if (fd < 0 && id->path && id->path[0] == '/')
		fd = open(id->path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -ENOENT : fd;
}

int mapfile_open(const struct mapfile_id *id)
{
	struct stat st;
	char self[64];
	int pfd, fd;

	if (!id->ino)
		return -ENOENT;
	pfd = open_path(id);
	if (pfd < 0)
		return pfd;
	if (fstat(pfd, &st) || !is_mapped_file(&st, id))
		return refuse(pfd);
	/* the same inode, now opened for reading: a regular file, so no
	 * open routine of a device or FIFO runs */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	close(pfd);
	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &st) || !is_mapped_file(&st, id))
		return refuse(fd);
	return fd;
}
