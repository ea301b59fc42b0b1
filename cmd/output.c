/* output.c - -o FILE, checked against the inputs and written through a
 * temporary file renamed at the end; see output.h. */
#include "cmd/output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"

static int same(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* The entry of run directory dir that out (the output's own entry, or
 * what it leads to) is: its name in *name, 1; or 0. */
static int in_run_dir(const char *dir, const struct stat *out, const struct stat *target,
		      char *name, size_t len)
{
	struct dirent *e;
	struct stat st;
	DIR *d = opendir(dir);
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    ((out && same(&st, out)) || (target && same(&st, target)))) {
			snprintf(name, len, "%s", e->d_name);
			found = 1;
		}
	}
	closedir(d);
	return found;
}

/* The input that path is (or is a file of): its index, or -1. */
static int which_input(const char *path, const char *const *inputs, int n, char *name,
		       size_t len)
{
	struct stat out, target, in;
	int have_out = lstat(path, &out) == 0, have_target = stat(path, &target) == 0;

	name[0] = '\0';
	if (!have_out && !have_target)
		return -1;              /* a new name is no input */
	for (int i = 0; i < n; i++) {
		if (!inputs[i] || stat(inputs[i], &in))
			continue;
		if (S_ISDIR(in.st_mode) ? in_run_dir(inputs[i], have_out ? &out : NULL,
						      have_target ? &target : NULL, name, len) :
		    (have_out && same(&in, &out)) || (have_target && same(&in, &target)))
			return i;
	}
	return -1;
}

/* A name of our own in o->dirfd, next to o->name, made with O_EXCL: a
 * file of that name already there (another's, or a link) is never used. */
static int create_tmp(struct xp_cmd_out *o, mode_t mode)
{
	for (int tries = 0; tries < 16; tries++) {
		uint64_t r;
		int fd;

		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
			r = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)clock() ^ (uint64_t)tries;
		snprintf(o->tmp, sizeof(o->tmp), ".%.48s.%016" PRIx64 ".tmp", o->name, r);
		fd = openat(o->dirfd, o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0666);
		if (fd >= 0) {
			/* what it replaces keeps its mode, as a write in place did */
			if (mode)
				(void)fchmod(fd, mode);
			return fd;
		}
		if (errno != EEXIST)
			break;
	}
	o->tmp[0] = '\0';
	return -errno;
}

/* A regular file or a new name: a temporary file in its directory. */
static int open_tmp(struct xp_cmd_out *o, const struct stat *old)
{
	const char *slash = strrchr(o->path, '/');
	char dir[4096];
	int fd;

	o->name = slash ? slash + 1 : o->path;
	if (slash)
		snprintf(dir, sizeof(dir), "%.*s", slash == o->path ? 1 : (int)(slash - o->path),
			 o->path);
	if (slash && (size_t)(slash - o->path) >= sizeof(dir))
		return -ENAMETOOLONG;
	if (!*o->name)                  /* "" or "dir/": no file named */
		return *o->path ? -EISDIR : -ENOENT;
	o->dirfd = open(slash ? dir : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (o->dirfd < 0)
		return -errno;
	if ((fd = create_tmp(o, old ? old->st_mode & 0777 : 0)) < 0)
		return fd;
	if (!(o->f = fdopen(fd, "w"))) {
		close(fd);
		return -errno;
	}
	return 0;
}

static void discard(struct xp_cmd_out *o)
{
	if (o->tmp[0])
		unlinkat(o->dirfd, o->tmp, 0);
	o->tmp[0] = '\0';
	if (o->dirfd >= 0)
		close(o->dirfd);
	o->dirfd = -1;
}

int xp_cmd_out_open(struct xp_cmd_out *o, const char *who, const char *path,
		    const char *const *inputs, int n)
{
	char name[256];
	struct stat st;
	int i, err, exists;

	memset(o, 0, sizeof(*o));
	o->f = stdout;
	o->dirfd = -1;
	if (!(o->path = path))
		return XP_EXIT_OK;
	if ((i = which_input(path, inputs, n, name, sizeof(name))) >= 0) {
		if (name[0])
			fprintf(stderr, "%s: -o %s is %s/%s, a file of the input run %s; give another"
				" file\n", who, path, inputs[i], name, inputs[i]);
		else
			fprintf(stderr, "%s: -o %s is the input %s; give another file\n", who, path,
				inputs[i]);
		o->f = NULL;
		return XP_EXIT_USAGE;
	}
	exists = lstat(path, &st) == 0;
	if (exists && !S_ISREG(st.st_mode)) {
		/* a device, a FIFO, a link (-o /dev/stdout): written where it leads */
		if ((o->f = fopen(path, "we")))
			return XP_EXIT_OK;
		err = -errno;
	} else {
		err = open_tmp(o, exists ? &st : NULL);
		/* a file one may write in a directory one may not: in place, as before */
		if (exists && (err == -EACCES || err == -EPERM || err == -EROFS)) {
			discard(o);
			err = (o->f = fopen(path, "we")) ? 0 : -errno;
		}
	}
	if (!err)
		return XP_EXIT_OK;
	discard(o);
	o->f = NULL;
	fprintf(stderr, "xpcorr: cannot write %s: %s\n", path, strerror(-err));
	return XP_EXIT_FAIL;
}

int xp_cmd_out_close(struct xp_cmd_out *o, int rc)
{
	int failed;

	if (!o->f) {
		discard(o);
		return rc;
	}
	failed = o->f == stdout ? fflush(stdout) : fclose(o->f);
	if (failed && rc == XP_EXIT_OK) {
		fprintf(stderr, "xpcorr: cannot write %s: %s\n", o->path ? o->path : "stdout",
			strerror(errno));
		rc = XP_EXIT_FAIL;
	}
	o->f = NULL;
	if (rc == XP_EXIT_OK && o->tmp[0]) {
		if (renameat(o->dirfd, o->tmp, o->dirfd, o->name)) {
			fprintf(stderr, "xpcorr: cannot write %s: %s\n", o->path, strerror(errno));
			rc = XP_EXIT_FAIL;
		} else {
			o->tmp[0] = '\0';
		}
	}
	discard(o);
	return rc;
}
