/* test-cupti-flusher.c - the exit waits for the flusher (cupti/buffers.c)
 * at most FLUSHER_JOIN_MS: the exit's last, forced CUPTI flush runs on the
 * flusher thread, and a flusher stuck inside CUPTI is left running (issue
 * 38: the profiled program's exit never waits on us for long). CUPTI's
 * flush is replaced by one that returns, or one that never does (no GPU
 * in CI); the rest is the library's own code. */
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "check-main.h"
#include "cupti/xpcupti.h"

static int stuck;                       /* the flush never returns */
static int forced_elsewhere;            /* a forced flush came from another thread */
static pthread_t main_thread;

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
	if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED && !pthread_equal(pthread_self(), main_thread))
		__atomic_store_n(&forced_elsewhere, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&stuck, __ATOMIC_ACQUIRE))
		pause();
	return CUPTI_SUCCESS;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

START_TEST(last_flush_on_the_flusher)
{
	main_thread = pthread_self();
	xpc.active = 1;
	ck_assert_int_eq(xpc_flusher_start(), 0);
	ck_assert_int_eq(xpc_flusher_stop(), 0);
	ck_assert_int_eq(__atomic_load_n(&forced_elsewhere, __ATOMIC_ACQUIRE), 1);
}
END_TEST

START_TEST(stuck_flusher_left_behind)
{
	double t0;
	int err;

	main_thread = pthread_self();
	stuck = 1;
	xpc.active = 1;
	ck_assert_int_eq(xpc_flusher_start(), 0);
	/* past its 500 ms period: it is inside the flush now, for good */
	usleep(700000);
	t0 = now_s();
	err = xpc_flusher_stop();
	ck_assert_int_eq(err, -ETIMEDOUT);
	ck_assert_double_lt(now_s() - t0, 4.0);
}
END_TEST

static Suite *cupti_flusher_suite(void)
{
	Suite *s = suite_create("cupti-flusher");
	TCase *tc = tcase_create("flusher");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, last_flush_on_the_flusher);
	tcase_add_test(tc, stuck_flusher_left_behind);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(cupti_flusher_suite)
