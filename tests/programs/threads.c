/* threads.c - four threads spin for 1.5 s each: every one must be sampled.
 *   threads [seconds]
 */
#include <pthread.h>
#include <stdlib.h>

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
	return 0;
}
