// workload.cu - a CUDA program with known ground truth, for testing the
// injection library on a GPU (tests/gpu/device-test.sh, check-workload).
//
//   ./workload            # runs, prints one deterministic result line
//   ./workload --truth    # prints the ground truth as JSON, runs nothing
//   ./workload --bench N  # N tiny launches, prints ns per launch
//   ./workload --nvtx-name-thread   # also calls nvtxNameOsThreadA (NVTX#125)
//   ./workload --kill-after-work    # SIGKILLs itself 2 s after its output:
//                                   # what the library's periodic flush saved
//
// Distinct noinline CPU functions launch distinct kernels a known number of
// times on two streams, with copies and memsets, a captured graph replayed,
// a driver-API cuLaunchKernel path, four threads launching at once, NVTX ranges, a child forked before CUDA
// starts that uses the GPU itself, and a child forked after CUDA started
// that does not touch it (exercises the library's fork handling).
#include <cuda.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <pthread.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N 4096
#define ALPHA_LAUNCHES 10
#define BETA_LAUNCHES 7
#define DRIVER_LAUNCHES 4
#define GRAPH_REPLAYS 5
#define CHILD_LAUNCHES 3
#define HTOD_ASYNC 3
#define MEMSETS 4
#define THREADS 4
#define THREAD_LAUNCHES 25

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "workload: %s: %s\n", #x, cudaGetErrorString(e_)); exit(2); } } while (0)
#define CKD(x) do { CUresult e_ = (x); if (e_ != CUDA_SUCCESS) { \
	fprintf(stderr, "workload: %s: %d\n", #x, (int)e_); exit(2); } } while (0)

__global__ void k_alpha(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += 1.0f; }
__global__ void k_beta(float *b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) b[i] *= 0.5f; }
__global__ void k_graph_a(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += 2.0f; }
__global__ void k_graph_b(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] -= 1.0f; }
__global__ void k_driver(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += 3.0f; }
__global__ void k_child(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = 7.0f; }
__global__ void k_thread(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += 0.0f; }
__global__ void k_tiny(int *x) { if (threadIdx.x == 0 && x) atomicAdd(x, 1); }
__global__ void k_relaxed_a(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] *= 1.0f; }
__global__ void k_relaxed_b(float *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] += 0.5f; }

#define RELAXED_REPLAYS 3

static void print_truth(void)
{
	printf("{\"parent\": {\"kernels\": {\"k_alpha\": %d, \"k_beta\": %d, \"k_graph_a\": %d, "
	       "\"k_graph_b\": %d, \"k_driver\": %d, \"k_thread\": %d, \"k_relaxed_a\": %d, \"k_relaxed_b\": %d},\n"
	       " \"launchers\": {\"k_alpha\": \"launch_alpha\", \"k_beta\": \"launch_beta\", "
	       "\"k_graph_a\": \"replay_graph\", \"k_graph_b\": \"replay_graph\", \"k_driver\": \"launch_driver\", "
	       "\"k_thread\": \"thread_main\", \"k_relaxed_a\": \"build_graph_relaxed\", "
	       "\"k_relaxed_b\": \"build_graph_relaxed\"},\n \"launch_threads\": {\"k_thread\": %d},\n"
	       " \"graph_kernels\": [\"k_graph_a\", \"k_graph_b\", \"k_relaxed_a\", \"k_relaxed_b\"],"
	       " \"graph_launches\": %d,\n"
	       " \"graphs\": [{\"capture_site\": \"build_graph\", \"captures\": 1, \"replays\": %d, \"nodes\": 2},"
	       " {\"capture_site\": \"build_graph_relaxed\", \"captures\": 1, \"replays\": %d, \"nodes\": 2}],\n"
	       " \"memcpy\": {\"htod\": %d, \"dtoh\": %d}, \"memset\": %d,\n"
	       " \"streams\": 2, \"nvtx_ranges\": {\"phase_alpha\": 1, \"phase_beta\": 1, \"phase_graph\": 1}},\n"
	       " \"child_early\": {\"kernels\": {\"k_child\": %d}, \"memcpy\": {\"htod\": 1, \"dtoh\": 1}, \"memset\": 0},\n"
	       " \"processes_with_gpu\": 2}\n",
	       ALPHA_LAUNCHES, BETA_LAUNCHES, GRAPH_REPLAYS, GRAPH_REPLAYS, DRIVER_LAUNCHES,
	       THREADS * THREAD_LAUNCHES, RELAXED_REPLAYS, RELAXED_REPLAYS, THREADS,
	       GRAPH_REPLAYS + RELAXED_REPLAYS, GRAPH_REPLAYS, RELAXED_REPLAYS,
	       1 + HTOD_ASYNC, 2, MEMSETS, CHILD_LAUNCHES);
}

