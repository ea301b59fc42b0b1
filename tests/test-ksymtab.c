/* test-ksymtab.c - the kernel symbol table and root's copy of it
 * (capture/ksymtab.c): a kallsyms text read as readers of a run read it
 * (text symbols only, aliases together); the copy answers only under the
 * key it was made with (another boot id, another module list: -ESTALE),
 * and only for IPs that nothing loaded since can rename (vmlinux, or one
 * listed module, on both sides); a link, a file not root's or writable
 * by others, or a damaged file is never used, and saving over a link
 * replaces the link, not what it points at. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-main.h"
#include "capture/ksymtab.h"

static const char text[] =
	"0000000000000000 A fixed_percpu_data\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81001000 T read_zero\n"
	"ffffffff81001000 t __read_zero_alias\n"
	"ffffffff81001800 D some_data\n"
	"ffffffff81002000 T vfs_read\n"
	"ffffffff82000000 T _etext\n"
	"ffffffffc0001000 t nv_open\t[nvidia]\n"
	"ffffffffc0002000 t nv_close\t[nvidia]\n"
	"ffffffffc0003000 t bpf_prog_1234_xp\t[bpf]\n"
	"ffffffffc0004000 t bpf_prog_5678_xp\t[bpf]\n"
	"ffffffffc0000800 t nv_init\t[nvidia]\n"     /* modules come unsorted */
	"ffffffff81003000 W weak_fn\n"
	"ffffffff81004000 T cut_short";               /* no newline: dropped */

static const char key[] = "11111111-2222-3333-4444-555555555555\nnvidia 65536 0xffffffffc0000000\n";

struct fixture {
	char dir[64];
	int dfd;
	struct ksymtab *t;
};

