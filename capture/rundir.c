/* rundir.c - see rundir.h. Only the names xpcap itself writes are ever
 * deleted, so --force on the wrong directory cannot eat a user's files. */
#include "rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const run_files[] = {
	"cpu.xpr", "meta.json", "meta.json.tmp", "kallsyms", "perf-*.map", "gpu-*.xpr",
	"launch-*.xpr",
	"xpcorr.db",
};

static bool is_run_file(const char *name)
{
	for (size_t i = 0; i < sizeof(run_files) / sizeof(run_files[0]); i++)
		if (fnmatch(run_files[i], name, 0) == 0)
			return true;
	return false;
}

/* run/tracepoints/: the *.format files xpcap copied, then the directory. */
static int clear_tracepoints(int dirfd)
{
	struct dirent *de;
	int fd;
	DIR *d;

	fd = openat(dirfd, "tracepoints", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d)))
		if (fnmatch("*.format", de->d_name, 0) == 0)
			unlinkat(fd, de->d_name, 0);
	closedir(d);
	return unlinkat(dirfd, "tracepoints", AT_REMOVEDIR) ? -errno : 0;
}

/* Removes run files; returns how many other entries remain. */
static int clear_run_files(const char *dir)
{
	struct dirent *de;
	int others = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (is_run_file(de->d_name) && unlinkat(dirfd(d), de->d_name, 0) == 0)
			continue;
		if (!strcmp(de->d_name, "tracepoints") && clear_tracepoints(dirfd(d)) == 0)
			continue;
		others++;
	}
	closedir(d);
	return others;
}

static int count_entries(const char *dir)
{
	struct dirent *de;
	int n = 0;
	DIR *d;

	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

int rundir_prepare(const char *dir, bool force, bool *created)
{
	struct stat st;
	int n;

	*created = false;
	if (mkdir(dir, 0755) == 0) {
		*created = true;
		return 0;
	}
	if (errno != EEXIST)
		return -errno;
	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	/* as the effective user: xpcap checks this as the invoking user */
	if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS))
		return -errno;
	n = count_entries(dir);
	if (n < 0)
		return n;
	if (n == 0)
		return 0;
	if (!force)
		return -ENOTEMPTY;
	n = clear_run_files(dir);
	return n < 0 ? n : 0;
}

int rundir_open(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

void rundir_remove(const char *dir, bool created)
{
	clear_run_files(dir);
	if (created)
		rmdir(dir);
}

/* Copies in to name under dirfd; name may be "sub/file", and sub is then
 * opened without following a link (the user owns the run directory and
 * could have swapped sub for one). */
static int copy_fd(int in, int dirfd, const char *name)
{
	const char *slash = strchr(name, '/');
	int dir = dirfd, out, err = 0;
	char buf[65536], sub[256];
	ssize_t n;

	if (slash) {
		snprintf(sub, sizeof(sub), "%.*s", (int)(slash - name), name);
		dir = openat(dirfd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dir < 0)
			return -errno;
		name = slash + 1;
	}
	unlinkat(dir, name, 0);
	out = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0) {
		err = -errno;
		goto cleanup;
	}
	while (!err && (n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		for (ssize_t done = 0, w; !err && done < n; done += w) {
			w = write(out, buf + done, (size_t)(n - done));
			if (w < 0 && errno == EINTR)
				w = 0;
			else if (w <= 0)
				err = w < 0 ? -errno : -EIO;
		}
	}
	if (close(out) && !err)
		err = -errno;
	if (err)
		unlinkat(dir, name, 0);
cleanup:
	if (dir != dirfd)
		close(dir);
	return err;
}

int rundir_copy_file(const char *src, int dirfd, const char *name)
{
	int in = open(src, O_RDONLY | O_CLOEXEC), err;

	if (in < 0)
		return -errno;
	err = copy_fd(in, dirfd, name);
	close(in);
	return err;
}

int rundir_copy_user_file(const char *src, int dirfd, const char *name,
			  uid_t owner, uid_t owner2)
{
	int in = open(src, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), err;
	struct stat st;

	if (in < 0)
		return -errno;
	if (fstat(in, &st))
		err = -errno;
	else if (!S_ISREG(st.st_mode) || (st.st_uid != owner && st.st_uid != owner2))
		err = -EPERM;
	else
		err = copy_fd(in, dirfd, name);
	close(in);
	return err;
}

/* The directory parent/name and its files (and, one level down, those of
 * tracepoints/), every one opened or changed without following a link:
 * the user may have swapped any of them for a link since. */
static int chown_dir(int parent, const char *name, uid_t uid, gid_t gid, bool top,
		     bool own_dir)
{
	struct dirent *de;
	int fd, err = 0;
	DIR *d;

	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (own_dir && fchown(fd, uid, gid)) {
		close(fd);
		return -errno;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (top && de->d_type == DT_DIR && !strcmp(de->d_name, "tracepoints")) {
			if (chown_dir(fd, de->d_name, uid, gid, false, true) && !err)
				err = -EIO;
		} else if (fchownat(fd, de->d_name, uid, gid, AT_SYMLINK_NOFOLLOW) && !err) {
			err = -errno;
		}
	}
	closedir(d);
	return err;
}

int rundir_chown(int dirfd, uid_t uid, gid_t gid, bool own_dir)
{
	return chown_dir(dirfd, ".", uid, gid, true, own_dir);
}
