/* test-procmaps.c - /proc/PID/maps lines, and walking our own maps finds
 * this test program's executable mapping with its build id; the file of a
 * mapping swapped for a FIFO or a link is never opened (mapfile.c); whose
 * a process is (taskowner.c); a path walked without touching a mount not
 * known local (fstrust.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-main.h"
#include "capture/fstrust.h"
#include "capture/mapfile.h"
#include "capture/procmaps.h"
#include "capture/taskowner.h"

START_TEST(parse_lines)
{
	char l1[] = "55d0c3a00000-55d0c3a25000 r-xp 00002000 08:01 1234     /usr/bin/prog name\n";
	char l2[] = "7ffd1c1f0000-7ffd1c211000 rw-p 00000000 00:00 0                          [stack]";
	char l3[] = "7f0000000000-7f0000001000 ---p 00000000 00:00 0 ";
	char bad[] = "zzzz-7f00 r-xp 0 0 0";
	char bad2[] = "2000-1000 r-xp 00000000 00:00 0 /x";
	struct procmaps_entry e;

	ck_assert_int_eq(procmaps_parse_line(l1, &e), 0);
	ck_assert_uint_eq(e.start, 0x55d0c3a00000ull);
	ck_assert_uint_eq(e.end, 0x55d0c3a25000ull);
	ck_assert_uint_eq(e.pgoff, 0x2000);
	ck_assert_uint_eq(e.prot, PROT_READ | PROT_EXEC);
	ck_assert_str_eq(e.path, "/usr/bin/prog name");   /* spaces kept, newline cut */
	ck_assert_int_eq(procmaps_parse_line(l2, &e), 0);
	ck_assert_uint_eq(e.prot, PROT_READ | PROT_WRITE);
	ck_assert_str_eq(e.path, "[stack]");
	ck_assert_int_eq(procmaps_parse_line(l3, &e), 0);
	ck_assert_uint_eq(e.prot, 0);
	ck_assert_str_eq(e.path, "");
	ck_assert_int_eq(procmaps_parse_line(bad, &e), -EINVAL);
	ck_assert_int_eq(procmaps_parse_line(bad2, &e), -EINVAL);
}
END_TEST

struct found {
	char exe[4096];
	int self, with_id, total;
};

static void on_map(void *ctx, const struct xp_mmap *m, const char *path)
{
	struct found *f = ctx;

	f->total++;
	ck_assert(m->prot & PROT_EXEC);
	ck_assert(m->flags & XP_MMAP_FROM_PROC);
	ck_assert_uint_eq(m->path_len, strlen(path));
	if (strcmp(path, f->exe) == 0) {
		f->self++;
		if (m->flags & XP_MMAP_HAS_BUILD_ID && m->build_id_size == 20)
			f->with_id++;
	}
}

START_TEST(walk_self)
{
	struct found f = { 0 };
	ssize_t n = readlink("/proc/self/exe", f.exe, sizeof(f.exe) - 1);

	ck_assert_int_gt(n, 0);
	f.exe[n] = '\0';
	ck_assert_int_eq(procmaps_walk(getpid(), 1, on_map, &f), 0);
	ck_assert_int_ge(f.self, 1);
	ck_assert_int_eq(f.with_id, f.self);
	ck_assert_int_gt(f.total, f.self);   /* libc, ld.so, vdso... */
	ck_assert_int_eq(procmaps_walk(999999999, 1, on_map, &f), -ENOENT);
}
END_TEST

/* A mapped file replaced by a FIFO, then by a link to another regular
 * file: by path, refused without blocking; through map_files (root
 * only), the mapped inode itself. */
