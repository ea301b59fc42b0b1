/* taskowner.c - see taskowner.h. Both files are read through one fd of
 * /proc/PID, so a pid reused meanwhile reads as gone, not as another. */
#include "capture/taskowner.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* "Uid:\t1000\t1000\t1000\t1000": all four equal to want */
static int ids_are(const char *line, const char *key, unsigned want)
{
	unsigned v[4];

	if (strncmp(line, key, strlen(key)) ||
	    sscanf(line + strlen(key), "%u %u %u %u", &v[0], &v[1], &v[2], &v[3]) != 4)
		return -1;
	return v[0] == want && v[1] == want && v[2] == want && v[3] == want;
}

/* The ids in status; and its owner, which is root's while the process
 * is not dumpable (the directory itself keeps the effective ids). */
static int status_is(int dirfd, uid_t uid, gid_t gid)
{
	int fd = openat(dirfd, "status", O_RDONLY | O_CLOEXEC), u = -1, g = -1;
	char line[256];
	struct stat st;
	FILE *f;

	if (fd < 0)
		return -ENOENT;
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -ENOENT;
	}
	while (fgets(line, sizeof(line), f) && (u < 0 || g < 0)) {
		if (u < 0)
			u = ids_are(line, "Uid:", uid);
		if (g < 0)
			g = ids_are(line, "Gid:", gid);
	}
	if (u == 1 && (fstat(fd, &st) || st.st_uid != uid || st.st_gid != gid))
		u = 0;
	fclose(f);
	if (u < 0 || g < 0)
		return -ENOENT;         /* cut short: the process exited */
	return u && g;
}

int taskowner_is(pid_t pid, uid_t uid, gid_t gid)
{
	char path[64];
	struct stat st;
	int dirfd, ret;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -ENOENT;
	ret = status_is(dirfd, uid, gid);
	if (ret == 1 && (fstat(dirfd, &st) || st.st_uid != uid || st.st_gid != gid))
		ret = 0;
	close(dirfd);
	return ret;
}
