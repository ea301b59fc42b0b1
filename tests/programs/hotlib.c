/* hotlib.c - libhotlib.so, loaded by hotspots with dlopen() after capture
 * started: its mmap record (with build id) and samples in lib_spin must
 * appear in the run. lib_spin(s) spins until its thread has run s seconds
 * on a CPU: as many samples under any load (see spin.h). */
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) void lib_spin(double seconds)
{
	struct timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 100000; i++)
			sink += (unsigned long)i * 7;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	} while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < seconds);
}
