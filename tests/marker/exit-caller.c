/* exit-caller.c - the profiled program's exit must never wait on the
 * injection library's threads (issue 38). In-process launch stacks run as
 * in libxpcupti.so (cupti/stacks.c) and are finished from an atexit
 * handler, as init.c's at_exit does; then the program exits at a moment
 * that once held it up:
 *   dlopen LIB   LIB's constructor calls exit() inside the dlopen that loads
 *                libtorch_cpu.so, the loader lock held (exit-ctor.c): the
 *                writer thread that waited for that lock hung the exit
 *   stuck        the launch file is a pipe nobody reads: the writer blocks
 *                in write() for good, and exit() must not join it unbounded
 * Both exit with status 3.
 *   XPCAP_RUN_DIR=/abs/run XPCAP_LAUNCH_COPY=8192 exit-caller dlopen /path/libexit-ctor.so
 *   XPCAP_LAUNCH_COPY=8192 exit-caller stuck
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "src/marker.h"
#include "cupti/stacks.h"

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* A launch with a stack that does not compress: the pipe fills soon. */
__attribute__((noinline)) static void launch(uint64_t corr)
{
	volatile uint64_t noise[1024];

	for (unsigned i = 0; i < 1024; i++)
		noise[i] = (corr * 1024 + i) * 0x9e3779b97f4a7c15ull;
	xpc_stack_take(now_ns(), corr, XP_CBID(0, 211), NULL);
	__asm__ volatile("" ::"r"(noise) : "memory");
}

static void finish(void)
{
	xpc_stacks_finish();
}

int main(int argc, char **argv)
{
	const char *dir = getenv(XP_ENV_RUN_DIR), *copy = getenv(XP_ENV_LAUNCH_COPY);
	char path[4096];
	int fd, p[2];

	if (argc < 2 || !copy || (strcmp(argv[1], "stuck") && (argc != 3 || !dir))) {
		fprintf(stderr, "usage: exit-caller dlopen LIB | stuck\n");
		return 2;
	}
	if (!strcmp(argv[1], "stuck")) {
		if (pipe(p))
			return 4;
		fd = p[1];          /* p[0] stays open and unread */
	} else {
		snprintf(path, sizeof(path), "%s/launch-%d.xpr", dir, (int)getpid());
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	}
	if (fd < 0 || xpc_stacks_start(fd, getpid(), (uint32_t)atoi(copy)) || atexit(finish))
		return 5;
	if (!strcmp(argv[1], "stuck")) {
		for (uint64_t i = 1; i <= 400; i++)
			launch(i);
		/* past the writer's flush period: it is in write() now */
		nanosleep(&(struct timespec){ 0, 800000000L }, NULL);
		exit(3);
	}
	for (uint64_t i = 1; i <= 20; i++)
		launch(i);
	dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
	fprintf(stderr, "exit-caller: %s: %s\n", argv[2], dlerror());
	return 6;
}
