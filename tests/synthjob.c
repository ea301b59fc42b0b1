/* synthjob.c - one rank of a synthetic distributed job as a run of its own
 * (synthrun.h, xp_synth_write_job_rank): what `xpcorr merge` is tested on
 * when the clocks' true offsets must be known. Each step, on the rank's
 * one launching thread: a gemm kernel whose length grows with the rank,
 * then an NCCL all-reduce whose end is the same true instant on every
 * rank (within +-1 us), each with its API record and its launch stack
 * (xp_run -> xp_compute for the gemm, xp_run -> xp_parse for the NCCL
 * call), a cudaStreamSynchronize until the step's end, and CPU samples
 * between. */
#include "synthrun.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/runfile.h"
#include "src/runfmt_gpu.h"

#define JOB_T0 100000000000ull        /* the job's true time at the first step (hosts up to 99 s behind) */
#define JOB_REALTIME0 1763900000000000000ull   /* its wall-clock reading then */
#define JOB_STEP_NS 1000000ull        /* one step a millisecond */

enum { S_LAUNCH = 1, S_EXE, S_GEMM, S_NCCL, S_MEMCPY, S_SYNC };

static const char *const strings[] = {
	[S_LAUNCH] = "cudaLaunchKernel", [S_EXE] = "/usr/bin/python3",
	[S_GEMM] = "_Z8gemm_rankPfS_i", [S_NCCL] = "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
	[S_MEMCPY] = "cudaMemcpyAsync", [S_SYNC] = "cudaStreamSynchronize",
};

/* gloo's worker loop, as a perf-map frame of the synthetic process */
#define GLOO_LOOP (XP_SYNTH_JIT_BASE + 0x100)

static int open_gpu(struct xp_writer **g, const char *dir, const struct xp_synth_rank *r)
{
	struct xp_gpu_process proc = { .ts = JOB_T0 - 1000000 + (uint64_t)r->mono_off_ns,
				       .pid = r->pid, .ns_pid = r->pid, .ppid = 1, .init_tid = r->pid,
				       .cupti_version = 130001, .driver_version = 13000,
				       .cuda_version = 13000, .clock_method = XP_GPU_CLOCK_CALLBACK,
				       .ns_depth = 1, .exe_name = S_EXE };
	struct xp_gpu_rank rank = { .pid = r->pid, .source = XP_RANK_TORCHRUN, .rank = r->rank,
				    .local_rank = 0, .world_size = r->world, .local_world_size = 1 };
	int err;

	err = xp_synth_open_stream(g, dir, "gpu", XP_STREAM_GPU, r->pid);
	for (unsigned i = 1; !err && i < sizeof(strings) / sizeof(strings[0]); i++) {
		struct xp_gpu_string s = { .id = i, .len = (uint32_t)strlen(strings[i]) };

		err = xp_writer_append(*g, XP_REC_GPU_STRING, &s, sizeof(s), strings[i], s.len);
	}
	snprintf(rank.host, sizeof(rank.host), "%s", r->host);
	if (!err)
		err = xp_writer_append(*g, XP_REC_GPU_PROCESS, &proc, sizeof(proc), NULL, 0);
	if (!err)
		err = xp_writer_append(*g, XP_REC_GPU_RANK, &rank, sizeof(rank), NULL, 0);
	return err;
}

/* gloo's copy back to the GPU: a cudaMemcpyAsync from its worker loop at
 * `at`, the copy itself right after. */
static int copy_back(struct xp_writer *cpu, struct xp_writer *g, const struct xp_synth_rank *r,
		     uint64_t corr, uint64_t at, const uint64_t *stack)
{
	struct xp_gpu_api a = { .start = at, .end = at + 3000, .correlation_id = corr, .pid = r->pid,
				.tid = r->pid + 1, .cbid = 41, .name = S_MEMCPY };
	struct xp_gpu_memcpy m = { .start = at + 5000, .end = at + 9000, .correlation_id = corr,
				   .bytes = 1 << 20, .context = 1, .stream = 9, .copy_kind = 1,
				   .src_kind = 2, .dst_kind = 3, .flags = XP_GPU_F_ASYNC };
	struct xp_launch l = { .ts = at + 1000, .correlation_id = corr, .pid = r->pid,
			       .tid = r->pid + 1, .cbid = 41, .stack = { .user_depth = 3 } };
	int err = xp_writer_append(g, XP_REC_GPU_API, &a, sizeof(a), NULL, 0);

	if (!err)
		err = xp_writer_append(g, XP_REC_GPU_MEMCPY, &m, sizeof(m), NULL, 0);
	if (!err)
		err = xp_writer_append(cpu, XP_REC_LAUNCH, &l, sizeof(l), stack, 3 * sizeof(*stack));
	return err;
}

