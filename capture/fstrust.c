/* fstrust.c - see fstrust.h. Nothing here calls a file system other than
 * procfs: fdinfo and mountinfo are made by the kernel from what it holds. */
#include "capture/fstrust.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_TYPES 8
#define TYPE_LEN 64

/* No server: on a disk or in memory. */
static const char *const local_types[] = {
	"ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "jfs", "reiserfs", "nilfs2", "bcachefs",
	"zfs", "vfat", "msdos", "exfat", "ntfs3", "hfsplus", "iso9660", "udf", "squashfs",
	"erofs", "tmpfs", "ramfs", "hugetlbfs", "devtmpfs", "proc", "sysfs", NULL,
};

/* Trusted as far as their mounter is: where the super block is mounted
 * in xpcap's own mount namespace, which only its root can mount in (no
 * user namespace mounts a network file system; one may mount overlay on
 * FUSE layers). A server then is the administrator's choice. */
static const char *const admin_types[] = {
	"overlay", "nfs", "nfs4", "cifs", "smb3", "9p", "virtiofs", "ceph", "lustre", "gpfs",
	"beegfs", "afs", "orangefs", NULL,
};

struct mount_row {
	long id;                        /* mount id */
	unsigned maj, min;              /* its super block's device */
	char type[TYPE_LEN];            /* "ext4", "fuse.sshfs" */
};

static uint64_t skipped;
static pthread_mutex_t types_lock = PTHREAD_MUTEX_INITIALIZER;
static char skipped_type[MAX_TYPES][TYPE_LEN];

static int skip(const char *type)
{
	__atomic_add_fetch(&skipped, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&types_lock);
	for (int i = 0; i < MAX_TYPES; i++) {
		if (!strcmp(skipped_type[i], type))
			break;
		if (!skipped_type[i][0]) {
			snprintf(skipped_type[i], TYPE_LEN, "%s", type);
			break;
		}
	}
	pthread_mutex_unlock(&types_lock);
	return -EREMOTE;
}

uint64_t fstrust_skipped(void)
{
	return __atomic_load_n(&skipped, __ATOMIC_RELAXED);
}

void fstrust_skipped_types(char *out, size_t len)
{
	size_t at = 0;

	out[0] = '\0';
	pthread_mutex_lock(&types_lock);
	for (int i = 0; i < MAX_TYPES && skipped_type[i][0] && at < len; i++) {
		int n = snprintf(out + at, len - at, "%s%s", at ? "," : "", skipped_type[i]);

		at += n > 0 ? (size_t)n : 0;
	}
	pthread_mutex_unlock(&types_lock);
}

/* The mount id of what fd is open on ("mnt_id:" in its fdinfo). */
static int fd_mount_id(int fd, long *id)
{
	char name[64], line[128];
	int err = -ENOENT;
	FILE *f;

	snprintf(name, sizeof(name), "/proc/self/fdinfo/%d", fd);
	f = fopen(name, "re");
	if (!f)
		return -errno;
	while (err && fgets(line, sizeof(line), f))
		if (sscanf(line, "mnt_id: %ld", id) == 1)
			err = 0;
	fclose(f);
	return err;
}

/* "ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER";
 * root and mount point have their spaces escaped (\040), so the first
 * " - " ends the optional fields. */
static bool parse_row(const char *line, struct mount_row *row)
{
	const char *sep = strstr(line, " - ");

	return sep && sscanf(line, "%ld %*d %u:%u", &row->id, &row->maj, &row->min) == 3 &&
	       sscanf(sep + 3, "%63s", row->type) == 1;
}

/* The row of mount id (id >= 0), or of the first mount of device maj:min
 * (id < 0), in /proc/PID/mountinfo (pid 0: xpcap's own). 0 or -ENOENT. */
static int find_mount(pid_t pid, long id, unsigned maj, unsigned min, struct mount_row *row)
{
	char name[64], *line = NULL;
	size_t cap = 0;
	int err = -ENOENT;
	FILE *f;

	if (pid > 0)
		snprintf(name, sizeof(name), "/proc/%d/mountinfo", (int)pid);
	else
		snprintf(name, sizeof(name), "/proc/self/mountinfo");
	f = fopen(name, "re");
	if (!f)
		return -ENOENT;     /* the process is gone: its mount cannot be told */
	while (err && getline(&line, &cap, f) > 0)
		if (parse_row(line, row) &&
		    (id >= 0 ? row->id == id : row->maj == maj && row->min == min))
			err = 0;
	free(line);
	fclose(f);
	return err;
}

static long shm_id = -1;

static void find_shm_id(void)
{
	int fd = memfd_create("xp-fstrust", MFD_CLOEXEC);

	if (fd >= 0 && fd_mount_id(fd, &shm_id))
		shm_id = -1;
	if (fd >= 0)
		close(fd);
}