static void setup(struct fixture *f)
{
	char path[128];
	FILE *out;

	snprintf(f->dir, sizeof(f->dir), "/tmp/xp-ksymtab-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	snprintf(path, sizeof(path), "%s/text", f->dir);
	out = fopen(path, "w");
	ck_assert_ptr_nonnull(out);
	fputs(text, out);
	fclose(out);
	ck_assert_int_eq(ksymtab_read(&f->t, path), 0);
	unlink(path);
	f->dfd = ksymtab_dir(f->dir, false);
}

static void teardown(struct fixture *f)
{
	char path[128];

	ksymtab_free(f->t);
	if (f->dfd >= 0)
		close(f->dfd);
	snprintf(path, sizeof(path), "rm -rf '%s'", f->dir);
	ck_assert_int_eq(system(path), 0);
}

static const char *name_at(const struct ksymtab *t, uint64_t ip, size_t k)
{
	size_t first, n;
	struct ksym s;

	if (ksymtab_find(t, ip, &first, &n) || k >= n)
		return NULL;
	ksymtab_sym(t, first + k, &s);
	return s.name;
}

START_TEST(read_text)
{
	struct fixture f;
	size_t first, n;
	struct ksym s;

	setup(&f);
	/* text symbols only (A, D dropped), the cut last line dropped */
	ck_assert_uint_eq(ksymtab_count(f.t), 12);
	ck_assert_int_eq(ksymtab_find(f.t, 0xffffffff81001234ull, &first, &n), 0);
	ck_assert_uint_eq(n, 2);            /* the alias with it, kernel order */
	ksymtab_sym(f.t, first, &s);
	ck_assert_str_eq(s.name, "read_zero");
	ck_assert_int_eq(s.type, 'T');
	ck_assert_str_eq(s.module, "");
	ck_assert_str_eq(name_at(f.t, 0xffffffff81001900ull, 1), "__read_zero_alias");
	ck_assert_str_eq(name_at(f.t, 0xffffffff81003001ull, 0), "weak_fn");
	ck_assert_str_eq(name_at(f.t, 0xffffffffc0000900ull, 0), "nv_init");
	ksymtab_find(f.t, 0xffffffffc0001004ull, &first, &n);
	ksymtab_sym(f.t, first, &s);
	ck_assert_str_eq(s.module, "nvidia");
	ck_assert_int_eq(ksymtab_find(f.t, 0xffffffff80000000ull, &first, &n), -ENOENT);
	/* read from the kernel: it names everything as the kernel does now */
	ck_assert(ksymtab_stable(f.t, 0xffffffffc0003004ull));
	teardown(&f);
}
END_TEST

START_TEST(copy_under_its_key)
{
	char other[sizeof(key)];
	struct ksymtab *c;
	struct fixture f;
	struct stat st;

	if (geteuid() != 0) {
		puts("SKIP copy_under_its_key: the copy must be root's (run as root)");
		return;
	}
	setup(&f);
	ck_assert_int_ge(f.dfd, 0);
	ck_assert_int_eq(ksymtab_save(f.t, f.dfd, key), 0);
	ck_assert_int_eq(fstatat(f.dfd, "kallsyms", &st, AT_SYMLINK_NOFOLLOW), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(ksymtab_load(&c, f.dfd, key), 0);
	ck_assert_uint_eq(ksymtab_count(c), ksymtab_count(f.t));
	ck_assert_str_eq(name_at(c, 0xffffffff81001234ull, 1), "__read_zero_alias");
	ck_assert_str_eq(name_at(c, 0xffffffffc0001004ull, 0), "nv_open");
	/* between two of vmlinux's symbols, or of a module the key lists */
	ck_assert(ksymtab_stable(c, 0xffffffff81001234ull));
	ck_assert(ksymtab_stable(c, 0xffffffffc0001004ull));
	/* past a module's last symbol, among BPF programs, past the last
	 * symbol, below the first: anything may be there now */
	ck_assert(!ksymtab_stable(c, 0xffffffffc0002004ull));
	ck_assert(!ksymtab_stable(c, 0xffffffffc0003004ull));
	ck_assert(!ksymtab_stable(c, 0xffffffffc0004004ull));
	ck_assert(!ksymtab_stable(c, 0xffffffff80000000ull));
	ksymtab_free(c);
	/* another boot, a module loaded or gone: not this copy */
	memcpy(other, key, sizeof(key));
	other[0] = '9';
	ck_assert_int_eq(ksymtab_load(&c, f.dfd, other), -ESTALE);
	ck_assert_int_eq(ksymtab_load(&c, f.dfd, "11111111-2222-3333-4444-555555555555\n"),
			 -ESTALE);
	ck_assert_int_eq(ksymtab_load(&c, f.dfd, "11111111-2222-3333-4444-555555555555\n"
				      "nvidia 65536 0xffffffffc0000000\nuvm 4096 0xffffffffc1000000\n"),
			 -ESTALE);
	ck_assert_ptr_null(c);
	teardown(&f);
}
END_TEST

/* A module the key does not list (bpf, here) is never taken for stable. */
START_TEST(unlisted_module)
{
	struct ksymtab *c;
	struct fixture f;

	if (geteuid() != 0) {
		puts("SKIP unlisted_module: the copy must be root's (run as root)");
		return;
	}
	setup(&f);
	ck_assert_int_eq(ksymtab_save(f.t, f.dfd, "boot\n"), 0);
	ck_assert_int_eq(ksymtab_load(&c, f.dfd, "boot\n"), 0);
	ck_assert(!ksymtab_stable(c, 0xffffffffc0001004ull));
	ck_assert(ksymtab_stable(c, 0xffffffff81002004ull));
	ksymtab_free(c);
	teardown(&f);
}
END_TEST

START_TEST(never_through_a_link)
{
	char elsewhere[128], link[128], before[256];
	struct ksymtab *c = NULL;
	struct fixture f;
	struct stat st;
	FILE *in;
	size_t n;
	int fd;

	if (geteuid() != 0) {
		puts("SKIP never_through_a_link: the copy must be root's (run as root)");
		return;
	}
	setup(&f);
	/* a good copy under another name, and the copy's name a link to it */
	ck_assert_int_eq(ksymtab_save(f.t, f.dfd, key), 0);
	snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", f.dir);
	snprintf(link, sizeof(link), "%s/kallsyms", f.dir);
	ck_assert_int_eq(rename(link, elsewhere), 0);
	ck_assert_int_eq(symlink(elsewhere, link), 0);
	ck_assert_int_eq(ksymtab_load(&c, f.dfd, key), -ELOOP);
	ck_assert_ptr_null(c);
	/* saving replaces the link; what it points at is untouched */
	in = fopen(elsewhere, "r");
	n = fread(before, 1, sizeof(before), in);
	fclose(in);
	ck_assert_int_eq(ksymtab_save(f.t, f.dfd, "boot\n"), 0);
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	fd = open(elsewhere, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	{
		char now[256];

		ck_assert_int_eq(read(fd, now, sizeof(now)), (ssize_t)n);
		ck_assert_mem_eq(now, before, n);
	}
	close(fd);
	/* a FIFO: refused without blocking */
	unlink(link);
	ck_assert_int_eq(mkfifo(link, 0600), 0);
	ck_assert_int_eq(ksymtab_load(&c, f.dfd, key), -ENXIO);
	teardown(&f);
}
END_TEST

START_TEST(not_roots_or_damaged)
{
	char path[128];
	struct ksymtab *c = NULL;
	struct fixture f;
	struct stat st;
	int fd;

	if (geteuid() != 0) {
		puts("SKIP not_roots_or_damaged: the copy must be root's (run as root)");
		return;
	}
	setup(&f);
	snprintf(path, sizeof(path), "%s/kallsyms", f.dir);
	ck_assert_int_eq(ksymtab_save(f.t, f.dfd, key), 0);
	ck_assert_int_eq(chmod(path, 0620), 0);         /* others may write it */
	ck_assert_int_eq(ksymtab_load(&c, f.dfd, key), -EPERM);
	ck_assert_int_eq(chmod(path, 0600), 0);
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(path, 65534, 65534), 0);     /* nobody's */
		ck_assert_int_eq(ksymtab_load(&c, f.dfd, key), -EPERM);
		ck_assert_int_eq(chown(path, 0, 0), 0);
		/* nor a directory of someone else's, or one others may write */
		ck_assert_int_eq(chown(f.dir, 65534, 65534), 0);
		ck_assert_int_eq(ksymtab_dir(f.dir, false), -EPERM);
		ck_assert_int_eq(chown(f.dir, 0, 0), 0);
		ck_assert_int_eq(chmod(f.dir, 0777), 0);
		ck_assert_int_eq(ksymtab_dir(f.dir, false), -EPERM);
		ck_assert_int_eq(chmod(f.dir, 0700), 0);
	}
	/* cut short */
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(truncate(path, st.st_size - 1), 0);
	ck_assert_int_eq(ksymtab_load(&c, f.dfd, key), -EINVAL);
	/* a name offset past the strings */
	ck_assert_int_eq(ksymtab_save(f.t, f.dfd, key), 0);
	fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	/* entry 0's name: after the header, the key padded to 8, its address */
	ck_assert_int_eq(pwrite(fd, "\xff\xff\xff\x7f", 4, 32 + ((sizeof(key) - 1 + 7) & ~7ul) + 8),
			 4);
	close(fd);
	ck_assert_int_eq(ksymtab_load(&c, f.dfd, key), -EINVAL);
	ck_assert_ptr_null(c);
	teardown(&f);
}
END_TEST

/* The key of this boot: the boot id first, a line per live module. */
START_TEST(this_boot)
{
	char *k = NULL, id[64] = "";
	FILE *in = fopen("/proc/sys/kernel/random/boot_id", "r");
	int err;

	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(fgets(id, sizeof(id), in));
	fclose(in);
	err = ksymtab_key(&k);
	if (err == -EAGAIN)
		return;                         /* a module loading right now */
	ck_assert_int_eq(err, 0);
	ck_assert_int_eq(strncmp(k, id, strlen(id)), 0);
	free(k);
}
END_TEST

static Suite *ksymtab_suite(void)
{
	Suite *s = suite_create("ksymtab");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, read_text);
	tcase_add_test(tc, copy_under_its_key);
	tcase_add_test(tc, unlisted_module);
	tcase_add_test(tc, never_through_a_link);
	tcase_add_test(tc, not_roots_or_damaged);
	tcase_add_test(tc, this_boot);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(ksymtab_suite)
