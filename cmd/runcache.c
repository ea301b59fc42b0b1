/* runcache.c - see runcache.h. */
#include "cmd/runcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	for (const unsigned char *c = p; n--; c++)
		h = (h ^ *c) * 1099511628211ull;
	return h;
}

/* What ingest reads (ingest.c's inputs): the run's content, by name. */
static int is_input(const char *name)
{
	size_t n = strlen(name);

	return !strcmp(name, "meta.json") || !strcmp(name, "kallsyms") ||
	       (n > 4 && !strcmp(name + n - 4, ".xpr")) ||
	       (n > 4 && !strncmp(name, "perf-", 5) && !strcmp(name + n - 4, ".map"));
}

/* The run's identity: the directory, then each input's name, size and
 * time, in an order that does not depend on readdir's. */
static int identity(const char *run_dir, uint64_t *key)
{
	struct dirent **names;
	struct stat st;
	int fd = open(run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), n;
	uint64_t h = 14695981039346656037ull;

	if (fd < 0 || fstat(fd, &st)) {
		n = -errno;
		if (fd >= 0)
			close(fd);
		return n;
	}
	h = fnv(h, &st.st_dev, sizeof(st.st_dev));
	h = fnv(h, &st.st_ino, sizeof(st.st_ino));
	n = scandirat(fd, ".", &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		if (is_input(names[i]->d_name) &&
		    !fstatat(fd, names[i]->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
			h = fnv(h, names[i]->d_name, strlen(names[i]->d_name) + 1);
			h = fnv(h, &st.st_size, sizeof(st.st_size));
			h = fnv(h, &st.st_mtim, sizeof(st.st_mtim));
		}
		free(names[i]);
	}
	if (n >= 0)
		free(names);
	close(fd);
	*key = h;
	return n < 0 ? -EIO : 0;
}

/* $XDG_CACHE_HOME, else ~/.cache (HOME, else the password file's). */
static int cache_home(char *out, size_t len)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	struct passwd *pw;

	if (xdg && xdg[0] == '/')
		return snprintf(out, len, "%s", xdg) >= (int)len ? -ENAMETOOLONG : 0;
	if ((!home || home[0] != '/') && (pw = getpwuid(getuid())))
		home = pw->pw_dir;
	if (!home || home[0] != '/')
		return -ENOENT;
	return snprintf(out, len, "%s/.cache", home) >= (int)len ? -ENAMETOOLONG : 0;
}

/* base/xpcorr, made 0700 (base too, when missing), opened without
 * following a link and checked to be the user's alone: an fd or -errno. */
static int open_cache_dir(const char *base)
{
	struct stat st;
	int bfd, fd;

	if (mkdir(base, 0700) && errno != EEXIST)
		return -errno;
	bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bfd < 0)
		return -errno;
	if (mkdirat(bfd, "xpcorr", 0700) && errno != EEXIST) {
		fd = -errno;
		close(bfd);
		return fd;
	}
	fd = openat(bfd, "xpcorr", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(bfd);
	if (fd < 0)
		return errno == ENOTDIR ? -ELOOP : -errno;
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int xp_run_cache_path(const char *run_dir, char *out, size_t len, char *err, size_t errlen)
{
	char base[PATH_MAX], dir[PATH_MAX], proc[64];
	uint64_t key = 0;
	ssize_t n;
	int e, fd;

	if ((e = identity(run_dir, &key))) {
		snprintf(err, errlen, "cannot read %s: %s", run_dir, strerror(-e));
		return e;
	}
	if ((e = cache_home(base, sizeof(base)))) {
		snprintf(err, errlen, "cannot find a cache directory for %s's database (no "
			 "XDG_CACHE_HOME or HOME): %s", run_dir, strerror(-e));
		return e;
	}
	if ((fd = open_cache_dir(base)) < 0) {
		snprintf(err, errlen, "cannot use %s/xpcorr as a cache: %s", base,
			 fd == -EPERM ? "not a directory of this user's alone (mode 0700)" :
			 strerror(-fd));
		return fd;
	}
	/* the path the kernel names it by: no link in it, as SQLite wants */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, dir, sizeof(dir) - 1);
	close(fd);
	if (n <= 0 || dir[0] != '/') {
		snprintf(err, errlen, "cannot resolve %s/xpcorr", base);
		return -ENOENT;
	}
	dir[n] = '\0';
	if (snprintf(out, len, "%s/run-%016" PRIx64 ".db", dir, key) >= (int)len) {
		snprintf(err, errlen, "cannot use %s: name too long", dir);
		return -ENAMETOOLONG;
	}
	return 0;
}
