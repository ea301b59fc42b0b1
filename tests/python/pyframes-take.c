/* pyframes-take.c - the injection library's launch path (stacks.c and the
 * Python frame walker, pyframes.c) in a small shared object that Python
 * code loads with ctypes: xpt_take() stands in for a CUDA launch, so tests
 * run real interpreters through the walker without a GPU. ctypes releases
 * the GIL around each call, as PyTorch does before launching.
 *   lib = ctypes.CDLL("libxpc-pyframes-test.so")
 *   lib.xpt_start(b"/tmp/out.xpr", 0); lib.xpt_take(1); lib.xpt_finish()
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "src/marker.h"
#include "cupti/pyframes.h"
#include "cupti/stacks.h"

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Starts in-process stacks into path (new file); copy: stack bytes per
 * launch (0: frame-pointer walk); py 0 turns the walker off. 0 or -errno. */
int xpt_start(const char *path, unsigned copy, int py)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	if (fd < 0)
		return -errno;
	if (!py)
		xpc_py_disable();
	return xpc_stacks_start(fd, getpid(), copy);
}

/* The same into fd (taken: a pipe, whose reader decides when the writer
 * thread gets on). */
int xpt_start_fd(int fd, unsigned copy, int py)
{
	if (!py)
		xpc_py_disable();
	return xpc_stacks_start(fd, getpid(), copy);
}

/* A kernel's name as CUPTI gives a PyTorch launch (the key hashes it). */
static const char kernel[] = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_13BinaryFunctor"
	"IfffNS0_15binary_internal10MulFunctorIfEEEESt5arrayIPcLm3EEEEviT0_T1_";

/* One launch, as callbacks.c takes it at a launch's ENTER. */
__attribute__((noinline)) void xpt_take(uint64_t correlation_id)
{
	xpc_stack_take(now_ns(), correlation_id, XP_CBID(0, 211), kernel);
	__asm__ volatile("" ::: "memory");   /* not a tail call */
}

static void *native_main(void *arg)
{
	xpt_take(*(uint64_t *)arg);
	return NULL;
}

/* One launch from a thread that never ran Python. */
int xpt_take_native_thread(uint64_t correlation_id)
{
	pthread_t t;
	int err = pthread_create(&t, NULL, native_main, &correlation_id);

	if (!err)
		pthread_join(t, NULL);
	return -err;
}

void xpt_finish(void)
{
	xpc_stacks_finish();
}

/* Benchmarks: ns for n walks of the calling thread's frames (no ring, no
 * record), or for n launches taken in bursts of `burst` (the writer drains
 * between bursts, outside the timed part). */
uint64_t xpt_bench_walk(uint64_t n)
{
	static uint64_t buf[XPC_PYSTACK_MAX / 8];
	uint64_t t0 = now_ns();
	uintptr_t eval;

	for (uint64_t i = 0; i < n; i++) {
		xpc_py_take(buf, 0, i, 1, &eval);
		__asm__ volatile("" ::: "memory");
	}
	return now_ns() - t0;
}

/* A launch from under `native` bytes of native frames, as libtorch's
 * dispatcher stands between Python and cudaLaunchKernel (the H100's
 * PyTorch launches copied a median 7.5 KiB). */
__attribute__((noinline)) void xpt_take_under(uint64_t correlation_id, size_t native)
{
	volatile unsigned char *frames = native ? __builtin_alloca(native) : NULL;

	for (size_t i = 0; i < native; i += 64)
		frames[i] = (unsigned char)i;
	xpt_take(correlation_id);
	__asm__ volatile("" ::: "memory");
}

uint64_t xpt_bench_take(uint64_t n, uint64_t burst, uint64_t native)
{
	uint64_t spent = 0;

	for (uint64_t i = 0; i < n;) {
		uint64_t t0 = now_ns(), end = i + burst < n ? i + burst : n;

		for (; i < end; i++)
			xpt_take_under(i, (size_t)native);
		spent += now_ns() - t0;
		nanosleep(&(struct timespec){ 0, 5000000 }, NULL);
	}
	return spent;
}

void xpt_stats(uint64_t out[8])
{
	struct xpc_stacks_stats s;
	struct xpc_py_stats p;

	xpc_stacks_stats(&s);
	xpc_py_stats(&p);
	out[0] = s.taken;
	out[1] = s.lost;
	out[2] = s.py_stacks;
	out[3] = p.no_thread;
	out[4] = p.unsupported;
	out[5] = p.unreadable;
	out[6] = p.codes;
	out[7] = p.codes_lost;
}

/* n launches one at a time, as a program launches between its own work:
 * a launch every gap_ns at most, and before each `pollute` bytes of other
 * memory written (the program's working set pushing the ring out of the
 * caches) while the writer drains as it does in a program. Returns the
 * median ns of one launch (n at most 1 << 20). */
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t xpt_bench_take_steady(uint64_t n, uint64_t native, uint64_t pollute, uint64_t gap_ns)
{
	static unsigned char work[32u << 20];
	static uint64_t took[1u << 20];
	uint64_t off = 0, last = now_ns();

	if (n > sizeof(took) / sizeof(took[0]))
		n = sizeof(took) / sizeof(took[0]);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t t0;

		for (uint64_t b = 0; b < pollute && pollute <= sizeof(work); b += 64) {
			work[off] = (unsigned char)i;
			off = (off + 64) % sizeof(work);
		}
		while ((t0 = now_ns()) - last < gap_ns)
			;
		xpt_take_under(i, (size_t)native);
		last = now_ns();
		took[i] = last - t0;
	}
	qsort(took, n, sizeof(took[0]), cmp_u64);
	return n ? took[n / 2] : 0;
}
