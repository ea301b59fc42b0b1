/* inproc-caller.c - takes launch stacks in-process as the injection library
 * does under `xpcap record --launch-stacks inproc`, from known functions and
 * two threads, without a GPU: the run's launch-<pid>.xpr then goes through
 * ingest's unwinder like the real thing. Ids: 1000+i (main thread) and
 * 2000+i (the second thread), cbid 0x80000000|i%7.
 *   XPCAP_RUN_DIR=/abs/run XPCAP_LAUNCH_STACKS=inproc XPCAP_LAUNCH_COPY=8192 inproc-caller 100
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "src/marker.h"
#include "cupti/stacks.h"

static int count;

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

__attribute__((noinline)) void launch_kernel_like(uint64_t corr, int i)
{
	xpc_stack_take(now_ns(), corr, XP_CBID(1, i % 7), NULL);
	__asm__ volatile("" ::: "memory");   /* not a tail call */
}

__attribute__((noinline)) static void launch_all(uint64_t base)
{
	for (int i = 0; i < count; i++)
		launch_kernel_like(base + (uint64_t)i, i);
}

__attribute__((noinline)) static void *second_thread(void *arg)
{
	(void)arg;
	launch_all(2000);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *dir = getenv(XP_ENV_RUN_DIR), *mode = getenv(XP_ENV_LAUNCH_STACKS);
	const char *copy = getenv(XP_ENV_LAUNCH_COPY);
	char path[4096];
	pthread_t t;
	int fd, err;

	count = argc > 1 ? atoi(argv[1]) : 100;
	if (!dir || !mode || strcmp(mode, "inproc") || !copy) {
		fprintf(stderr, "inproc-caller: run me under xpcap record --launch-stacks inproc\n");
		return 3;
	}
	snprintf(path, sizeof(path), "%s/launch-%d.xpr", dir, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || (err = xpc_stacks_start(fd, getpid(), (uint32_t)atoi(copy)))) {
		fprintf(stderr, "inproc-caller: cannot start on %s\n", path);
		return 4;
	}
	if (pthread_create(&t, NULL, second_thread, NULL))
		return 5;
	launch_all(1000);
	pthread_join(t, NULL);
	xpc_stacks_finish();
	return 0;
}
