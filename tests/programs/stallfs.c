/* stallfs.c - the smallest FUSE server (raw /dev/fuse protocol, no libfuse)
 * that serves one file to one user and never answers anyone else: the
 * attack of security_test.py's fuse test. A user maps a library from their
 * own FUSE mount; root's xpcap, looking at that mapping, must not wait for
 * a server that never answers it.
 *
 *   stallfs dir  MOUNTPOINT FILE UID   # MOUNTPOINT/lib.so has FILE's bytes
 *   stallfs file MOUNTPOINT FILE UID   # MOUNTPOINT (a regular file) has them
 *   stallfs map LIB READY              # the user's side: dlopen LIB, create
 *                                      # READY, sleep 60 s
 *
 * Requests of UID (and INIT) are answered; those of any other uid are read
 * and held for good, each logged on stderr ("held GETATTR uid 0"). Attribute
 * and entry timeouts are 0, so every stat reaches the server. "ready" on
 * stdout once INIT is answered. Runs until killed (the test aborts the
 * connection, /sys/fs/fuse/connections/N/abort, which frees any waiter).
 * Needs root (mount), /dev/fuse; exit 77 when either is missing.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#define NAME "lib.so"
#define FILE_INO 2
#define MAX_WRITE (128 * 1024)

static int dev = -1, backing = -1, root_is_file;
static uid_t served_uid;
static struct stat backing_st;

static void reply(const struct fuse_in_header *in, int error, const void *out, size_t len)
{
	struct fuse_out_header oh = { .len = (uint32_t)(sizeof(oh) + (error ? 0 : len)),
				      .error = -error, .unique = in->unique };
	struct iovec iov[2] = { { &oh, sizeof(oh) }, { (void *)out, error ? 0 : len } };

	if (writev(dev, iov, 2) < 0 && errno != ENOENT)     /* ENOENT: interrupted */
		perror("stallfs: reply");
}

static void fill_attr(uint64_t ino, struct fuse_attr *a)
{
	int file = ino == FILE_INO || (ino == FUSE_ROOT_ID && root_is_file);

	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->mode = file ? S_IFREG | 0755 : S_IFDIR | 0755;
	a->nlink = file ? 1 : 2;
	a->size = file ? (uint64_t)backing_st.st_size : 0;
	a->blocks = (a->size + 511) / 512;
	a->blksize = 4096;
	a->uid = served_uid;
	a->gid = served_uid;
}

static void do_init(const struct fuse_in_header *in, const struct fuse_init_in *ii)
{
	struct fuse_init_out o = { .major = FUSE_KERNEL_VERSION,
				   .minor = ii->minor < FUSE_KERNEL_MINOR_VERSION ?
					    ii->minor : FUSE_KERNEL_MINOR_VERSION,
				   .max_readahead = ii->max_readahead, .max_write = MAX_WRITE,
				   .max_background = 16, .congestion_threshold = 12 };

	reply(in, 0, &o, sizeof(o));
}

static void do_lookup(const struct fuse_in_header *in, const char *name)
{
	struct fuse_entry_out e = { .nodeid = FILE_INO, .generation = 1 };

	if (in->nodeid != FUSE_ROOT_ID || root_is_file || strcmp(name, NAME)) {
		reply(in, ENOENT, NULL, 0);
		return;
	}
	fill_attr(FILE_INO, &e.attr);
	reply(in, 0, &e, sizeof(e));
}

static void do_read(const struct fuse_in_header *in, const struct fuse_read_in *r)
{
	static char buf[MAX_WRITE];
	size_t want = r->size < sizeof(buf) ? r->size : sizeof(buf);
	ssize_t n = pread(backing, buf, want, (off_t)r->offset);

	if (n < 0)
		reply(in, EIO, NULL, 0);
	else
		reply(in, 0, buf, (size_t)n);
}

static const char *op_name(uint32_t op)
{
	switch (op) {
	case FUSE_LOOKUP: return "LOOKUP";
	case FUSE_GETATTR: return "GETATTR";
	case FUSE_OPEN: return "OPEN";
	case FUSE_READ: return "READ";
	case FUSE_ACCESS: return "ACCESS";
	case FUSE_STATFS: return "STATFS";
	case FUSE_GETXATTR: return "GETXATTR";
	case FUSE_READLINK: return "READLINK";
	case FUSE_OPENDIR: return "OPENDIR";
	case FUSE_INTERRUPT: return "INTERRUPT";
	case 52: return "STATX";
	default: return "other";
	}
}

