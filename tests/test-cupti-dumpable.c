/* test-cupti-dumpable.c - in-process launch stacks (cupti/stacks.c) of a
 * process that makes itself non-dumpable (prctl PR_SET_DUMPABLE 0): what
 * its stacks held before is kept, nothing copied after reaches the file,
 * and the launches left out are counted as lost, reason privileged
 * (issue 38, finding 1, the injection library's half). The library's
 * own code, no GPU: launches as callbacks.c makes them, each with a
 * marker string in its caller's frame (inside the copy), and the file
 * read back whole (zstd blocks expanded) and searched. Each test runs in
 * a process of its own (the library's state is global). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "check-main.h"
#include "src/marker.h"
#include "src/runfile.h"
#include "cupti/stacks.h"

#define BEFORE "xpdump-before-marker-0123456789"
#define AFTER "xpdump-after-marker-9876543210"

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* A launch whose caller's frame holds text (within the stack copy). */
__attribute__((noinline)) static void launch(uint64_t corr, const char *text)
{
	volatile char held[64];

	for (size_t i = 0; i <= strlen(text); i++)
		held[i] = text[i];
	xpc_stack_take(now_ns(), corr, XP_CBID(0, 211), NULL);
	__asm__ volatile("" ::"r"(held) : "memory");
}

static int has(const unsigned char *p, size_t n, const char *text)
{
	return memmem(p, n, text, strlen(text)) != NULL;
}

START_TEST(nothing_copied_after_prctl)
{
	char dir[] = "/tmp/xp-test-dumpable-XXXXXX", path[256];
	struct xp_reader *r = NULL;
	const struct xp_record_header *h;
	struct xpc_stacks_stats st;
	int fd, err, before = 0, after = 0, launches = 0;
	uint64_t priv = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/launch-%d.xpr", dir, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(xpc_stacks_start(fd, getpid(), 8192), 0);
	for (uint64_t i = 1; i <= 5; i++)
		launch(i, BEFORE);
	/* until the writer has taken them: they were copied while dumpable */
	for (int i = 0; i < 5000; i++) {
		xpc_stacks_stats(&st);
		if (__atomic_load_n(&st.taken, __ATOMIC_RELAXED) >= 5)
			break;
		usleep(1000);
	}
	ck_assert_int_eq(prctl(PR_SET_DUMPABLE, 0), 0);
	for (uint64_t i = 6; i <= 25; i++)
		launch(i, AFTER);
	ck_assert_int_eq(xpc_stacks_finish(), 0);
	ck_assert_int_eq(prctl(PR_SET_DUMPABLE, 1), 0);

	ck_assert_int_eq(xp_reader_open(&r, path), 0);
	while ((err = xp_reader_next(r, &h)) > 0) {
		const unsigned char *p = xp_record_payload(h);
		size_t n = h->size - sizeof(*h);

		before += has(p, n, BEFORE);
		after += has(p, n, AFTER);
		launches += h->type == XP_REC_LAUNCH;
		if (h->type == XP_REC_LOST) {
			const struct xp_lost *l = (const void *)p;

			if (l->kind == XP_REC_LAUNCH && l->reason == XP_LOST_PRIVILEGED)
				priv += l->count;
		}
	}
	ck_assert_int_eq(err, 0);
	xp_reader_close(r);
	ck_assert_int_eq(before, 5);            /* the search finds what is there */
	ck_assert_int_eq(after, 0);
	ck_assert_int_eq(launches, 5);
	ck_assert_uint_eq(priv, 20);
	unlink(path);
	rmdir(dir);
}
END_TEST

static Suite *cupti_dumpable_suite(void)
{
	Suite *s = suite_create("cupti-dumpable");
	TCase *tc = tcase_create("dumpable");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, nothing_copied_after_prctl);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(cupti_dumpable_suite)
