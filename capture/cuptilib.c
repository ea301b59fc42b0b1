/* cuptilib.c - see cuptilib.h. */
#include "capture/cuptilib.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/fsident.h"
#include "src/safeopen.h"

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
		fd = xp_open_regular(AT_FDCWD, path, XP_OPEN_FOLLOW, &st);
		xp_fsident__leave(&id, &saved);
	}
	xp_fsident__free(&id);
	return fd;
}
