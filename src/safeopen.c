/* safeopen.c - a regular file opened for reading, nothing else (safeopen.h). */
#include "src/safeopen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#define READ_FLAGS (O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)

static int nofollow(unsigned flags)
{
	return flags & XP_OPEN_FOLLOW ? 0 : O_NOFOLLOW;
}

/* fd, when it is the same file as the one checked whatever moved in
 * between, else -ENXIO (closed); an open's -errno passes through. */
static int same_inode(int fd, const struct stat *st)
{
	struct stat again;

	if (fd < 0)
		return -errno;
	if (!fstat(fd, &again) && again.st_dev == st->st_dev && again.st_ino == st->st_ino)
		return fd;
	close(fd);
	return -ENXIO;
}

int xp_open_regular_path(int dirfd, const char *path, unsigned flags, struct stat *st)
{
	/* O_PATH | O_NOFOLLOW on a link: a handle of the link itself */
	int pfd = openat(dirfd, path, O_PATH | nofollow(flags) | O_CLOEXEC);

	return pfd < 0 ? -errno : xp_regular_path_check(pfd, st);
}

int xp_regular_path_check(int pfd, struct stat *st)
{
	int err;

	if (fstat(pfd, st))
		err = -errno;
	else if (S_ISLNK(st->st_mode))
		err = -ELOOP;
	else if (!S_ISREG(st->st_mode))
		err = -ENXIO;
	else
		return pfd;
	close(pfd);
	return err;
}

int xp_open_regular_reopen(int pfd, const struct stat *st)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	return same_inode(open(proc, READ_FLAGS), st);
}

int xp_open_regular(int dirfd, const char *path, unsigned flags, struct stat *st)
{
	int pfd = xp_open_regular_path(dirfd, path, flags, st), fd;

	if (pfd < 0)
		return pfd;
	fd = xp_open_regular_reopen(pfd, st);
	close(pfd);
	if (fd != -ENOENT)
		return fd;
	/* no /proc: by name, then checked */
	return same_inode(openat(dirfd, path, READ_FLAGS | nofollow(flags)), st);
}

DIR *xp_opendir_at(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), keep;
	DIR *d;

	if (fd < 0)
		return NULL;
	d = fdopendir(fd);
	if (!d) {
		keep = errno;
		close(fd);
		errno = keep;
	}
	return d;
}
