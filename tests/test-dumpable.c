/* test-dumpable.c - the unprivileged sampler's rule for processes that are
 * not dumpable (capture/dumpable.c), with a fake /proc and clock: a process
 * seen out stays out even after it makes itself dumpable again, including
 * what it took before it was seen; an exec or a new process with the pid
 * starts anew; a child forked while its parent was out starts out; looks
 * are made once per pass, and again for a record taken after the look. */
#include <stdint.h>

#include "check-main.h"
#include "capture/dumpable.h"

#define NPID 16

static int state[NPID];             /* 1 dumpable, 0 not, -1 gone */
static int looks[NPID];
static uint64_t clock_now;

static int fake_look(void *ctx, pid_t pid)
{
	(void)ctx;
	ck_assert_int_lt(pid, NPID);
	looks[pid]++;
	return state[pid];
}

static uint64_t fake_now(void)
{
	return clock_now;
}

static struct dumpable *fresh(void)
{
	for (int i = 0; i < NPID; i++)
		state[i] = 1, looks[i] = 0;
	clock_now = 1000;
	return dumpable_new(fake_look, NULL, fake_now);
}

START_TEST(test_sticky)
{
	struct dumpable *t = fresh();

	ck_assert(dumpable_keeps(t, 3, 100));
	state[3] = 0;                   /* prctl(PR_SET_DUMPABLE, 0) */
	dumpable_pass(t);
	ck_assert(!dumpable_keeps(t, 3, 200));
	state[3] = 1;                   /* dumpable again */
	dumpable_pass(t);
	/* taken while it was out (or after): out, however late it is read */
	ck_assert(!dumpable_keeps(t, 3, 150));
	ck_assert(!dumpable_keeps(t, 3, 5000));
	ck_assert(!dumpable_allowed(t, 3));
	state[3] = -1;                  /* gone */
	ck_assert(!dumpable_keeps(t, 3, 6000));
	/* others are not touched */
	ck_assert(dumpable_keeps(t, 4, 6000));
	ck_assert(dumpable_allowed(t, 4));
	dumpable_free(t);
}
END_TEST

START_TEST(test_gone_unseen)
{
	struct dumpable *t = fresh();

	state[5] = -1;
	ck_assert(dumpable_keeps(t, 5, 100));
	ck_assert(dumpable_allowed(t, 5));
	dumpable_free(t);
}
END_TEST

START_TEST(test_once_per_pass)
{
	struct dumpable *t = fresh();

	for (int i = 0; i < 10; i++)
		ck_assert(dumpable_keeps(t, 2, 100 + i));
	ck_assert_int_eq(looks[2], 1);
	dumpable_pass(t);
	ck_assert(dumpable_keeps(t, 2, 200));
	ck_assert_int_eq(looks[2], 2);
	dumpable_free(t);
}
END_TEST

START_TEST(test_record_after_look)
{
	struct dumpable *t = fresh();

	/* looked at (dumpable) at 1000; a record of 1100 read in the same
	 * pass was taken after the look: looked at again */
	ck_assert(dumpable_keeps(t, 11, 900));
	state[11] = 0;
	clock_now = 1200;
	ck_assert(dumpable_keeps(t, 11, 950));
	ck_assert(!dumpable_keeps(t, 11, 1100));
	ck_assert_int_eq(looks[11], 2);
	dumpable_free(t);
}
END_TEST

START_TEST(test_exec)
{
	struct dumpable *t = fresh();

	state[6] = 0;
	clock_now = 1000;
	ck_assert(!dumpable_keeps(t, 6, 900));
	state[6] = 1;                   /* it executed a program: new memory */
	dumpable_exec(t, 6, 1500);
	dumpable_pass(t);
	ck_assert(!dumpable_keeps(t, 6, 1400));   /* the old image's */
	ck_assert(dumpable_keeps(t, 6, 1600));    /* the new one's */
	/* an exec read after a look that saw the new image out changes nothing */
	state[6] = 0;
	clock_now = 3000;
	dumpable_pass(t);
	ck_assert(!dumpable_keeps(t, 6, 2900));
	state[6] = 1;
	dumpable_exec(t, 6, 2500);
	dumpable_pass(t);
	ck_assert(!dumpable_keeps(t, 6, 2600));
	ck_assert(!dumpable_keeps(t, 6, 9000));
	dumpable_free(t);
}
END_TEST

START_TEST(test_exec_forgets_look)
{
	struct dumpable *t = fresh();

	/* out at a look, then an exec in the same pass: the look was of the
	 * old image, the new image is looked at again */
	state[7] = 0;
	ck_assert(!dumpable_keeps(t, 7, 900));
	state[7] = 1;
	dumpable_exec(t, 7, 1100);
	ck_assert(dumpable_keeps(t, 7, 1200));
	ck_assert_int_eq(looks[7], 2);
	dumpable_free(t);
}
END_TEST

START_TEST(test_fork)
{
	struct dumpable *t = fresh();

	state[8] = 0;
	ck_assert(!dumpable_keeps(t, 8, 900));
	/* its child copies the mode: out even if gone before any look */
	state[9] = -1;
	dumpable_fork(t, 9, 8, 1100);
	ck_assert(!dumpable_keeps(t, 9, 1150));
	/* until it executes a program */
	state[9] = 1;
	dumpable_exec(t, 9, 1200);
	dumpable_pass(t);
	ck_assert(dumpable_keeps(t, 9, 1250));
	/* a pid seen out, given to a new process of a dumpable parent */
	state[10] = 0;
	clock_now = 2000;
	ck_assert(!dumpable_keeps(t, 10, 1900));
	state[10] = 1;
	dumpable_fork(t, 10, 4, 2500);
	dumpable_pass(t);
	ck_assert(!dumpable_keeps(t, 10, 2400));
	ck_assert(dumpable_keeps(t, 10, 2600));
	dumpable_free(t);
}
END_TEST

START_TEST(test_many)
{
	struct dumpable *t = fresh();
	int kept = 0;

	/* marks grow past their first table, none forgotten */
	state[1] = 0;
	ck_assert(!dumpable_keeps(t, 1, 60));
	for (pid_t p = 100; p < 5100; p++)
		dumpable_fork(t, p, 1, 70);
	for (pid_t p = 100; p < 5100; p++)
		kept += dumpable_keeps(t, p, 80);
	ck_assert_int_eq(kept, 0);
	dumpable_free(t);
}
END_TEST

static Suite *dumpable_suite(void)
{
	Suite *s = suite_create("dumpable");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_sticky);
	tcase_add_test(tc, test_gone_unseen);
	tcase_add_test(tc, test_once_per_pass);
	tcase_add_test(tc, test_record_after_look);
	tcase_add_test(tc, test_exec);
	tcase_add_test(tc, test_exec_forgets_look);
	tcase_add_test(tc, test_fork);
	tcase_add_test(tc, test_many);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(dumpable_suite)
