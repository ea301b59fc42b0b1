/* joinwait.h - joins one of the library's threads for a bounded time: the
 * profiled program's exit never waits on us longer (README: Never making
 * the program wait).
 *   if (xpc_join_bounded(writer, 1000)) ...   // still running: leave it
 */
#ifndef XPCUPTI_JOINWAIT_H
#define XPCUPTI_JOINWAIT_H

#include <pthread.h>

/* pthread_join for at most ms: 0, or ETIMEDOUT with the thread running on
 * (never joined then: it dies with the process). */
int xpc_join_bounded(pthread_t t, unsigned ms);

#endif
