// launch-loop.cu - the CUDA C loop of bench/gpu-overhead: no Python, one
// tiny kernel per launch, timed per block inside the process.
//
//   launch-loop [--blocks B] [--per-block N] [--warmup W]
//
// stdout: "launch-loop launches=L counter=C", the same with and without a
// profiler (C counts the kernels that ran). stderr, per timed block:
// "xpbench-block loop=cuda-c wall_us=W cuda_us=C", per launch: W the wall
// time of the block's launch calls alone (the CPU's cost, before the sync),
// C the CUDA-event time from before the first launch to after the last.
// A block (500 launches by default) stays well below the launch queue's
// depth, so the CPU never waits for the GPU inside it.
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "launch-loop: %s: %s\n", #x, cudaGetErrorString(e_)); exit(2); } } while (0)

__global__ void k_tiny(int *x) { if (threadIdx.x == 0) atomicAdd(x, 1); }

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

__attribute__((noinline)) static void launch_block(int *x, long n)
{
	for (long i = 0; i < n; i++)
		k_tiny<<<1, 1>>>(x);
}

int main(int argc, char **argv)
{
	long blocks = 40, per_block = 500, warmup = 5;
	cudaEvent_t e0, e1;
	int *x, counter = 0;

	for (int i = 1; i + 1 < argc; i += 2) {
		long v = atol(argv[i + 1]);
		if (!strcmp(argv[i], "--blocks"))
			blocks = v;
		else if (!strcmp(argv[i], "--per-block"))
			per_block = v;
		else if (!strcmp(argv[i], "--warmup"))
			warmup = v;
		else {
			fprintf(stderr, "launch-loop: unknown option %s\n", argv[i]);
			return 1;
		}
	}
	if (blocks < 1 || per_block < 1 || warmup < 0) {
		fprintf(stderr, "launch-loop: --blocks and --per-block must be positive\n");
		return 1;
	}
	CK(cudaMalloc(&x, sizeof(int)));
	CK(cudaMemset(x, 0, sizeof(int)));
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	for (long b = 0; b < warmup; b++)       /* module load, CUPTI's first buffers */
		launch_block(x, per_block);
	CK(cudaDeviceSynchronize());
	for (long b = 0; b < blocks; b++) {
		double t0, t1;
		float ms;

		t0 = now_us();
		CK(cudaEventRecord(e0, 0));
		launch_block(x, per_block);
		CK(cudaEventRecord(e1, 0));
		t1 = now_us();
		CK(cudaEventSynchronize(e1));
		CK(cudaEventElapsedTime(&ms, e0, e1));
		fprintf(stderr, "xpbench-block loop=cuda-c wall_us=%.4f cuda_us=%.4f\n",
			(t1 - t0) / per_block, ms * 1e3 / per_block);
	}
	CK(cudaMemcpy(&counter, x, sizeof(int), cudaMemcpyDeviceToHost));
	printf("launch-loop launches=%ld counter=%d\n", (warmup + blocks) * per_block, counter);
	CK(cudaFree(x));
	return counter == (warmup + blocks) * per_block ? 0 : 3;
}
