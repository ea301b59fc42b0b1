/* threads.c - four threads spin, each until it has run SECONDS (1.5) on a
 * CPU (spin.h): every one must be sampled.
 *   threads [seconds] [--cpu-time]
 * --cpu-time prints the CPU time the process used to stderr, so a test can
 * tell how many samples a cpu-clock sampler owed it (wall time cannot: on a
 * loaded machine the threads do not get a CPU each).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "spin.h"

static double seconds = 1.5;

static void *worker(void *arg)
{
	(void)arg;
	spin_for(seconds);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[4];

	if (argc > 1)
		seconds = atof(argv[1]);
	for (int i = 0; i < 4; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	if (argc > 2 && !strcmp(argv[2], "--cpu-time")) {
		struct timespec ts;

		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		fprintf(stderr, "cpu_seconds=%.6f\n", ts.tv_sec + ts.tv_nsec / 1e9);
	}
	return 0;
}
