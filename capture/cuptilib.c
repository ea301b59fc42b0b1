/* cuptilib.c - see cuptilib.h. */
#include "capture/cuptilib.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/fstrust.h"
#include "src/fsident.h"
#include "src/safeopen.h"

/* As the user: walked (fstrust.h: no request to a FUSE server, which may
 * never answer root), then opened for reading as the user. */
static int open_as_user(const char *path)
{
	char abs[PATH_MAX], cwd[PATH_MAX];
	struct stat st;
	int pfd, fd;

	if (path[0] != '/' && (!getcwd(cwd, sizeof(cwd)) ||
			       (size_t)snprintf(abs, sizeof(abs), "%s/%s", cwd, path) >= sizeof(abs)))
		return -ENAMETOOLONG;
	pfd = fstrust_open_path(path[0] == '/' ? path : abs, FSTRUST_FOLLOW);
	if (pfd >= 0)
		pfd = xp_regular_path_check(pfd, &st);
	if (pfd < 0)
		return pfd;
	fd = xp_open_regular_reopen(pfd, &st);
	close(pfd);
	return fd;
}

int cuptilib_open(const char *path, uid_t uid, gid_t gid)
{
	struct xp_fsident id;
	struct xp_fsident_saved saved;
	struct stat st;
	int fd;

	if (geteuid() != 0 || uid == 0)
		return xp_open_regular(AT_FDCWD, path, XP_OPEN_FOLLOW, &st);
	fd = xp_fsident__init(&id, uid, gid, true);
	if (!fd)
		fd = xp_fsident__enter(&id, &saved);
	if (!fd) {
		/* links followed as the user: they lead only where the user may go */
		fd = open_as_user(path);
		xp_fsident__leave(&id, &saved);
	}
	xp_fsident__free(&id);
	return fd;
}
