/* manythreads.c - N threads that wait and a main thread that spins, for
 * `xpcap record -p` of a process with many threads (nonroot_test.py
 * manythreads): -p opens events on each thread. Prints "ready N" once all
 * threads exist, then spins in 10 ms slices until killed (or SECONDS).
 *   manythreads N [SECONDS]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "spin.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;

static void *waiter(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;)
		pthread_cond_wait(&never, &lock);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_attr_t attr;
	double end;
	int n;

	if (argc < 2)
		return 2;
	n = atoi(argv[1]);
	end = spin_now() + (argc > 2 ? atof(argv[2]) : 60);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (int i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, &attr, waiter, NULL)) {
			perror("pthread_create");
			return 3;
		}
	}
	printf("ready %d\n", n);
	fflush(stdout);
	while (spin_now() < end)
		spin_for(0.01);
	_exit(0);
}