START_TEST(swapped_file)
{
	char dir[] = "/tmp/xp-mapfile-XXXXXX", f[64], other[64], tmp[64];
	struct mapfile_id id = { 0 };
	uint64_t refused = mapfile_refused();
	struct stat st;
	void *map;
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(f, sizeof(f), "%s/f", dir);
	snprintf(other, sizeof(other), "%s/other", dir);
	snprintf(tmp, sizeof(tmp), "%s/tmp", dir);
	fd = open(f, O_RDWR | O_CREAT | O_EXCL, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 4096), 0);
	map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	ck_assert(map != MAP_FAILED);
	ck_assert_int_eq(fstat(fd, &st), 0);
	close(fd);
	id = (struct mapfile_id){ .start = (uintptr_t)map, .end = (uintptr_t)map + 4096,
				  .dev = st.st_dev, .ino = st.st_ino, .path = f };
	fd = mapfile_open(&id);                 /* the file itself, by path */
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(mkfifo(tmp, 0600), 0);
	ck_assert_int_eq(rename(tmp, f), 0);
	ck_assert_int_eq(mapfile_open(&id), -EPERM);
	close(open(other, O_WRONLY | O_CREAT | O_EXCL, 0600));
	ck_assert_int_eq(symlink(other, tmp), 0);
	ck_assert_int_eq(rename(tmp, f), 0);
	ck_assert_int_eq(mapfile_open(&id), -EPERM);
	ck_assert_uint_eq(mapfile_refused(), refused + 2);
	unlink(f);
	ck_assert_int_eq(mapfile_open(&id), -ENOENT);
	id.ino = 0;                             /* unknown inode: nothing opened */
	ck_assert_int_eq(mapfile_open(&id), -ENOENT);
	id.ino = st.st_ino;
	id.pid = getpid();
	fd = mapfile_open(&id);
	if (geteuid() == 0) {                   /* map_files needs CAP_SYS_ADMIN */
		ck_assert_int_ge(fd, 0);
		close(fd);
	}
	munmap(map, 4096);
	unlink(other);
	rmdir(dir);
}
END_TEST

START_TEST(owner)
{
	ck_assert_int_eq(taskowner_is(getpid(), getuid(), getgid()), 1);
	ck_assert_int_eq(taskowner_is(getpid(), getuid() + 1, getgid()), 0);
	ck_assert_int_eq(taskowner_is(getpid(), getuid(), getgid() + 1), 0);
	if (getuid() != 0)
		ck_assert_int_eq(taskowner_is(1, getuid(), getgid()), 0);
	ck_assert_int_eq(taskowner_is(2, 65534, 65534), 0);    /* kthreadd */
	ck_assert_int_eq(taskowner_is(999999999, getuid(), getgid()), -ENOENT);
}
END_TEST

/* Paths walked one name at a time: links only when asked, no "..", and a
 * file of a mount in no namespace (a pipe's) is skipped and counted. */
START_TEST(fstrust_walk)
{
	char dir[] = "/tmp/xp-fstrust-XXXXXX", sub[64], link[64], types[80];
	uint64_t skipped = fstrust_skipped();
	int fd, p[2];
	struct stat st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	ck_assert_int_eq(symlink(sub, link), 0);
	fd = fstrust_open_path(sub, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	ck_assert_int_eq(fstrust_fd(fd, 0), 0);
	close(fd);
	ck_assert_int_eq(fstrust_open_path(link, 0), -ELOOP);
	snprintf(types, sizeof(types), "%s/.", link);
	ck_assert_int_eq(fstrust_open_path(types, 0), -ELOOP);      /* on the way too */
	fd = fstrust_open_path(link, FSTRUST_FOLLOW);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert(S_ISDIR(st.st_mode));
	close(fd);
	ck_assert_int_eq(fstrust_open_path("/tmp/../etc", 0), -EINVAL);
	ck_assert_int_eq(fstrust_open_path("tmp", 0), -EINVAL);
	ck_assert_int_eq(fstrust_open_path("/no/such/xp-file", 0), -ENOENT);
	fd = fstrust_open_path("/proc/self/status", FSTRUST_FOLLOW);  /* a relative link */
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(fstrust_skipped(), skipped);
	ck_assert_int_eq(pipe(p), 0);                 /* pipefs: in no mountinfo */
	ck_assert_int_eq(fstrust_fd(p[0], 0), -EREMOTE);
	ck_assert_uint_eq(fstrust_skipped(), skipped + 1);
	fstrust_skipped_types(types, sizeof(types));
	ck_assert(strstr(types, "?") != NULL);
	close(p[0]);
	close(p[1]);
	fd = memfd_create("xp-test", MFD_CLOEXEC);  /* the kernel's tmpfs: local */
	ck_assert_int_eq(fstrust_fd(fd, 0), 0);
	close(fd);
	rmdir(sub);
	unlink(link);
	rmdir(dir);
}
END_TEST

static Suite *procmaps_suite(void)
{
	Suite *s = suite_create("procmaps");
	TCase *tc = tcase_create("procmaps");

	tcase_add_test(tc, parse_lines);
	tcase_add_test(tc, walk_self);
	tcase_add_test(tc, swapped_file);
	tcase_add_test(tc, owner);
	tcase_add_test(tc, fstrust_walk);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(procmaps_suite)
