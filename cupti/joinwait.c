/* joinwait.c - a bounded pthread_join (see joinwait.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE                 /* pthread_timedjoin_np */
#endif
#include "cupti/joinwait.h"

#include <time.h>

int xpc_join_bounded(pthread_t t, unsigned ms)
{
	struct timespec until;

	/* CLOCK_REALTIME: the clock pthread_timedjoin_np takes (a clock
	 * step only moves the bound, which stays finite) */
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	return pthread_timedjoin_np(t, NULL, &until);
}
