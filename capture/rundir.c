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
	if (access(dir, W_OK | X_OK))
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

void rundir_remove(const char *dir, bool created)
{
	clear_run_files(dir);
	if (created)
		rmdir(dir);
}

int rundir_copy_file(const char *src, const char *dir, const char *name)
{
	char buf[65536], path[4096];
	int in, out, err = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		err = -errno;
		goto cleanup;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, (size_t)n) != n) {
			err = -EIO;
			goto cleanup;
		}
	}
	if (n < 0)
		err = -errno;
cleanup:
	if (out >= 0)
		close(out);
	close(in);
	return err;
}

int rundir_chown(const char *dir, uid_t uid, gid_t gid)
{
	struct dirent *de;
	int err = 0;
	DIR *d;

	if (chown(dir, uid, gid))
		return -errno;
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fchownat(dirfd(d), de->d_name, uid, gid, AT_SYMLINK_NOFOLLOW) && !err)
			err = -errno;
		if (de->d_type == DT_DIR && !strcmp(de->d_name, "tracepoints")) {
			char sub[4096];

			snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
			if (rundir_chown(sub, uid, gid) && !err)
				err = -EIO;
		}
	}
	closedir(d);
	return err;
}
