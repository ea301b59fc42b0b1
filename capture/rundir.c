/* rundir.c - see rundir.h. Every change to the file system here is made
 * with the invoking user's file-system identity on the calling thread
 * (src/fsident.h: setfsuid/setfsgid and their supplementary groups, all
 * per-thread in the kernel): the kernel then checks it as that user, and a fsuid other than
 * 0 also drops the file-system capabilities, so a link or a swapped
 * directory can only lead where the user could go anyway. Only the names
 * xpcap itself writes are ever deleted, so --force on the wrong directory
 * cannot eat a user's files. */
#include "capture/rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "capture/fstrust.h"
#include "src/safeopen.h"

static const char *const run_files[] = {
	"cpu.xpr", "meta.json", "meta.json.tmp", "kallsyms", "kallsyms.tmp", "perf-*.map",
	"perf-*.map.tmp", "gpu-*.xpr", "launch-*.xpr", "pyframes.xpr",
	"xpcorr.db",
};

static bool is_run_file(const char *name)
{
	for (size_t i = 0; i < sizeof(run_files) / sizeof(run_files[0]); i++)
		if (fnmatch(run_files[i], name, 0) == 0)
			return true;
	return false;
}

/* --- the user's file-system identity, on this thread only ------------- */

/* Root's own run, or xpcap run by that user: no privilege to drop. */
static int as_user(const struct rundir *rd, struct xp_fsident_saved *s)
{
	s->on = false;
	if (rd->uid == 0 || (geteuid() == rd->uid && getegid() == rd->gid))
		return 0;
	return xp_fsident__enter(&rd->ident, s);
}

static void as_root(const struct rundir *rd, struct xp_fsident_saved *s)
{
	xp_fsident__leave(&rd->ident, s);
}

/* --- the names this process made, for rundir_abandon ------------------ */

static void remember(struct rundir *rd, const char *name)
{
	pthread_mutex_lock(&rd->made_lock);
	/* only the first few matter: abandon happens before capture starts */
	if (rd->nmade < RUNDIR_MAX_MADE && strlen(name) < sizeof(rd->made[0]))
		strcpy(rd->made[rd->nmade++], name);
	pthread_mutex_unlock(&rd->made_lock);
}

static void forget(struct rundir *rd, const char *name)
{
	pthread_mutex_lock(&rd->made_lock);
	for (unsigned i = 0; i < rd->nmade; i++) {
		if (strcmp(rd->made[i], name))
			continue;
		memmove(rd->made[i], rd->made[i + 1], (rd->nmade - i - 1) * sizeof(rd->made[0]));
		rd->nmade--;
		break;
	}
	pthread_mutex_unlock(&rd->made_lock);
}

/* --- operations within the directory, as the user --------------------- */

/* The directory that holds name ("sub/leaf": sub, opened without following
 * a link), and *leaf. Close the result when it is not rd->fd. */