__attribute__((noinline)) static void launch_alpha(float *d, cudaStream_t s)
{
	for (int i = 0; i < ALPHA_LAUNCHES; i++)
		k_alpha<<<N / 256, 256, 0, s>>>(d, N);
}

__attribute__((noinline)) static void launch_beta(float *d, cudaStream_t s)
{
	for (int i = 0; i < BETA_LAUNCHES; i++)
		k_beta<<<N / 128, 128, 0, s>>>(d, N);
}

__attribute__((noinline)) static void launch_driver(float *d, cudaStream_t s)
{
	cudaFunction_t fn;
	int n = N;
	void *args[] = { &d, &n };

	CK(cudaGetFuncBySymbol(&fn, (const void *)k_driver));
	for (int i = 0; i < DRIVER_LAUNCHES; i++)
		CKD(cuLaunchKernel((CUfunction)fn, N / 256, 1, 1, 256, 1, 1, 0, (CUstream)s, args, NULL));
}

/* Several threads launching at once: the library's per-thread depth and
 * its locked writer must keep every record whole and attributed. */
__attribute__((noinline)) static void *thread_main(void *arg)
{
	float *d = (float *)arg;
	cudaStream_t s;

	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	for (int i = 0; i < THREAD_LAUNCHES; i++)
		k_thread<<<N / 256, 256, 0, s>>>(d, N);
	CK(cudaStreamSynchronize(s));
	CK(cudaStreamDestroy(s));
	return NULL;
}

__attribute__((noinline)) static void launch_threads(float *d)
{
	pthread_t t[THREADS];

	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, thread_main, d))
			exit(2);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
}

__attribute__((noinline)) static cudaGraphExec_t build_graph(float *d, cudaStream_t s)
{
	cudaGraph_t g;
	cudaGraphExec_t ge;

	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
	k_graph_a<<<N / 256, 256, 0, s>>>(d, N);
	k_graph_b<<<N / 256, 256, 0, s>>>(d, N);
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaGraphInstantiate(&ge, g, 0));
	CK(cudaGraphDestroy(g));
	return ge;
}

/* Relaxed-mode capture with work from two threads: the second thread's
 * launch into the capturing stream becomes a node of the same graph. */
struct relaxed_arg {
	float *d;
	cudaStream_t s;
};

__attribute__((noinline)) static void *relaxed_helper(void *arg)
{
	struct relaxed_arg *r = (struct relaxed_arg *)arg;

	k_relaxed_b<<<N / 256, 256, 0, r->s>>>(r->d, N);
	return NULL;
}

__attribute__((noinline)) static void build_graph_relaxed(float *d, cudaStream_t s)
{
	struct relaxed_arg r = { d, s };
	cudaGraph_t g;
	cudaGraphExec_t ge;
	pthread_t t;

	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
	k_relaxed_a<<<N / 256, 256, 0, s>>>(d, N);
	if (pthread_create(&t, NULL, relaxed_helper, &r))
		exit(6);
	pthread_join(t, NULL);
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaGraphInstantiate(&ge, g, 0));
	CK(cudaGraphDestroy(g));
	for (int i = 0; i < RELAXED_REPLAYS; i++)
		CK(cudaGraphLaunch(ge, s));
	CK(cudaStreamSynchronize(s));
	CK(cudaGraphExecDestroy(ge));
}

__attribute__((noinline)) static void replay_graph(cudaGraphExec_t ge, cudaStream_t s)
{
	for (int i = 0; i < GRAPH_REPLAYS; i++)
		CK(cudaGraphLaunch(ge, s));
}

__attribute__((noinline)) static void copies_and_sets(float *d_a, float *d_b, const float *h,
						      cudaStream_t s1, cudaStream_t s2)
{
	for (int i = 0; i < HTOD_ASYNC; i++)
		CK(cudaMemcpyAsync(d_a, h, N * sizeof(float), cudaMemcpyHostToDevice, s1));
	for (int i = 0; i < MEMSETS; i++)
		CK(cudaMemsetAsync(d_b, 0, N * sizeof(float), s2));
}