/* The kernel's own tmpfs mount, in no namespace: memfd files, shared
 * anonymous and System V memory live there. Known by a memfd of ours. */
static long shm_mount_id(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, find_shm_id);
	return shm_id;
}

static bool listed(const char *const *list, const char *type)
{
	for (int i = 0; list[i]; i++)
		if (!strcmp(type, list[i]))
			return true;
	return false;
}

int fstrust_fd(int fd, pid_t ns_pid)
{
	struct mount_row row, own;
	long id;
	int err = fd_mount_id(fd, &id);

	if (err)
		return err;
	if (id == shm_mount_id())
		return 0;
	if (find_mount(ns_pid, id, 0, 0, &row))
		return skip("?");   /* detached, or in no namespace we can read */
	if (listed(local_types, row.type))
		return 0;
	if (listed(admin_types, row.type) &&
	    (ns_pid <= 0 || find_mount(0, -1, row.maj, row.min, &own) == 0))
		return 0;
	return skip(row.type);     /* FUSE: a user's server; or a type not known */
}

/* fd checked, unless it is on the mount checked last (then known local). */
static int check_dir(int fd, long *checked)
{
	long id;
	int err = fd_mount_id(fd, &id);

	if (err || id == *checked)
		return err;
	err = fstrust_fd(fd, 0);
	if (!err)
		*checked = id;
	return err;
}

/* A walk: where it is (a directory on a local mount), what is left. */
struct walk {
	int fd;                         /* O_PATH; -1: none yet */
	long checked;                   /* the mount id last found local */
	unsigned links;                 /* links followed */
	bool follow;                    /* FSTRUST_FOLLOW */
	char todo[2 * PATH_MAX];        /* names still to look up */
};

/* The walk goes on from "/" (an absolute path or link) or from where it
 * is, with text (then what was left) still to look up. */
static int walk_restart(struct walk *w, const char *text, const char *rest)
{
	char todo[sizeof(w->todo)];

	/* rest is "" or starts with '/' */
	if ((size_t)snprintf(todo, sizeof(todo), "%s%s", text, rest) >= sizeof(todo))
		return -ENAMETOOLONG;
	memcpy(w->todo, todo, sizeof(todo));
	if (text[0] == '/' || w->fd < 0) {
		if (w->fd >= 0)
			close(w->fd);
		w->fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (w->fd < 0)
			return -errno;
	}
	return check_dir(w->fd, &w->checked);
}

/* next (checked local) is a link: followed (its text read; the link is
 * on a local mount) or refused. 1 when followed, else -errno. */
static int walk_link(struct walk *w, int next, const char *rest)
{
	char target[PATH_MAX];
	ssize_t n;

	if (!w->follow || ++w->links > 40)
		return -ELOOP;
	n = readlinkat(next, "", target, sizeof(target) - 1);
	if (n <= 0)
		return n < 0 ? -errno : -ENOENT;
	target[n] = '\0';
	n = walk_restart(w, target, rest);
	return n ? (int)n : 1;
}

/* Looks up the next name: 0 when the walk is done (w->fd is the file),
 * 1 to go on, else -errno. */
static int walk_step(struct walk *w)
{
	char name[NAME_MAX + 1], rest[sizeof(w->todo)];
	const char *p = w->todo, *end;
	struct stat st;
	int next, err;

	while (*p == '/')
		p++;
	if (!*p)
		return 0;
	end = strchrnul(p, '/');
	if ((size_t)(end - p) > NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(name, p, (size_t)(end - p));
	name[end - p] = '\0';
	snprintf(rest, sizeof(rest), "%s", end);
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return -EINVAL;
	next = openat(w->fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (next < 0)
		return -errno;
	err = check_dir(next, &w->checked);
	/* on a local mount: fstat asks no server */
	if (!err && fstat(next, &st))
		err = -errno;
	if (!err && S_ISLNK(st.st_mode))
		err = walk_link(w, next, rest);
	else if (!err && rest[0] && !S_ISDIR(st.st_mode))
		err = -ENOTDIR;
	if (err) {
		close(next);
		return err < 0 ? err : 1;
	}
	close(w->fd);
	w->fd = next;
	memmove(w->todo, rest, strlen(rest) + 1);
	return 1;
}

int fstrust_open_path(const char *path, unsigned flags)
{
	struct walk *w;
	int err;

	if (path[0] != '/')
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = -1;
	w->checked = -1;
	w->follow = flags & FSTRUST_FOLLOW;
	err = walk_restart(w, path, "");
	while (!err && (err = walk_step(w)) == 1)
		err = 0;
	if (!err)
		err = w->fd;
	else if (w->fd >= 0)
		close(w->fd);
	free(w);
	return err;
}