/* One CUDA call (API record, launch record with its stack) and its kernel,
 * times on the host's clock. */
static int call(struct xp_writer *cpu, struct xp_writer *g, const struct xp_synth_rank *r,
		uint64_t corr, uint64_t at, uint64_t kstart, uint64_t kend, uint32_t name,
		const uint64_t *stack)
{
	struct xp_gpu_api a = { .start = at, .end = at + 4000, .correlation_id = corr, .pid = r->pid,
				.tid = r->pid, .cbid = 211, .name = S_LAUNCH };
	struct xp_gpu_kernel k = { .start = kstart, .end = kend, .correlation_id = corr, .context = 1,
				   .stream = 7, .grid = { 64, 1, 1 }, .block = { 256, 1, 1 },
				   .registers = 32, .name = name };
	struct xp_launch l = { .ts = at + 1000, .correlation_id = corr, .pid = r->pid, .tid = r->pid,
			       .cbid = 211, .stack = { .user_depth = 3 } };
	int err = xp_writer_append(g, XP_REC_GPU_API, &a, sizeof(a), NULL, 0);

	if (!err)
		err = xp_writer_append(g, XP_REC_GPU_KERNEL, &k, sizeof(k), NULL, 0);
	if (!err)
		err = xp_writer_append(cpu, XP_REC_LAUNCH, &l, sizeof(l), stack, 3 * sizeof(*stack));
	return err;
}

static int write_meta(const char *dir, const struct xp_synth_rank *r, uint64_t end)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "{\n  \"tool\": \"xpcap\",\n  \"tool_version\": \"0.1.0\",\n"
		 "  \"format_version\": %d,\n  \"command\": [\"python3\", \"train.py\"],\n"
		 "  \"hostname\": \"%s\",\n  \"kernel_release\": \"6.1.0-synthetic\",\n"
		 "  \"cpu_count\": 4,\n  \"sample_frequency_hz\": 999,\n"
		 "  \"clock\": \"CLOCK_MONOTONIC\",\n"
		 "  \"start_monotonic_ns\": %lld,\n  \"start_realtime_ns\": %lld,\n"
		 "  \"stop_monotonic_ns\": %lld,\n"
		 "  \"exit\": { \"code\": 0, \"signal\": null },\n  \"records\": {}\n}\n",
		 XP_FORMAT_VERSION, r->host, (long long)(JOB_T0 - 1000000 + r->mono_off_ns),
		 (long long)(JOB_REALTIME0 - 1000000 + r->wall_err_ns),
		 (long long)(end + (uint64_t)r->mono_off_ns));
	return xp_synth_write_text(dir, "meta.json", text);
}

/* The gloo worker's frames: an anonymous mapping and its perf map. */
static int gloo_frames(struct xp_writer *cpu, const char *dir, const struct xp_synth_rank *r)
{
	char name[64], text[256];
	int err;

	err = xp_synth_add_mmap(cpu, JOB_T0 - 1000000 + (uint64_t)r->mono_off_ns, r->pid,
				XP_SYNTH_JIT_BASE, 0x10000, 0, "//anon", NULL, 0, 0);
	if (!err && xp_synth_add_comm(cpu, JOB_T0 - 1000000 + (uint64_t)r->mono_off_ns, r->pid,
				      r->pid + 1, "pt_gloo"))
		err = -EIO;
	snprintf(text, sizeof(text), "%llx 100 c10d::ProcessGroupGloo::runLoop(int)\n"
		 "%llx 100 std::thread::_State_impl::_M_run()\n", (unsigned long long)GLOO_LOOP,
		 (unsigned long long)GLOO_LOOP + 0x30);
	snprintf(name, sizeof(name), "perf-%u.map", r->pid);
	return err ? err : xp_synth_write_text(dir, name, text);
}

/* 0..2000 ns, different on every rank and step */
static uint64_t jitter_ns(unsigned step, int rank)
{
	uint32_t x = step * 0x9e3779b1u + (uint32_t)rank * 0x85ebca77u + 1;

	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	x ^= x >> 12;
	return x % 2001u;
}

