/* test-cupti-init.c - the injection library gets out of the way without a
 * GPU (CI): InitializeInjection returns 1 whatever happens, writes nothing
 * without a valid absolute XPCAP_RUN_DIR, and otherwise leaves a stream
 * whose status record says why tracing is off; a non-dumpable process
 * gets no file at all. Each test runs in its own
 * forked process (Check's default), as InitializeInjection runs once per
 * process. The library path comes from XP_CUPTI_LIB. */
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "check-main.h"
#include "src/runfile.h"
#include "src/runfmt_gpu.h"

static char dir[] = "/tmp/xp-test-cupti-XXXXXX";

static int init_lib(void)
{
	const char *lib = getenv("XP_CUPTI_LIB");
	void *h;
	int (*init)(void);

	ck_assert_msg(lib != NULL, "XP_CUPTI_LIB not set");
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(h != NULL, "dlopen: %s", dlerror());
	*(void **)&init = dlsym(h, "InitializeInjection");
	ck_assert_ptr_nonnull(init);
	ck_assert_ptr_nonnull(dlsym(h, "xpcap_correlation_marker"));
	/* Internal symbols must not leak (they would clash with the host). */
	ck_assert_ptr_null(dlsym(h, "xp_writer_open"));
	return init();
}

static int count_files(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void setup(void)
{
	strcpy(dir, "/tmp/xp-test-cupti-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/gpu-%d.xpr", dir, (int)getpid());
	unlink(path);
	rmdir(dir);
}

START_TEST(no_run_dir)
{
	unsetenv("XPCAP_RUN_DIR");
	ck_assert_int_eq(init_lib(), 1);
	ck_assert_int_eq(count_files(), 0);
}
END_TEST

START_TEST(relative_or_dotdot_run_dir_refused)
{
	char bad[300];

	snprintf(bad, sizeof(bad), "%s/../%s", dir, strrchr(dir, '/') + 1);
	setenv("XPCAP_RUN_DIR", bad, 1);
	ck_assert_int_eq(init_lib(), 1);
	ck_assert_int_eq(init_lib(), 1);        /* second call: no-op */
	ck_assert_int_eq(count_files(), 0);
}
END_TEST

/* a process that made itself non-dumpable before it used CUDA: its memory
 * is not its user's to copy, as for a setuid program (AT_SECURE) */
START_TEST(not_dumpable_writes_nothing)
{
	setenv("XPCAP_RUN_DIR", dir, 1);
	ck_assert_int_eq(prctl(PR_SET_DUMPABLE, 0), 0);
	ck_assert_int_eq(init_lib(), 1);
	ck_assert_int_eq(prctl(PR_SET_DUMPABLE, 1), 0);
	ck_assert_int_eq(count_files(), 0);
}
END_TEST

START_TEST(no_gpu_leaves_a_status)
{
	struct xp_reader *r = NULL;
	const struct xp_record_header *h;
	char path[256];
	int err, statuses = 0, started = 0;

	setenv("XPCAP_RUN_DIR", dir, 1);
	ck_assert_int_eq(init_lib(), 1);
	snprintf(path, sizeof(path), "%s/gpu-%d.xpr", dir, (int)getpid());
	err = xp_reader_open(&r, path);
	/* With a GPU and driver present tracing starts; the stream is then
	 * written at exit, so only check it opens. */
	while (err == 0 && (err = xp_reader_next(r, &h)) > 0) {
		err = 0;
		if (h->type == XP_REC_GPU_STATUS) {
			const struct xp_gpu_status *st = xp_record_payload(h);

			statuses++;
			started |= st->code == XP_GPU_ST_STARTED;
			if (!started)
				ck_assert_uint_eq(st->severity, XP_GPU_STATUS_FATAL);
		}
	}
	ck_assert_int_eq(err, 0);
	ck_assert_uint_eq(xp_reader_header(r)->stream, XP_STREAM_GPU);
	ck_assert_uint_eq(xp_reader_header(r)->pid, (uint32_t)getpid());
	ck_assert_int_ge(statuses, 1);
	xp_reader_close(r);
}
END_TEST

static Suite *cupti_init_suite(void)
{
	Suite *s = suite_create("cupti-init");
	TCase *tc = tcase_create("init");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, no_run_dir);
	tcase_add_test(tc, relative_or_dotdot_run_dir_refused);
	tcase_add_test(tc, no_gpu_leaves_a_status);
	tcase_add_test(tc, not_dumpable_writes_nothing);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(cupti_init_suite)
