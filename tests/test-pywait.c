/* test-pywait.c - a normal user's waits get the call they blocked in:
 * /proc/PID/task/TID/syscall as the kernel prints it, parsed (capture/
 * pywait.c), read of a real thread asleep in clock_nanosleep and of one
 * running, the reads' budget; and ingest's side (ingest/pywaits.c): the
 * first blocked read inside an off-CPU interval, by thread. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "check-main.h"
#include "capture/pywait.h"
#include "ingest/pywaits.h"

START_TEST(parses_the_kernel_text)
{
	struct xp_pywait w = { 0 };

	ck_assert_int_eq(pywait_parse("running\n", &w), 0);
	ck_assert_int_eq(pywait_parse("230 0x1 0x0 0x7ffd5b0 0x0 0x0 0x0 0x7ffd5a8 0x7f226cfb6503\n",
				      &w), 1);
	ck_assert_int_eq(w.syscall, 230);
	ck_assert_uint_eq(w.sp, 0x7ffd5a8);
	ck_assert_uint_eq(w.pc, 0x7f226cfb6503);
	/* blocked outside a system call (a page fault): sp and pc only */
	ck_assert_int_eq(pywait_parse("-1 0x7ffd000 0x401000\n", &w), 1);
	ck_assert_int_eq(w.syscall, -1);
	ck_assert_uint_eq(w.pc, 0x401000);
	ck_assert_int_eq(pywait_parse("", &w), -EBADMSG);
	ck_assert_int_eq(pywait_parse("230 0x1 0x2\n", &w), -EBADMSG);
	ck_assert_int_eq(pywait_parse("-1 0x1 0x2 0x3\n", &w), -EBADMSG);
	ck_assert_int_eq(pywait_parse("230 0x1 0x0 0x0 0x0 0x0 0x0 0x1 0x2 junk", &w), -EBADMSG);
	ck_assert_int_eq(pywait_parse("99999 0x1 0x0 0x0 0x0 0x0 0x0 0x1 0x2", &w), -EBADMSG);
}
END_TEST

static atomic_int tid_of_thread, stop;

static void nap(void)
{
	struct timespec ms = { 0, 2000000 };

	nanosleep(&ms, NULL);
}

static void *sleeper(void *arg)
{
	struct timespec ts = { 0, 200000000 };

	(void)arg;
	tid_of_thread = (int)syscall(SYS_gettid);
	while (!stop)
		clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	return NULL;
}

static void *spinner(void *arg)
{
	(void)arg;
	tid_of_thread = (int)syscall(SYS_gettid);
	while (!stop)
		;
	return NULL;
}

/* tid of a thread running fn, once it has started (and slept a little). */
static pthread_t start(void *(*fn)(void *))
{
	pthread_t th;
	struct timespec ms = { 0, 20000000 };

	tid_of_thread = 0;
	stop = 0;
	ck_assert_int_eq(pthread_create(&th, NULL, fn, NULL), 0);
	while (!tid_of_thread)
		nanosleep(&ms, NULL);
	nanosleep(&ms, NULL);
	return th;
}

START_TEST(reads_a_real_thread)
{
	struct xp_pywait w = { 0 };
	pthread_t th = start(sleeper);
	int r = -1;

	/* asleep in clock_nanosleep: its number and a user pc */
	/* a loaded machine may leave it runnable after a wake-up for a while */
	for (int i = 0; i < 200 && r != 1; i++, nap())
		r = pywait_read(getpid(), (uint32_t)tid_of_thread, &w);
	ck_assert_int_eq(r, 1);
#ifdef SYS_clock_nanosleep
	ck_assert_int_eq(w.syscall, SYS_clock_nanosleep);
#endif
	ck_assert_uint_ne(w.pc, 0);
	ck_assert_uint_ne(w.sp, 0);
	stop = 1;
	pthread_join(th, NULL);
	/* on CPU (or runnable): not a wait */
	th = start(spinner);
	ck_assert_int_eq(pywait_read(getpid(), (uint32_t)tid_of_thread, &w), 0);
	stop = 1;
	pthread_join(th, NULL);
	ck_assert_int_lt(pywait_read(getpid(), 0x7ffffff0u, &w), 0);
}
END_TEST