static int parent_of(const struct rundir *rd, const char *name, const char **leaf)
{
	const char *slash = strchr(name, '/');
	char sub[256];
	int fd;

	*leaf = name;
	if (!slash)
		return rd->fd;
	snprintf(sub, sizeof(sub), "%.*s", (int)(slash - name), name);
	fd = openat(rd->fd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*leaf = slash + 1;
	return fd;
}

static void close_parent(const struct rundir *rd, int fd)
{
	if (fd >= 0 && fd != rd->fd)
		close(fd);
}

enum op { OP_OPEN, OP_MKDIR, OP_UNLINK, OP_RENAME };

/* One call as the user: the result (an fd for OP_OPEN) or -errno. */
static int user_op(struct rundir *rd, enum op op, const char *name, const char *to, int flags)
{
	int dir = -1, dir2 = -1, ret;
	const char *leaf, *leaf2;
	struct xp_fsident_saved s;

	ret = as_user(rd, &s);
	if (ret)
		return ret;
	ret = dir = parent_of(rd, name, &leaf);
	if (dir < 0)
		goto cleanup;
	switch (op) {
	case OP_OPEN:
		ret = openat(dir, leaf, flags | O_NOFOLLOW | O_CLOEXEC, 0644);
		break;
	case OP_MKDIR:
		ret = mkdirat(dir, leaf, 0755);
		break;
	case OP_UNLINK:
		ret = unlinkat(dir, leaf, 0);
		if (ret && errno == EISDIR)
			ret = unlinkat(dir, leaf, AT_REMOVEDIR);
		break;
	case OP_RENAME:
		ret = dir2 = parent_of(rd, to, &leaf2);
		if (dir2 >= 0)
			ret = renameat(dir, leaf, dir2, leaf2);
		break;
	}
	if (ret < 0)
		ret = -errno;
cleanup:
	close_parent(rd, dir);
	close_parent(rd, dir2);
	as_root(rd, &s);
	return ret;
}

int rundir_open_file(struct rundir *rd, const char *name, int flags)
{
	int fd;

	if (flags & O_CREAT)
		flags |= O_EXCL;
	fd = user_op(rd, OP_OPEN, name, NULL, flags);
	if (fd >= 0 && (flags & O_CREAT))
		remember(rd, name);
	return fd;
}

int rundir_mkdir(struct rundir *rd, const char *name)
{
	int err = user_op(rd, OP_MKDIR, name, NULL, 0);

	if (!err)
		remember(rd, name);
	return err;
}

int rundir_unlink(struct rundir *rd, const char *name)
{
	int err = user_op(rd, OP_UNLINK, name, NULL, 0);

	forget(rd, name);
	return err;
}

int rundir_rename(struct rundir *rd, const char *from, const char *to)
{
	int err = user_op(rd, OP_RENAME, from, to, 0);

	if (!err) {
		forget(rd, from);
		forget(rd, to);
		remember(rd, to);
	}
	return err;
}

/* --- opening the directory --------------------------------------------- */

/* As the user: the last component must not be a link, and no /proc magic
 * link anywhere (openat2 where the kernel has it, 5.6+). */
static int open_dir(const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)
		fd = open(path, (int)how.flags);
	return fd < 0 ? -errno : fd;
}

/* The pid holding a flock on the directory st describes, from
 * /proc/locks ("1: FLOCK  ADVISORY  WRITE 1234 00:2d:5678 0 EOF"), or 0. */
static pid_t lock_holder(const struct stat *st)
{
	FILE *f = fopen("/proc/locks", "re");
	unsigned maj, min;
	unsigned long ino;
	char line[256];
	pid_t pid = 0;
	int p;

	while (f && !pid && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*d: FLOCK %*s %*s %d %x:%x:%lu", &p, &maj, &min, &ino) == 4 &&
		    ino == st->st_ino && maj == major(st->st_dev) && min == minor(st->st_dev))
			pid = p;
	if (f)
		fclose(f);
	return pid;
}

/* tracepoints/: the *.format files xpcap copied, then the directory. */
static int clear_tracepoints(int run)
{
	DIR *d = xp_opendir_at(run, "tracepoints");
	struct dirent *de;

	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (fnmatch("*.format", de->d_name, 0) == 0 ||
		    fnmatch("*.format.tmp", de->d_name, 0) == 0)
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	return unlinkat(run, "tracepoints", AT_REMOVEDIR) ? -errno : 0;
}

/* Entries in the directory; with remove, xpcap's own are removed first
 * and only the others are counted. Runs as the user. */
static int scan(int dirfd, bool remove)
{
	/* a description of its own: readdir must not move rd->fd's offset */
	DIR *d = xp_opendir_at(dirfd, ".");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (remove && is_run_file(de->d_name) && unlinkat(dirfd, de->d_name, 0) == 0)
			continue;
		if (remove && !strcmp(de->d_name, "tracepoints") && clear_tracepoints(dirfd) == 0)
			continue;
		n++;
	}
	closedir(d);
	return n;
}

