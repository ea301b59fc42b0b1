/* threadexit.c MODE - the process ends from a thread other than main:
 *   exit     a worker calls exit(5) while main still spins (status 5)
 *   mainexit main calls pthread_exit; the worker spins on, then returns,
 *            and the process ends with status 0 when its last thread does */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "spin.h"

static void *worker_exits(void *arg)
{
	(void)arg;
	spin_for(0.3);
	exit(5);
}

static void *worker_outlives_main(void *arg)
{
	(void)arg;
	spin_for(0.4);
	return NULL;
}

int main(int argc, char **argv)
{
	int exit_mode = argc > 1 && strcmp(argv[1], "exit") == 0;
	pthread_t t;

	if (pthread_create(&t, NULL, exit_mode ? worker_exits : worker_outlives_main, NULL))
		return 1;
	if (exit_mode)
		for (;;)
			spin_for(1.0);
	spin_for(0.1);
	pthread_exit(NULL);
}
