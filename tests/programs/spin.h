/* spin.h - burn CPU in user space (test targets).
 *   spin_for(0.3);      // until this thread has run 0.3 s on a CPU
 * The budget is the thread's own CPU time, not wall time: a cpu-clock
 * sampler owes a thread samples for the time it ran, so a test can count
 * on 0.3 s * frequency samples however loaded the machine is (on two cores
 * under a load of 15 a wall-time spin of 0.3 s ran for 0.04 s). */
#ifndef XP_TEST_SPIN_H
#define XP_TEST_SPIN_H

#include <time.h>

static volatile unsigned long spin_sink;

static inline double spin_clock(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline double spin_now(void)
{
	return spin_clock(CLOCK_MONOTONIC);
}

/* CPU time this thread has run */
static inline double spin_cpu_now(void)
{
	return spin_clock(CLOCK_THREAD_CPUTIME_ID);
}

__attribute__((noinline)) static void spin_for(double cpu_seconds)
{
	double end = spin_cpu_now() + cpu_seconds;

	while (spin_cpu_now() < end)
		for (int i = 0; i < 10000; i++)
			spin_sink += (unsigned long)i;
}

#endif