/* The host waits for the step's end from when its own CPU work is done:
 * the higher ranks later, so they wait less. */
static int sync_call(struct xp_writer *g, const struct xp_synth_rank *r, uint64_t corr,
		     uint64_t from, uint64_t to)
{
	struct xp_gpu_api a = { .start = from, .end = to, .correlation_id = corr, .pid = r->pid,
				.tid = r->pid, .cbid = 131, .name = S_SYNC };

	return xp_writer_append(g, XP_REC_GPU_API, &a, sizeof(a), NULL, 0);
}

/* The steps: compute, then the all-reduce that ends together everywhere. */
static int steps(const struct xp_synth *s, struct xp_writer *cpu, struct xp_writer *g,
		 const struct xp_synth_rank *r, uint64_t *end)
{
	uint64_t gemm_site[3] = { xp_synth_ip(s, "xp_compute", 4), xp_synth_return_ip(s, "xp_run"),
				  xp_synth_return_ip(s, "main") };
	uint64_t nccl_site[3] = { xp_synth_ip(s, "xp_parse", 4), gemm_site[1], gemm_site[2] };
	uint64_t gloo_site[3] = { GLOO_LOOP + 0x10, GLOO_LOOP + 0x40, 0 };
	uint64_t off = (uint64_t)r->mono_off_ns, corr = 0;
	int err = 0;

	for (unsigned i = 0; i < r->steps && !err; i++) {
		uint64_t t = JOB_T0 + i * JOB_STEP_NS;
		uint64_t compute = 100000 + 40000 * (uint64_t)r->rank + (i % 7) * 1000;
		uint64_t done = t + 20000 + 100000 + 40000 * (uint64_t)(r->world - 1) + 7000 + 30000;
		uint64_t jitter = jitter_ns(i, r->rank);

		err = call(cpu, g, r, ++corr, t + off, t + 20000 + off, t + 20000 + compute + off,
			   S_GEMM, gemm_site);
		if (!err && r->gloo)
			err = copy_back(cpu, g, r, ++corr, done - 1000 + jitter + off, gloo_site);
		else if (!err)
			err = call(cpu, g, r, ++corr, t + 30000 + off, t + 20000 + compute + 2000 + off,
				   done - 1000 + jitter + off, S_NCCL, nccl_site);
		if (!err)
			err = sync_call(g, r, ++corr, t + 40000 + 10000 * (uint64_t)r->rank + off,
					done + 5000 + off);
		if (!err)
			err = xp_synth_add_sample(cpu, t + 500000 + off, r->pid, r->pid, 0, "python3",
						  NULL, 0, gemm_site, 3);
		*end = done;
	}
	return err;
}

int xp_synth_write_job_rank(const struct xp_synth *s, const char *dir,
			    const struct xp_synth_rank *r)
{
	struct xp_writer *cpu = NULL, *g = NULL;
	struct xp_gpu_status done = { .code = XP_GPU_ST_STOPPED };
	uint64_t end = JOB_T0;
	int err;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	if (!s->nfuncs)
		return -ENOEXEC;
	err = xp_synth_open_stream(&cpu, dir, "cpu", XP_STREAM_CPU, 0);
	if (!err)
		err = open_gpu(&g, dir, r);
	if (!err)
		err = xp_synth_add_comm(cpu, JOB_T0 - 1000000 + (uint64_t)r->mono_off_ns, r->pid, r->pid,
					"python3");
	if (!err)
		err = xp_synth_map_fixture(s, cpu, JOB_T0 - 1000000 + (uint64_t)r->mono_off_ns, r->pid, 1);
	if (!err && r->gloo)
		err = gloo_frames(cpu, dir, r);
	if (!err)
		err = steps(s, cpu, g, r, &end);
	done.ts = end + (uint64_t)r->mono_off_ns;
	if (!err)
		err = xp_writer_append(g, XP_REC_GPU_STATUS, &done, sizeof(done), NULL, 0);
	err = xp_writer_close(cpu) ?: err;
	err = (g ? xp_writer_close(g) : 0) ?: err;
	if (!err)
		err = xp_synth_write_text(dir, "kallsyms", xp_synth_kallsyms);
	if (!err)
		err = write_meta(dir, r, end);
	return err;
}