/* Only a thread whose chain stood still since its previous read is asked. */
START_TEST(asks_a_thread_that_stood_still)
{
	struct pywait_cache *c = pywait_cache_new(1000, 1);
	struct xp_pywait w = { 0 };
	pthread_t th = start(sleeper);
	uint32_t tid = (uint32_t)tid_of_thread;
	int got = 0;

	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(pywait_check(c, getpid(), tid, 42, 1000000, &w), 0);   /* first seen */
	ck_assert_uint_eq(pywait_reads(c), 0);
	ck_assert_int_eq(pywait_check(c, getpid(), tid, 43, 2000000, &w), 0);   /* it moved */
	ck_assert_uint_eq(pywait_reads(c), 0);
	for (int i = 0; i < 200 && !got; i++, nap())                            /* it stood still */
		got = pywait_check(c, getpid(), tid, 43, 3000000 + (uint64_t)i * 1000000, &w);
	ck_assert_int_eq(got, 1);
	ck_assert_uint_ge(pywait_reads(c), 1);
	ck_assert_uint_ne(w.pc, 0);
	stop = 1;
	pthread_join(th, NULL);
	pywait_cache_free(c);
}
END_TEST

START_TEST(budget_per_second)
{
	struct pywait_budget b;
	unsigned n = 0;

	pywait_budget_init(&b, 100, 1000000000ull);
	/* a burst, then none until time passes */
	while (pywait_take(&b, 1000000000ull))
		n++;
	ck_assert_uint_eq(n, 32);
	ck_assert(!pywait_take(&b, 1005000000ull));        /* 5 ms: half a read */
	ck_assert(pywait_take(&b, 1010000000ull));         /* 10 ms: one */
	ck_assert(!pywait_take(&b, 1010000000ull));
	n = 0;
	while (pywait_take(&b, 3000000000ull))              /* 2 s later: the burst again */
		n++;
	ck_assert_uint_eq(n, 32);
}
END_TEST

static void pywait_at(struct xp_pywaits *pw, uint32_t tid, uint64_t ts, uint64_t pc, int want)
{
	struct {
		struct xp_record_header h;
		struct xp_pywait w;
	} r;

	memset(&r, 0, sizeof(r));
	r.h.type = XP_REC_PYWAIT;
	r.h.size = sizeof(r);
	r.w = (struct xp_pywait){ .ts = ts, .pc = pc, .pid = 7, .tid = tid, .syscall = 230 };
	ck_assert_int_eq(xp_pywaits_record(pw, &r.h), want);
}

START_TEST(an_interval_takes_the_read_inside)
{
	struct xp_pywaits *pw = xp_pywaits_new();
	struct xp_record_header other = { .type = XP_REC_PYSAMPLE, .size = 8 };
	uint64_t pc = 0;

	ck_assert_ptr_nonnull(pw);
	pywait_at(pw, 8, 1000, 0xa1, 1);
	pywait_at(pw, 8, 3000, 0xa3, 1);
	pywait_at(pw, 9, 2000, 0xb2, 1);
	pywait_at(pw, 8, 2000, 0xa2, -EBADMSG);     /* one reader: in time order */
	ck_assert_int_eq(xp_pywaits_record(pw, &other), 0);
	ck_assert_int_eq(xp_pywaits_in(pw, 7, 8, 500, 1500, &pc), 1);
	ck_assert_uint_eq(pc, 0xa1);
	ck_assert_int_eq(xp_pywaits_in(pw, 7, 8, 1001, 5000, &pc), 1);
	ck_assert_uint_eq(pc, 0xa3);
	ck_assert_int_eq(xp_pywaits_in(pw, 7, 8, 1001, 2999, &pc), 0);   /* none inside */
	ck_assert_int_eq(xp_pywaits_in(pw, 7, 9, 1000, 3000, &pc), 1);   /* its own thread's */
	ck_assert_uint_eq(pc, 0xb2);
	ck_assert_int_eq(xp_pywaits_in(pw, 6, 8, 0, 9000, &pc), 0);
	xp_pywaits_free(pw);
}
END_TEST

static Suite *pywait_suite(void)
{
	Suite *s = suite_create("pywait");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, parses_the_kernel_text);
	tcase_add_test(tc, reads_a_real_thread);
	tcase_add_test(tc, asks_a_thread_that_stood_still);
	tcase_add_test(tc, budget_per_second);
	tcase_add_test(tc, an_interval_takes_the_read_inside);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(pywait_suite)