static void serve(const struct fuse_in_header *in, const void *arg)
{
	struct fuse_attr_out ao = { 0 };
	struct fuse_open_out oo = { 0 };

	switch (in->opcode) {
	case FUSE_INIT:
		do_init(in, arg);
		printf("ready\n");
		fflush(stdout);
		break;
	case FUSE_LOOKUP:
		do_lookup(in, arg);
		break;
	case FUSE_GETATTR:
		fill_attr(in->nodeid, &ao.attr);
		reply(in, 0, &ao, sizeof(ao));
		break;
	case FUSE_OPEN:
	case FUSE_OPENDIR:
		reply(in, 0, &oo, sizeof(oo));
		break;
	case FUSE_READ:
		do_read(in, arg);
		break;
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
		break;          /* no answer is expected */
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
	case FUSE_FLUSH:
		reply(in, 0, NULL, 0);
		break;
	default:
		reply(in, ENOSYS, NULL, 0);
	}
}

static int mount_it(const char *mnt)
{
	char opts[256];

	dev = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (dev < 0) {
		fprintf(stderr, "stallfs: skip: cannot open /dev/fuse: %s\n", strerror(errno));
		return 77;
	}
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=%o,user_id=%u,group_id=%u,allow_other,"
		 "default_permissions", dev, root_is_file ? S_IFREG : S_IFDIR,
		 (unsigned)served_uid, (unsigned)served_uid);
	if (mount("stallfs", mnt, "fuse.stallfs", MS_NOSUID | MS_NODEV | MS_RDONLY, opts)) {
		fprintf(stderr, "stallfs: skip: cannot mount FUSE on %s: %s\n", mnt, strerror(errno));
		return 77;
	}
	return 0;
}

static int map_and_wait(const char *lib, const char *ready)
{
	int fd;

	if (!dlopen(lib, RTLD_NOW)) {
		fprintf(stderr, "stallfs map: %s\n", dlerror());
		return 1;
	}
	fd = open(ready, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return 1;
	close(fd);
	sleep(60);
	return 0;
}

int main(int argc, char **argv)
{
	static char buf[MAX_WRITE + 4096];
	int err;

	if (argc == 4 && !strcmp(argv[1], "map"))
		return map_and_wait(argv[2], argv[3]);
	if (argc != 5 || (strcmp(argv[1], "dir") && strcmp(argv[1], "file"))) {
		fprintf(stderr, "usage: stallfs dir|file MOUNTPOINT FILE UID | map LIB READY\n");
		return 2;
	}
	root_is_file = !strcmp(argv[1], "file");
	served_uid = (uid_t)atoi(argv[4]);
	backing = open(argv[3], O_RDONLY | O_CLOEXEC);
	if (backing < 0 || fstat(backing, &backing_st)) {
		fprintf(stderr, "stallfs: cannot read %s: %s\n", argv[3], strerror(errno));
		return 1;
	}
	if ((err = mount_it(argv[2])))
		return err;
	for (;;) {
		ssize_t n = read(dev, buf, sizeof(buf));
		const struct fuse_in_header *in = (const void *)buf;

		if (n < 0 && (errno == EINTR || errno == ENOENT))
			continue;
		if (n < (ssize_t)sizeof(*in))
			return n < 0 && errno == ENODEV ? 0 : 1;    /* ENODEV: unmounted */
		/* RELEASE: the kernel's, once the user's last reference is gone */
		if (in->opcode == FUSE_INIT || in->opcode == FUSE_RELEASE || in->uid == served_uid)
			serve(in, in + 1);
		else if (in->opcode != FUSE_FORGET && in->opcode != FUSE_BATCH_FORGET)
			fprintf(stderr, "held %s (%u) uid %u pid %u\n", op_name(in->opcode),
				(unsigned)in->opcode, (unsigned)in->uid, (unsigned)in->pid);
	}
}
