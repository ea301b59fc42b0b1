/* autograd-caller.c - launches in-process as the injection library takes
 * them, in a process that loaded a libtorch_cpu.so (tests/marker/
 * fake-torch.c, PyTorch's three functions over a PyTorch 2.x Node), so the
 * library's autograd records (cupti/autograd.c) and their checks
 * run without PyTorch. The main thread makes node 0, launches 1 and 2,
 * makes node 1, launches 3; an "engine" thread runs node 0 (launch 10),
 * node 1 (launch 11), nothing (launch 12). "bad": the engine's nodes have
 * another layout (launches 10..29), which the library must refuse.
 *   XPCAP_RUN_DIR=/abs/run XPCAP_LAUNCH_STACKS=inproc XPCAP_LAUNCH_COPY=8192 \
 *       autograd-caller /path/libtorch_cpu.so good|bad
 */
#include <dlfcn.h>
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

static void *(*make_node)(int good);
static void (*run_node)(void *node);
static int (*refs)(void *node);
static void *node[2];
static int bad, leaked;

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

__attribute__((noinline)) static void launch(uint64_t corr)
{
	xpc_stack_take(now_ns(), corr, XP_CBID(0, 211), NULL);
	__asm__ volatile("" ::: "memory");
}

static void *engine(void *arg)
{
	(void)arg;
	if (bad) {
		void *n = make_node(0);

		run_node(n);
		for (int i = 0; i < 20; i++)
			launch(10 + (uint64_t)i);
		leaked |= refs(n) != 2;
		return NULL;
	}
	for (int i = 0; i < 2; i++) {
		run_node(node[i]);
		launch(10 + (uint64_t)i);
		leaked |= refs(node[i]) != 2;   /* the library gave its reference back */
	}
	run_node(NULL);
	launch(12);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *dir = getenv(XP_ENV_RUN_DIR), *copy = getenv(XP_ENV_LAUNCH_COPY);
	char path[4096];
	pthread_t t;
	void *torch;
	int fd;

	if (argc != 3 || !dir || !copy) {
		fprintf(stderr, "usage: autograd-caller LIBTORCH_CPU good|bad, under xpcap record\n");
		return 3;
	}
	bad = !strcmp(argv[2], "bad");
	/* as Python loads torch: local, before CUDA (and the library) start */
	if (!(torch = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL)) ||
	    !(*(void **)&make_node = dlsym(torch, "fake_torch_make_node")) ||
	    !(*(void **)&run_node = dlsym(torch, "fake_torch_run")) ||
	    !(*(void **)&refs = dlsym(torch, "fake_torch_refs"))) {
		fprintf(stderr, "autograd-caller: %s\n", dlerror());
		return 4;
	}
	snprintf(path, sizeof(path), "%s/launch-%d.xpr", dir, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0 || xpc_stacks_start(fd, getpid(), (uint32_t)atoi(copy)))
		return 5;
	usleep(300000);             /* the library's finder thread finds libtorch_cpu */
	node[0] = make_node(1);
	launch(1);
	launch(2);
	node[1] = make_node(1);
	launch(3);
	if (pthread_create(&t, NULL, engine, NULL))
		return 6;
	pthread_join(t, NULL);
	xpc_stacks_finish();
	if (leaked)
		fprintf(stderr, "autograd-caller: a node's reference count changed\n");
	return leaked ? 7 : 0;
}
