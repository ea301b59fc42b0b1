/* test-safeopen.c - src/safeopen (a regular file or nothing; directory
 * streams never through a link) and src/fsident (root acting as another
 * user on this thread, and back). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-main.h"
#include "src/fsident.h"
#include "src/safeopen.h"

static char dir[64];
static int dfd = -1;

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/xp-safeopen-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(dfd, 0);
	close(openat(dfd, "file", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600));
	ck_assert_int_eq(symlinkat("file", dfd, "link"), 0);
	ck_assert_int_eq(mkfifoat(dfd, "fifo", 0600), 0);
	ck_assert_int_eq(mkdirat(dfd, "sub", 0700), 0);
	ck_assert_int_eq(symlinkat("sub", dfd, "sublink"), 0);
}

static void teardown(void)
{
	static const char *const names[] = { "file", "link", "fifo", "sublink" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlinkat(dfd, names[i], 0);
	unlinkat(dfd, "sub", AT_REMOVEDIR);
	close(dfd);
	rmdir(dir);
}

START_TEST(regular_file_only)
{
	struct stat st, file;
	int fd;

	ck_assert_int_eq(fstatat(dfd, "file", &file, 0), 0);
	fd = xp_open_regular(dfd, "file", 0, &st);
	ck_assert_int_ge(fd, 0);
	ck_assert(st.st_ino == file.st_ino && S_ISREG(st.st_mode));
	ck_assert_int_eq(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	close(fd);
	ck_assert_int_eq(xp_open_regular(dfd, "link", 0, &st), -ELOOP);
	fd = xp_open_regular(dfd, "link", XP_OPEN_FOLLOW, &st);
	ck_assert_int_ge(fd, 0);
	ck_assert(st.st_ino == file.st_ino);
	close(fd);
	ck_assert_int_eq(xp_open_regular(dfd, "fifo", 0, &st), -ENXIO);   /* and no hang */
	ck_assert_int_eq(xp_open_regular(dfd, "sub", 0, &st), -ENXIO);
	ck_assert_int_eq(xp_open_regular(dfd, "missing", 0, &st), -ENOENT);
}
END_TEST

/* The two steps: nothing is opened for reading until the caller says so,
 * and a file swapped in between is refused. */
START_TEST(two_steps_same_inode)
{
	struct stat st, other;
	int at, fd;

	at = xp_open_regular_path(dfd, "file", 0, &st);
	ck_assert_int_ge(at, 0);
	ck_assert_int_eq(fcntl(at, F_GETFL) & O_PATH, O_PATH);
	fd = xp_open_regular_reopen(at, &st);
	ck_assert_int_ge(fd, 0);
	close(fd);
	other = st;
	other.st_ino++;
	ck_assert_int_eq(xp_open_regular_reopen(at, &other), -ENXIO);
	close(at);
	ck_assert_int_eq(xp_open_regular_path(dfd, "fifo", 0, &st), -ENXIO);
}
END_TEST

START_TEST(directory_streams_not_links)
{
	DIR *d = xp_opendir_at(dfd, "sub");
	off_t before = lseek(dfd, 0, SEEK_CUR);
	int n = 0;

	ck_assert_ptr_nonnull(d);
	closedir(d);
	ck_assert_ptr_null(xp_opendir_at(dfd, "sublink"));
	ck_assert_ptr_null(xp_opendir_at(dfd, "file"));
	ck_assert_int_eq(errno, ENOTDIR);
	d = xp_opendir_at(dfd, ".");
	ck_assert_ptr_nonnull(d);
	while (readdir(d))
		n++;
	closedir(d);
	ck_assert_int_ge(n, 7);         /* . .. file link fifo sub sublink */
	ck_assert_int_eq(lseek(dfd, 0, SEEK_CUR), before);  /* its own offset */
}
END_TEST

/* As root: nobody's identity on this thread cannot read root's 0600 file;
 * back as root it can. */
START_TEST(fsident_enter_and_leave)
{
	struct xp_fsident id;
	struct xp_fsident_saved s;
	struct stat st;
	int fd;

	if (geteuid() != 0) {
		fprintf(stderr, "skip fsident_enter_and_leave: needs root\n");
		return;
	}
	ck_assert_int_eq(xp_fsident__init(&id, 65534, 65534, true), 0);
	ck_assert_int_eq(xp_fsident__enter(&id, &s), 0);
	ck_assert(s.on);
	ck_assert_int_eq(xp_open_regular(dfd, "file", 0, &st), -EACCES);
	errno = EINTR;
	xp_fsident__leave(&id, &s);
	ck_assert_int_eq(errno, EINTR);         /* kept */
	ck_assert(!s.on);
	fd = xp_open_regular(dfd, "file", 0, &st);
	ck_assert_int_ge(fd, 0);
	close(fd);
	xp_fsident__leave(&id, &s);             /* a second leave does nothing */
	xp_fsident__free(&id);
	ck_assert_int_eq(xp_fsident__init(&id, 65534, 65534, false), 0);
	ck_assert_int_eq(id.ngroups, 0);        /* no supplementary group */
	xp_fsident__free(&id);
	xp_fsident__free(&id);                  /* twice: safe */
}
END_TEST

Suite *safeopen_suite(void)
{
	Suite *s = suite_create("safeopen");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, regular_file_only);
	tcase_add_test(tc, two_steps_same_inode);
	tcase_add_test(tc, directory_streams_not_links);
	tcase_add_test(tc, fsident_enter_and_leave);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(safeopen_suite)
