/* test-symbolize.c - symbols of the real fixture ELF files: known names at
 * known offsets, the ip-1 rule for return addresses, C++ demangling, and no
 * guessing when the file on disk is not the one that ran. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-main.h"
#include "ingest/symbolize.h"
#include "synthrun.h"

static struct xp_synth fx;

static void setup(void)
{
	fx.exe = getenv("XP_FIXTURE_EXE");
	fx.lib = getenv("XP_FIXTURE_LIB");
	ck_assert_msg(fx.exe && fx.lib, "XP_FIXTURE_EXE/LIB not set (run through meson test)");
	ck_assert_int_eq(xp_synth_load_elves(&fx), 0);
}

/* File offset of name + off in its ELF file. */
static uint64_t file_off(const char *name, uint64_t off)
{
	const struct xp_synth_func *f = xp_synth_func(&fx, name);
	const struct xp_synth_elf *e;

	ck_assert_msg(f != NULL, "fixture has no function %s", name);
	e = &fx.elf[f->in_lib];
	return f->vaddr + off - e->text_vaddr + e->text_offset;
}

static uint32_t module(struct xp_symbolizer *sy, int lib, const uint8_t *bid, size_t len)
{
	uint32_t m;

	ck_assert_int_eq(xp_symbolizer_module(sy, lib ? fx.lib : fx.exe, bid, len, &m), 0);
	return m;
}

START_TEST(known_functions_at_known_offsets)
{
	struct xp_symbolizer *sy = xp_symbolizer_new(NULL);
	uint32_t exe = module(sy, 0, fx.elf[0].build_id, fx.elf[0].build_id_len);
	uint32_t lib = module(sy, 1, fx.elf[1].build_id, fx.elf[1].build_id_len);
	const char *names[] = { "xp_compute", "xp_parse", "xp_run", "xp_idle", "main" };
	char buf[256];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const struct xp_synth_func *f = xp_synth_func(&fx, names[i]);

		ck_assert_int_eq(xp_symbolizer_lookup(sy, exe, file_off(names[i], 0), buf, sizeof(buf)), 0);
		ck_assert_str_eq(buf, names[i]);
		ck_assert_int_eq(xp_symbolizer_lookup(sy, exe, file_off(names[i], f->size - 1), buf,
						      sizeof(buf)), 0);
		ck_assert_str_eq(buf, names[i]);
	}
	ck_assert_int_eq(xp_symbolizer_lookup(sy, lib, file_off("xp_lib_leaf", 3), buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "xp_lib_leaf");
	ck_assert_int_eq(xp_symbolizer_status(sy, exe), XP_MODULE_OK);
	/* same path and build id: the same module, opened once */
	ck_assert_uint_eq(module(sy, 0, fx.elf[0].build_id, fx.elf[0].build_id_len), exe);
	xp_symbolizer_free(sy);
}
END_TEST

START_TEST(cxx_name_demangled)
{
	struct xp_symbolizer *sy = xp_symbolizer_new(NULL);
	uint32_t lib = module(sy, 1, fx.elf[1].build_id, fx.elf[1].build_id_len);
	char buf[256];

	ck_assert_int_eq(xp_symbolizer_lookup(sy, lib, file_off("_ZN2xp6Widget4drawEi", 1), buf,
					      sizeof(buf)), 0);
	ck_assert_str_eq(buf, "xp::Widget::draw(int)");
	xp_demangle("f", buf, sizeof(buf));     /* a C name is not a type */
	ck_assert_str_eq(buf, "f");
	xp_demangle("_Znot valid", buf, sizeof(buf));
	ck_assert_str_eq(buf, "_Znot valid");
	xp_symbolizer_free(sy);
}
END_TEST