static int child_early(void)
{
	float *d, h[N];
	double sum = 0;

	for (int i = 0; i < N; i++)
		h[i] = 1.0f;
	CK(cudaMalloc(&d, N * sizeof(float)));
	CK(cudaMemcpy(d, h, sizeof(h), cudaMemcpyHostToDevice));
	for (int i = 0; i < CHILD_LAUNCHES; i++)
		k_child<<<N / 256, 256>>>(d, N);
	CK(cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost));
	for (int i = 0; i < N; i++)
		sum += h[i];
	CK(cudaFree(d));
	return sum == 7.0 * N ? 0 : 3;
}

static int bench(long n)
{
	struct timespec t0, t1;
	int *x;

	CK(cudaMalloc(&x, sizeof(int)));
	k_tiny<<<1, 1>>>(x);            /* load the module, warm up */
	CK(cudaDeviceSynchronize());
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++)
		k_tiny<<<1, 1>>>(x);
	CK(cudaDeviceSynchronize());
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("bench launches=%ld ns_per_launch=%.1f\n", n,
	       ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / n);
	CK(cudaFree(x));
	return 0;
}

int main(int argc, char **argv)
{
	static float h[N];
	float *d_a, *d_b;
	cudaStream_t s1, s2;
	cudaGraphExec_t ge;
	double sum = 0;
	int status = 0, name_thread = 0, kill_me = 0;
	pid_t early, late;

	if (argc > 1 && !strcmp(argv[1], "--truth")) {
		print_truth();
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "--bench"))
		return bench(atol(argv[2]));
	if (argc > 1 && !strcmp(argv[1], "--nvtx-name-thread"))
		name_thread = 1;
	if (argc > 1 && !strcmp(argv[1], "--kill-after-work"))
		kill_me = 1;

	/* Forked before the parent touches CUDA: both processes initialize
	 * CUDA on their own, so both load the injection library. */
	fflush(stdout);
	early = fork();
	if (early == 0)
		exit(child_early());    /* exit, not _exit: the library's atexit flush runs */

	if (name_thread)
		nvtxNameOsThreadA((uint32_t)getpid(), "workload-main");
	for (int i = 0; i < N; i++)
		h[i] = (float)(i % 7);
	CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	CK(cudaMalloc(&d_a, N * sizeof(float)));
	CK(cudaMalloc(&d_b, N * sizeof(float)));
	CK(cudaMemcpy(d_a, h, sizeof(h), cudaMemcpyHostToDevice));

	copies_and_sets(d_a, d_b, h, s1, s2);
	nvtxRangePushA("phase_alpha");
	launch_alpha(d_a, s1);
	nvtxRangePop();
	nvtxRangePushA("phase_beta");
	launch_beta(d_b, s2);
	nvtxRangePop();
	nvtxMarkA("between_phases");
	ge = build_graph(d_a, s1);
	nvtxRangePushA("phase_graph");
	replay_graph(ge, s1);
	nvtxRangePop();
	launch_driver(d_a, s1);
	build_graph_relaxed(d_a, s1);
	launch_threads(d_b);
	CK(cudaStreamSynchronize(s1));
	CK(cudaDeviceSynchronize());

	/* Forked after CUDA started: this child must not write the parent's
	 * stream nor hang in the library's exit handler. */
	fflush(stdout);
	late = fork();
	if (late == 0)
		exit(0);
	waitpid(late, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 4;

	CK(cudaMemcpy(h, d_a, sizeof(h), cudaMemcpyDeviceToHost));
	for (int i = 0; i < N; i++)
		sum += h[i];
	CK(cudaMemcpy(h, d_b, sizeof(h), cudaMemcpyDeviceToHost));
	for (int i = 0; i < N; i++)
		sum += h[i];
	CK(cudaGraphExecDestroy(ge));
	CK(cudaFree(d_a));
	CK(cudaFree(d_b));
	waitpid(early, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		printf("workload child failed\n");
		return 5;
	}
	printf("workload ok sum=%.1f\n", sum);
	if (kill_me) {
		fflush(stdout);
		sleep(2);
		raise(SIGKILL);
	}
	return 0;
}
