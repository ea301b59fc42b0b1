/* spin.h - burn CPU in user space for a while (test targets). */
#ifndef XP_TEST_SPIN_H
#define XP_TEST_SPIN_H

#include <time.h>

static volatile unsigned long spin_sink;

static inline double spin_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin_for(double seconds)
{
	double end = spin_now() + seconds;

	while (spin_now() < end)
		for (int i = 0; i < 10000; i++)
			spin_sink += (unsigned long)i;
}

#endif