START_TEST(return_address_needs_ip_minus_one)
{
	struct xp_symbolizer *sy = xp_symbolizer_new(NULL);
	uint32_t exe = module(sy, 0, fx.elf[0].build_id, fx.elf[0].build_id_len);
	const struct xp_synth_func *f = xp_synth_func(&fx, "xp_parse");
	uint64_t ret = file_off("xp_parse", f->size);   /* first byte after it */
	char buf[256];
	int r;

	/* the return address itself is not in xp_parse ... */
	r = xp_symbolizer_lookup(sy, exe, ret, buf, sizeof(buf));
	ck_assert(r != 0 || strcmp(buf, "xp_parse") != 0);
	/* ... ret - 1 is, which is what ingest looks up for caller frames */
	ck_assert_int_eq(xp_symbolizer_lookup(sy, exe, ret - 1, buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "xp_parse");
	xp_symbolizer_free(sy);
}
END_TEST

START_TEST(build_id_mismatch_not_guessed)
{
	struct xp_symbolizer *sy = xp_symbolizer_new(NULL);
	uint8_t wrong[20];
	uint32_t lib;
	char buf[256] = "";

	memcpy(wrong, fx.elf[1].build_id, sizeof(wrong));
	wrong[0] ^= 0xff;
	lib = module(sy, 1, wrong, fx.elf[1].build_id_len);
	ck_assert_int_eq(xp_symbolizer_lookup(sy, lib, file_off("xp_lib_leaf", 3), buf, sizeof(buf)),
			 -ENODATA);
	ck_assert_int_eq(xp_symbolizer_status(sy, lib), XP_MODULE_BUILD_ID_MISMATCH);
	ck_assert_str_eq(buf, "");
	/* without a recorded build id there is nothing to check: trusted */
	lib = module(sy, 1, NULL, 0);
	ck_assert_int_eq(xp_symbolizer_lookup(sy, lib, file_off("xp_lib_leaf", 3), buf, sizeof(buf)), 0);
	xp_symbolizer_free(sy);
}
END_TEST

START_TEST(missing_and_unmapped)
{
	struct xp_symbolizer *sy = xp_symbolizer_new(NULL);
	uint32_t gone, anon, exe;
	char buf[64];

	ck_assert_int_eq(xp_symbolizer_module(sy, "/nonexistent/libgone.so", NULL, 0, &gone), 0);
	ck_assert_int_eq(xp_symbolizer_lookup(sy, gone, 0x1000, buf, sizeof(buf)), -ENODATA);
	ck_assert_int_eq(xp_symbolizer_status(sy, gone), XP_MODULE_MISSING);
	ck_assert_int_eq(xp_symbolizer_module(sy, "[vdso]", NULL, 0, &anon), 0);
	ck_assert_int_eq(xp_symbolizer_status(sy, anon), XP_MODULE_ANON);
	/* not an ELF file at all */
	ck_assert_int_eq(xp_symbolizer_module(sy, "/proc/self/status", NULL, 0, &gone), 0);
	ck_assert_int_eq(xp_symbolizer_lookup(sy, gone, 0, buf, sizeof(buf)), -ENODATA);
	/* an offset past every loadable segment */
	exe = module(sy, 0, NULL, 0);
	ck_assert_int_eq(xp_symbolizer_lookup(sy, exe, 1ull << 40, buf, sizeof(buf)), -ENOENT);
	/* a short buffer truncates, never overflows */
	ck_assert_int_eq(xp_symbolizer_lookup(sy, exe, file_off("xp_compute", 0), buf, 4), 0);
	ck_assert_str_eq(buf, "xp_");
	xp_symbolizer_free(sy);
}
END_TEST

/* IN_OPEN events on path since watch() (O_PATH handles make none). */
static int watch(const char *path)
{
	int in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	ck_assert_int_ge(in, 0);
	ck_assert_int_ge(inotify_add_watch(in, path, IN_OPEN), 0);
	return in;
}

static int opens(int in)
{
	char buf[4096] __attribute__((aligned(8)));
	int n = 0;
	ssize_t len;

	while ((len = read(in, buf, sizeof(buf))) > 0)
		for (char *p = buf; p < buf + len; p += sizeof(struct inotify_event) +
		     ((struct inotify_event *)p)->len)
			n += !!(((struct inotify_event *)p)->mask & IN_OPEN);
	return n;
}

START_TEST(devices_and_fifos_never_opened)
{
	/* a module path that names a FIFO or a device: checked before it is
	 * opened (opening a tty, a FIFO, a watchdog can block or act) */
	char dir[] = "/tmp/xp-symfifo-XXXXXX", fifo[64];
	struct xp_symbolizer *sy = xp_symbolizer_new(NULL);
	uint32_t mf, md;
	int in_fifo, in_dev;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/lib.so", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	in_fifo = watch(fifo);
	in_dev = watch("/dev/null");
	ck_assert_int_eq(xp_symbolizer_module(sy, fifo, NULL, 0, &mf), 0);
	ck_assert_int_eq(xp_symbolizer_module(sy, "/dev/null", NULL, 0, &md), 0);
	ck_assert_int_eq(xp_symbolizer_open(sy, mf), XP_MODULE_NOT_ELF);
	ck_assert_int_eq(xp_symbolizer_open(sy, md), XP_MODULE_NOT_ELF);
	ck_assert_int_lt(xp_symbolizer_fd(sy, mf), 0);
	ck_assert_int_eq(opens(in_fifo), 0);
	ck_assert_int_eq(opens(in_dev), 0);
	/* a regular file is opened, and can be again as the same file */
	md = module(sy, 0, NULL, 0);
	ck_assert_int_eq(xp_symbolizer_open(sy, md), XP_MODULE_OK);
	{
		int fd = xp_symbolizer_fd(sy, md);

		ck_assert_int_ge(fd, 0);
		close(fd);
	}
	close(in_fifo);
	close(in_dev);
	unlink(fifo);
	rmdir(dir);
	xp_symbolizer_free(sy);
}
END_TEST

START_TEST(inlined_functions_from_dwarf)
{
	struct xp_symbolizer *sy = xp_symbolizer_new(NULL);
	uint32_t exe = module(sy, 0, fx.elf[0].build_id, fx.elf[0].build_id_len);
	const struct xp_synth_func *host = xp_synth_func(&fx, "xp_inline_host");
	const struct xp_synth_func *run = xp_synth_func(&fx, "xp_run");
	char names[XP_INLINE_MAX][XP_INLINE_NAME_LEN];
	int inlined = 0;

	ck_assert_ptr_nonnull(host);
	for (uint64_t off = 0; off < host->size; off++) {
		int n = xp_symbolizer_inlines(sy, exe, file_off("xp_inline_host", off), names,
					      XP_INLINE_MAX);

		ck_assert_int_le(n, 1);
		if (n == 1) {
			ck_assert_str_eq(names[0], "xp_inlined_step");
			inlined++;
		}
	}
	ck_assert_int_gt(inlined, 0);
	/* a function with nothing inlined */
	for (uint64_t off = 0; off < run->size; off++)
		ck_assert_int_eq(xp_symbolizer_inlines(sy, exe, file_off("xp_run", off), names,
						       XP_INLINE_MAX), 0);
	xp_symbolizer_free(sy);
}
END_TEST

/* A stripped copy of the executable whose symbols live in a separate debug
 * file (.debug/ next to it, found through .gnu_debuglink, build id checked). */
START_TEST(separate_debug_info_found)
{
	char dir[] = "/tmp/xp-test-debug-XXXXXX", cmd[1024], path[256];
	struct xp_symbolizer *sy;
	uint32_t m;
	char buf[128];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/xptarget", dir);
	snprintf(cmd, sizeof(cmd), "mkdir %s/.debug && objcopy --only-keep-debug %s %s/.debug/xptarget.debug"
		 " && cd %s && objcopy --strip-all --add-gnu-debuglink=.debug/xptarget.debug %s xptarget",
		 dir, fx.exe, dir, dir, fx.exe);
	ck_assert_msg(system(cmd) == 0, "objcopy (binutils) failed: %s", cmd);
	sy = xp_symbolizer_new(NULL);
	ck_assert_int_eq(xp_symbolizer_module(sy, path, fx.elf[0].build_id, fx.elf[0].build_id_len, &m), 0);
	ck_assert_int_eq(xp_symbolizer_lookup(sy, m, file_off("xp_compute", 4), buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "xp_compute");
	xp_symbolizer_free(sy);
	/* without the debug file the stripped copy has no such symbol */
	snprintf(cmd, sizeof(cmd), "rm -r %s/.debug", dir);
	ck_assert_int_eq(system(cmd), 0);
	sy = xp_symbolizer_new(NULL);
	ck_assert_int_eq(xp_symbolizer_module(sy, path, fx.elf[0].build_id, fx.elf[0].build_id_len, &m), 0);
	ck_assert(xp_symbolizer_lookup(sy, m, file_off("xp_compute", 4), buf, sizeof(buf)) != 0 ||
		  strcmp(buf, "xp_compute") != 0);
	xp_symbolizer_free(sy);
	snprintf(cmd, sizeof(cmd), "rm -r %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *symbolize_suite(void)
{
	Suite *s = suite_create("symbolize");
	TCase *tc = tcase_create("fixture");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, known_functions_at_known_offsets);
	tcase_add_test(tc, cxx_name_demangled);
	tcase_add_test(tc, return_address_needs_ip_minus_one);
	tcase_add_test(tc, build_id_mismatch_not_guessed);
	tcase_add_test(tc, missing_and_unmapped);
	tcase_add_test(tc, devices_and_fifos_never_opened);
	tcase_add_test(tc, separate_debug_info_found);
	tcase_add_test(tc, inlined_functions_from_dwarf);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(symbolize_suite)