/* The missing parents of path, made as the user (mkdir -p, issue 43): the
 * deepest existing ancestor is found by the user's own path walk, then
 * each missing component is made and opened below the fd of the one
 * before, never following a link, so each lands inside the last checked
 * directory. 0 or -errno. */
static int make_parents(const char *path)
{
	char parent[PATH_MAX], walk[PATH_MAX], *slash, *c, *save;
	size_t cut;
	int fd, next, err;

	if (snprintf(parent, sizeof(parent), "%s", path) >= (int)sizeof(parent))
		return -ENAMETOOLONG;
	while ((cut = strlen(parent)) > 1 && parent[cut - 1] == '/')
		parent[cut - 1] = '\0';
	if (!(slash = strrchr(parent, '/')) || slash == parent)
		return -ENOENT;         /* the parent is "." or "/", which exist */
	*slash = '\0';
	memcpy(walk, parent, sizeof(walk));
	for (cut = strlen(walk);;) {
		walk[cut] = '\0';
		fd = open(cut ? walk : parent[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0 || errno != ENOENT || !cut)
			break;
		slash = strrchr(walk, '/');
		cut = slash ? (size_t)(slash - walk) : 0;
	}
	if (fd < 0)
		return -errno;
	for (c = strtok_r(parent + cut, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (mkdirat(fd, c, 0755) && errno != EEXIST) {
			err = -errno;
			close(fd);
			return err;
		}
		next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		err = -errno;
		close(fd);
		if ((fd = next) < 0)
			return err;
	}
	close(fd);
	return 0;
}

/* The part of rundir_open that runs as the user. */
static int open_as_user(struct rundir *rd, const char *path, bool force)
{
	struct statvfs vfs;
	struct stat st;
	int n;

	rd->fd = open_dir(path);
	if (rd->fd == -ENOENT) {
		int made = mkdir(path, 0755) ? -errno : 0;

		if (made == -ENOENT && (made = make_parents(path)) == 0)
			made = mkdir(path, 0755) ? -errno : 0;
		if (!made)
			rd->created = true;
		else if (made != -EEXIST)
			return made;
		rd->fd = open_dir(path);
	}
	/* O_DIRECTORY | O_NOFOLLOW on a link says ENOTDIR: say what it is */
	if (rd->fd == -ENOTDIR && fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISLNK(st.st_mode))
		return -ELOOP;
	if (rd->fd < 0)
		return rd->fd;
	if (fstat(rd->fd, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (rd->uid != 0 && st.st_uid != rd->uid) {
		rd->owner = st.st_uid;
		return -EPERM;
	}
	if (rd->uid != 0 && (st.st_mode & (S_IWUSR | S_IXUSR)) != (S_IWUSR | S_IXUSR))
		return -EACCES;
	if (fstatvfs(rd->fd, &vfs) == 0 && (vfs.f_flag & ST_RDONLY))
		return -EROFS;
	/* before anything is removed: a recorder using it keeps its files */
	if (flock(rd->fd, LOCK_EX | LOCK_NB)) {
		if (errno != EWOULDBLOCK)
			return -errno;
		rd->holder = lock_holder(&st);
		rd->created = false;    /* made here, but the other recorder's now */
		return -EBUSY;
	}
	n = scan(rd->fd, false);
	if (n > 0 && !force)
		return -ENOTEMPTY;
	if (n > 0)
		n = scan(rd->fd, true);
	return n < 0 ? n : 0;
}

int rundir_open(struct rundir *rd, const char *path, uid_t uid, gid_t gid, bool force)
{
	char link[64];
	struct xp_fsident_saved s;
	ssize_t len;
	int err;

	memset(rd, 0, sizeof(*rd));
	rd->fd = -1;
	rd->uid = uid;
	rd->gid = gid;
	rd->arg = path;
	rd->made_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	err = xp_fsident__init(&rd->ident, uid, gid, true);
	if (!err)
		err = as_user(rd, &s);
	if (!err) {
		err = open_as_user(rd, path, force);
		as_root(rd, &s);
	}
	if (err) {
		rundir_abandon(rd);
		rundir_close(rd);
		return err;
	}
	/* the absolute path of what was opened, for XPCAP_RUN_DIR */
	snprintf(link, sizeof(link), "/proc/self/fd/%d", rd->fd);
	len = readlink(link, rd->path, sizeof(rd->path) - 1);
	if (len <= 0)
		snprintf(rd->path, sizeof(rd->path), "%s", path);
	else
		rd->path[len] = '\0';
	return 0;
}

void rundir_abandon(struct rundir *rd)
{
	char name[sizeof(rd->made[0])];
	struct stat mine, there;
	struct xp_fsident_saved s;

	while (rd->nmade) {
		memcpy(name, rd->made[rd->nmade - 1], sizeof(name));
		rundir_unlink(rd, name);
	}
	if (!rd->created || rd->fd < 0 || as_user(rd, &s))
		return;
	/* by path, as the user: only if the name still leads to our directory */
	if (fstat(rd->fd, &mine) == 0 && fstatat(AT_FDCWD, rd->arg, &there, AT_SYMLINK_NOFOLLOW) == 0 &&
	    mine.st_dev == there.st_dev && mine.st_ino == there.st_ino && rmdir(rd->arg) == 0)
		rd->created = false;
	as_root(rd, &s);
}

void rundir_close(struct rundir *rd)
{
	if (rd->fd >= 0)
		close(rd->fd);
	rd->fd = -1;
	xp_fsident__free(&rd->ident);
}

/* --- copies ------------------------------------------------------------ */

/* Copies in to name.tmp, then renames it to name. */
static int copy_fd(struct rundir *rd, int in, const char *name, uint64_t *bytes)
{
	char buf[65536], tmp[300];
	uint64_t total = 0;
	int out, err = 0;
	ssize_t n;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", name) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	rundir_unlink(rd, tmp);         /* left by a killed xpcap */
	out = rundir_open_file(rd, tmp, O_WRONLY | O_CREAT);
	if (out < 0)
		return out;
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
		total += (uint64_t)n;
	}
	if (close(out) && !err)
		err = -errno;
	if (!err)
		err = rundir_rename(rd, tmp, name);
	if (err)
		rundir_unlink(rd, tmp);
	else if (bytes)
		*bytes = total;
	return err;
}

int rundir_copy_file(struct rundir *rd, const char *src, const char *name, uint64_t *bytes)
{
	int in = open(src, O_RDONLY | O_CLOEXEC), err;

	if (in < 0)
		return -errno;
	err = copy_fd(rd, in, name, bytes);
	close(in);
	return err;
}

/* Looked at through O_PATH first (src/safeopen.h), walked without a
 * request to FUSE (fstrust.h: a user may mount one on the name, and its
 * server never answer): a FIFO or device the user planted is never opened
 * (no blocking, no device's open routine), nor a file of another owner;
 * only then is the regular file it was opened for reading. */
int rundir_copy_user_file(struct rundir *rd, const char *src, const char *name,
			  uid_t owner, uid_t owner2)
{
	struct stat st;
	int at = fstrust_open_path(src, 0), in, err;

	if (at >= 0)
		at = xp_regular_path_check(at, &st);

	if (at == -ELOOP || at == -ENXIO)
		return -EPERM;
	if (at < 0)
		return at;
	if (st.st_uid != owner && st.st_uid != owner2) {
		close(at);
		return -EPERM;
	}
	in = xp_open_regular_reopen(at, &st);
	close(at);
	if (in == -ENXIO)
		return -EPERM;
	if (in < 0)
		return in;
	err = copy_fd(rd, in, name, NULL);
	close(in);
	return err;
}
