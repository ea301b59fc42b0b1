/* synthgaps.c - one rank of a synthetic training job whose GPU idle time
 * has known causes (synthrun.h, xp_synth_write_gaps_rank), for the truth
 * test of `xpcorr report --by idle` (tests/idle-truth.py). Each 10 ms step
 * (an NVTX range ProfilerStep#N) on the rank's one thread:
 *   - Python loads a batch (py::load_batch, then py::tokenize for its last
 *     500 us): 2 ms, 3.6 ms on the last rank (the straggler: its 1.6 ms more
 *     all in load_batch); the GPU idles;
 *     its first 500 us sampled in a library only (libcublasLt.so.13, not on
 *     disk: "host native code", named by the nearest Python sample);
 *   - a gemm launched (xp_compute) runs 3 ms from 10 us after its call;
 *   - an NCCL all-reduce (xp_parse) starts after the gemm and ends 0.5 ms
 *     after the last rank started it: the others wait for the straggler;
 *     a 200 us kernel on another stream (xp_compute) overlaps its last 200 us;
 *   - a 20 us copy to the host (xp_parse), and a cudaStreamSynchronize
 *     (xp::Widget::draw) that returns 400 us after the all-reduce ended
 *     (the host waking late: 380 us of it the GPU idles); on the last rank
 *     a cudaMemcpy instead (blocking by its name) whose launch record is
 *     lost: named by the thread's nearest launch record, the copy's;
 *   - Python logs (py::log_metrics) until the step's end.
 * Every gap but the first began while the host was blocked in that
 * synchronize (or cudaMemcpy): it drained the queue.
 * "waits" mode (tests/idle-waits.py): step 4k+2 sleeps 1 ms in its logging
 * (an off-CPU interval gone off in xp_idle under py::save_checkpoint),
 * step 4k+3 waits 1 ms without a stack and is then preempted 0.5 ms, and
 * the gap from step 4k's synchronize to step 4k+1's launch has no sample.
 * "gloo" mode (tests/gloo-wait.py): the all-reduce runs on the host
 * (step_gloo); "gloo-short": the last rank's last step has none;
 * "gloo-user": its waits as a normal user's, no native frame but the
 * blocked call.
 * CPU samples every 50 us while the thread runs Python. The truth (each
 * part and cause of every step, summed) goes to a JSON file.
 */
#include "synthrun.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "pyfixture.h"
#include "src/runfile.h"
#include "src/runfmt_gpu.h"
#include "src/runfmt_py.h"

#define GAP_T0 100000000000ull
#define GAP_STEP 10000000ull
#define US 1000ull
#define PY(off) (XP_SYNTH_JIT_BASE + (off))
#define LIB_BASE 0x7f0000000000ull  /* a library without frame pointers */
#define LIBC_BASE 0x7f0000200000ull /* the C library */
#define NATIVE_US 500ull
#define TOKENIZE_US 500ull          /* a batch's tokenizing, on every rank */

enum { S_LAUNCH = 1, S_EXE, S_GEMM, S_NCCL, S_MEMCPY, S_SYNC, S_BLOCKING, S_GATHER, S_STEP0 };

static const char *const strings[] = {
	[S_LAUNCH] = "cudaLaunchKernel", [S_EXE] = "/usr/bin/python3",
	[S_GEMM] = "_Z4gemmPfS_i", [S_NCCL] = "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
	[S_MEMCPY] = "cudaMemcpyAsync", [S_SYNC] = "cudaStreamSynchronize", [S_BLOCKING] = "cudaMemcpy",
	[S_GATHER] = "ncclDevKernel_AllGather_RING_LL",
};

struct gap_truth {
	uint64_t compute, comm, memory, rank_wait, idle;
	uint64_t kernels, overlapped;         /* all kernels' time; comm under compute */
	uint64_t load_batch, tokenize, log_metrics, native, launch, sync, sync_nearest;
	uint64_t first_gap;                   /* step 0's first gap: no GPU work before it */
	uint64_t loop_first, loop_last;       /* the loop's steps: its first gemm's call, its last copy's end */
	uint64_t wait, unseen;                /* waits mode: the sleeps; host time without a sample */
	uint64_t wait_stackless, preempted;   /* waits without a stack; preemptions */
	uint64_t first_load;                  /* step 0's loading: its own kind of gap */
	uint64_t last_log;                    /* the last step's logging: another kind */
};

/* The launches' Python stacks (py mode): <module> calls main(), whose lines
 * PY_LINE0 .. PY_LINE0 + 3 (tests/pylines/sample.py) launch the gemm, the
 * all-reduce, the second gemm and the copy: a loop that comes back to
 * PY_LINE0 each step; flat: every launch at PY_LINE0, no loop to see. */
#define PY_LINE0 447
#define PY_MODULE_LINE 454

struct gap_py {
	const struct xp_pycode_fx *main, *module;
	uint32_t off[4], module_off;
	int flat;
};

struct gap_rank {
	const struct xp_synth *s;
	const struct gap_py *py;    /* NULL: no Python stacks, NVTX step ranges */
	unsigned site;              /* the main() line of the next launch: PY_LINE0 + site */
	struct xp_writer *cpu, *g;
	uint32_t pid;
	int rank, world;
	uint64_t corr;
	int waits;                  /* a sleep and gaps with no sample (xp_synth_write_gaps_rank) */
	int user;                   /* gloo's waits as a normal user's (host_wait) */
	unsigned steps;
	struct gap_truth t;
};

static int api(struct gap_rank *r, uint64_t at, uint64_t end, uint32_t name, uint32_t cbid,
	       const uint64_t *stack)
{
	struct xp_gpu_api a = { .start = at, .end = end, .correlation_id = r->corr, .pid = r->pid,
				.tid = r->pid, .cbid = cbid, .name = name };
	struct xp_launch l = { .ts = at + 500, .correlation_id = r->corr, .pid = r->pid, .tid = r->pid,
			       .cbid = cbid, .stack = { .user_depth = 3 } };
	int err = xp_writer_append(r->g, XP_REC_GPU_API, &a, sizeof(a), NULL, 0);

	err = err ?: xp_writer_append(r->cpu, XP_REC_LAUNCH, &l, sizeof(l), stack, 3 * sizeof(*stack));
	if (!err && r->py) {
		struct xp_pystack ps = { .ts = l.ts, .correlation_id = r->corr, .pid = r->pid,
					 .tid = r->pid, .nframes = 2 };
		struct xp_pyframe f[2] = {
			{ .code_id = 1, .instr_offset = r->py->off[r->py->flat ? 0 : r->site % 4] },
			{ .code_id = 2, .instr_offset = r->py->module_off, .flags = XP_PYFRAME_ENTRY },
		};

		err = xp_writer_append(r->cpu, XP_REC_PYSTACK, &ps, sizeof(ps), f, sizeof(f));
	}
	r->site++;
	return err;
}

static int kernel(struct gap_rank *r, uint64_t start, uint64_t end, uint32_t name, uint32_t stream)
{
	struct xp_gpu_kernel k = { .start = start, .end = end, .correlation_id = r->corr, .context = 1,
				   .stream = stream, .grid = { 64, 1, 1 }, .block = { 256, 1, 1 },
				   .registers = 32, .name = name };

	return xp_writer_append(r->g, XP_REC_GPU_KERNEL, &k, sizeof(k), NULL, 0);
}

/* Python samples every 50 us over [a, b), the leaf first; a native
 * sample's walk ends in the library (no frame pointers there). */
static int samples(struct gap_rank *r, uint64_t a, uint64_t b, uint64_t leaf, uint64_t caller)
{
	uint64_t u[4] = { leaf, caller, xp_synth_return_ip(r->s, "xp_run"),
			  xp_synth_return_ip(r->s, "main") };
	unsigned n = leaf >= LIB_BASE && leaf < XP_SYNTH_JIT_BASE ? 2 : 4;
	int err = 0;

	for (uint64_t ts = a + 25 * US; ts < b && !err; ts += 50 * US)
		err = xp_synth_add_sample(r->cpu, ts, r->pid, r->pid, 0, "python3", NULL, 0, u, n);
	return err;
}

/* The thread off CPU over [a, b), gone off in xp_idle called from
 * py::save_checkpoint (ckpt.py); without a stack (stackless: as a normal
 * user's perf switch records are), or preempted (state 0). */
static int sleep_at(struct gap_rank *r, uint64_t a, uint64_t b, int stackless, int preempted)
{
	struct { struct xp_switch w; uint64_t ips[2]; } sw = {
		.w = { .ts = a, .duration_ns = b - a, .pid = r->pid, .tid = r->pid,
		       .prev_state = !preempted, .stack = { .user_depth = 2 } },
		.ips = { xp_synth_ip(r->s, "xp_idle", 3), PY(0x510) },
	};

	if (stackless)
		sw.w.stack = (struct xp_stack){ .flags = XP_STACK_USER_ERR };
	return xp_writer_append(r->cpu, XP_REC_SWITCH, &sw, stackless ? sizeof(sw.w) : sizeof(sw),
				NULL, 0);
}

static int nvtx(struct gap_rank *r, uint64_t ts, uint32_t edge, uint64_t id, uint32_t name)
{
	struct xp_gpu_nvtx n = { .ts = ts, .id = id, .edge = edge, .object_kind = 2, .pid = r->pid,
				 .tid = r->pid, .name = name };

	return xp_writer_append(r->g, XP_REC_GPU_NVTX, &n, sizeof(n), NULL, 0);
}

/* One step from t; its truth added to r->t. */
static int step(struct gap_rank *r, unsigned i, uint64_t t)
{
	const struct xp_synth *s = r->s;
	uint64_t gemm_at[3] = { xp_synth_ip(s, "xp_compute", 4), xp_synth_return_ip(s, "xp_run"),
				xp_synth_return_ip(s, "main") };
	uint64_t nccl_at[3] = { xp_synth_ip(s, "xp_parse", 4), gemm_at[1], gemm_at[2] };
	uint64_t sync_at[3] = { xp_synth_ip(s, "_ZN2xp6Widget4drawEi", 4), gemm_at[1], gemm_at[2] };
	uint64_t slow = 3600 * US, fast = 2000 * US, tok = TOKENIZE_US * US;
	uint64_t load = r->rank == r->world - 1 ? slow : fast, last = r->world > 1 ? slow : load;
	uint64_t l1 = t + load, start = l1 + 3010 * US, end = t + last + 3510 * US;
	struct xp_gpu_memcpy m = { .start = end, .end = end + 20 * US, .bytes = 4, .context = 1,
				   .stream = 7, .copy_kind = 2, .src_kind = 3, .dst_kind = 2,
				   .flags = XP_GPU_F_ASYNC };
	int err = r->py ? 0 : nvtx(r, t, XP_NVTX_START, i + 1, S_STEP0 + i);
	/* waits mode: every 4th gap (from the end of step 4k's sync to step
	 * 4k+1's launch) has no sample at all; step 4k+2 sleeps 1 ms in its
	 * logging */
	int hole = r->waits && i % 4 == 1, hole_next = r->waits && i % 4 == 0 && i + 1 < r->steps;
	int sleeps = r->waits && i % 4 == 2, blind = r->waits && i % 4 == 3;

	if (!hole) {
		err = err ?: samples(r, t, t + NATIVE_US * US, LIB_BASE + 0x1234, LIB_BASE + 0x5678);
		err = err ?: samples(r, t + NATIVE_US * US, l1 - tok, PY(0x110), PY(0x410));
		err = err ?: samples(r, l1 - tok, l1, PY(0x210), PY(0x110));
	}
	r->corr++;
	err = err ?: api(r, l1, l1 + 5 * US, S_LAUNCH, 211, gemm_at);
	err = err ?: kernel(r, l1 + 10 * US, start, S_GEMM, 7);
	r->corr++;
	err = err ?: api(r, l1 + 20 * US, l1 + 25 * US, S_LAUNCH, 211, nccl_at);
	err = err ?: kernel(r, start, end, S_NCCL, 7);
	r->corr++;
	err = err ?: api(r, l1 + 30 * US, l1 + 35 * US, S_LAUNCH, 211, gemm_at);
	err = err ?: kernel(r, end - 200 * US, end, S_GEMM, 13);
	m.correlation_id = ++r->corr;
	err = err ?: api(r, l1 + 40 * US, l1 + 45 * US, S_MEMCPY, 41, nccl_at);
	err = err ?: xp_writer_append(r->g, XP_REC_GPU_MEMCPY, &m, sizeof(m), NULL, 0);
	r->corr++;
	if (r->rank == r->world - 1) {
		struct xp_gpu_api a = { .start = l1 + 60 * US, .end = end + 400 * US,
					.correlation_id = r->corr, .pid = r->pid, .tid = r->pid,
					.cbid = 31, .name = S_BLOCKING };

		err = err ?: xp_writer_append(r->g, XP_REC_GPU_API, &a, sizeof(a), NULL, 0);
	} else {
		err = err ?: api(r, l1 + 60 * US, end + 400 * US, S_SYNC, 131, sync_at);
	}
	if (sleeps || blind) {
		/* step 4k+3: a 1 ms wait without a stack, then a 0.5 ms preemption */
		err = err ?: samples(r, end + 400 * US, end + 1400 * US, PY(0x310), PY(0x410));
		err = err ?: sleep_at(r, end + 1400 * US, end + 2400 * US, blind, 0);
		if (blind)
			err = err ?: sleep_at(r, end + 2400 * US, end + 2900 * US, 1, 1);
		err = err ?: samples(r, end + (blind ? 2900 : 2400) * US, t + GAP_STEP, PY(0x310),
				     PY(0x410));
	} else if (!hole_next) {
		err = err ?: samples(r, end + 400 * US, t + GAP_STEP, PY(0x310), PY(0x410));
	}
	if (!r->py)
		err = err ?: nvtx(r, t + GAP_STEP, XP_NVTX_END, i + 1, 0);
	r->site = 0;
	r->t.compute += 3200 * US;
	r->t.comm += 300 * US;
	r->t.kernels += 3700 * US + last - load;
	r->t.overlapped += 200 * US;
	r->t.memory += 20 * US;
	r->t.rank_wait += last - load;
	if (hole) {
		r->t.unseen += load;
	} else {
		r->t.load_batch += load - tok - NATIVE_US * US;
		r->t.native += NATIVE_US * US;
		r->t.tokenize += tok;
	}
	r->t.launch += 10 * US;
	*(r->rank == r->world - 1 ? &r->t.sync_nearest : &r->t.sync) += 380 * US;
	if (hole_next) {
		r->t.unseen += t + GAP_STEP - (end + 400 * US);
	} else {
		r->t.last_log = t + GAP_STEP - (end + 400 * US) - (sleeps ? 1000 * US : 0) -
				(blind ? 1500 * US : 0);
		r->t.log_metrics += r->t.last_log;
	}
	r->t.wait += sleeps ? 1000 * US : 0;
	r->t.wait_stackless += blind ? 1000 * US : 0;
	r->t.preempted += blind ? 500 * US : 0;
	r->t.idle += GAP_STEP - 3520 * US - (last - load);
	if (!i)
		r->t.first_gap = load + 10 * US, r->t.loop_first = l1, r->t.first_load = load;
	r->t.loop_last = end + 20 * US;
	return err;
}

/* "chain" mode, world 3, a step from t: every rank loads a batch
 * (py::load_batch, 2 ms, 4 ms on rank 2) and launches an all-gather, which
 * ends 50 us after rank 2 starts it; ranks 0 and 2 then launch an
 * all-reduce at once, rank 1 only once its host has waited for the
 * all-gather (cudaStreamSynchronize) and run py::tokenize 60 us. So in the
 * all-reduce rank 0 waits for rank 1, which waited for rank 2's loader. */
static int step_chain(struct gap_rank *r, unsigned i, uint64_t t)
{
	const struct xp_synth *s = r->s;
	uint64_t at[3] = { xp_synth_ip(s, "xp_parse", 4), xp_synth_return_ip(s, "xp_run"),
			   xp_synth_return_ip(s, "main") };
	uint64_t l1 = t + (r->rank == 2 ? 4000 : 2000) * US, b_end = t + 4060 * US;
	uint64_t a_at = r->rank == 1 ? b_end + 70 * US : l1 + 20 * US, a_end = b_end + 600 * US;
	int err = nvtx(r, t, XP_NVTX_START, i + 1, S_STEP0 + i);

	err = err ?: samples(r, t, l1, PY(0x110), PY(0x410));
	r->corr++;
	err = err ?: api(r, l1, l1 + 5 * US, S_LAUNCH, 211, at);
	err = err ?: kernel(r, l1 + 10 * US, b_end, S_GATHER, 7);
	if (r->rank == 1) {
		r->corr++;
		err = err ?: api(r, l1 + 10 * US, b_end + 10 * US, S_SYNC, 131, at);
		err = err ?: samples(r, b_end + 10 * US, a_at, PY(0x210), PY(0x410));
	}
	r->corr++;
	err = err ?: api(r, a_at, a_at + 5 * US, S_LAUNCH, 211, at);
	err = err ?: kernel(r, a_at + 10 * US, a_end, S_NCCL, 13);
	r->corr++;
	err = err ?: api(r, a_at + 20 * US, a_end + 20 * US, S_SYNC, 131, at);
	err = err ?: samples(r, a_end + 20 * US, t + GAP_STEP, PY(0x310), PY(0x410));
	err = err ?: nvtx(r, t + GAP_STEP, XP_NVTX_END, i + 1, 0);
	r->site = 0;
	return err;
}

/* The thread off CPU over [a, b) in gloo's all-reduce: in c10d::Work::wait
 * (perf map) under py::all_reduce under py::train; as a normal user's
 * (r->user), the blocked call in place of the native frames: two frames of
 * libc (a futex wait, unwound as far as DWARF got) under one of a library. */
static int host_wait(struct gap_rank *r, uint64_t a, uint64_t b)
{
	struct { struct xp_switch w; uint64_t ips[5]; } sw = {
		.w = { .ts = a, .duration_ns = b - a, .pid = r->pid, .tid = r->pid, .prev_state = 1,
		       .stack = { .user_depth = 3 } },
		.ips = { PY(0x610), PY(0x710), PY(0x410) },
	};
	const uint64_t user[5] = { LIBC_BASE + 0x1000, LIBC_BASE + 0x2000, LIB_BASE + 0x1000,
				   PY(0x710), PY(0x410) };

	if (r->user) {
		memcpy(sw.ips, user, sizeof(user));
		sw.w.stack.user_depth = 5;
	}
	return xp_writer_append(r->cpu, XP_REC_SWITCH, &sw,
				sizeof(sw.w) + sw.w.stack.user_depth * sizeof(sw.ips[0]), NULL, 0);
}

/* "gloo" mode, a step from t: every rank loads a batch (py::load_batch,
 * 2 ms, 3.6 ms on the last rank) and enters gloo's all-reduce 20 us
 * later, waiting off CPU until 500 us after the last rank entered (a
 * collective on the host: no kernel); then launches a gemm (3 ms), waits
 * for it in a cudaStreamSynchronize and logs (py::log_metrics) until the
 * step's end. The GPU idles from the step's start to the gemm: on the
 * other ranks, 1.6 ms of it waiting for the last. none: no all-reduce. */
static int step_gloo(struct gap_rank *r, unsigned i, uint64_t t, int none)
{
	const struct xp_synth *s = r->s;
	uint64_t at[3] = { xp_synth_ip(s, "xp_compute", 4), xp_synth_return_ip(s, "xp_run"),
			   xp_synth_return_ip(s, "main") };
	uint64_t load = (r->rank == r->world - 1 ? 3600 : 2000) * US, out = t + 4120 * US;
	int err = nvtx(r, t, XP_NVTX_START, i + 1, S_STEP0 + i);

	err = err ?: samples(r, t, t + load, PY(0x110), PY(0x410));
	err = err ?: (none ? 0 : host_wait(r, t + load + 20 * US, out));
	r->corr++;
	err = err ?: api(r, out + 10 * US, out + 15 * US, S_LAUNCH, 211, at);
	err = err ?: kernel(r, out + 20 * US, out + 3020 * US, S_GEMM, 7);
	r->corr++;
	err = err ?: api(r, out + 30 * US, out + 3100 * US, S_SYNC, 131, at);
	err = err ?: samples(r, out + 3100 * US, t + GAP_STEP, PY(0x310), PY(0x410));
	err = err ?: nvtx(r, t + GAP_STEP, XP_NVTX_END, i + 1, 0);
	r->site = 0;
	return err;
}

static int open_gpu(struct gap_rank *r, const char *dir, unsigned steps)
{
	struct xp_gpu_process proc = { .ts = GAP_T0 - 1000000, .pid = r->pid, .ns_pid = r->pid,
				       .ppid = 1, .init_tid = r->pid, .cupti_version = 130001,
				       .driver_version = 13000, .cuda_version = 13000,
				       .clock_method = XP_GPU_CLOCK_CALLBACK, .ns_depth = 1,
				       .exe_name = S_EXE };
	struct xp_gpu_rank rank = { .pid = r->pid, .source = XP_RANK_TORCHRUN, .rank = r->rank,
				    .world_size = r->world, .local_world_size = 1 };
	int err = xp_synth_open_stream(&r->g, dir, "gpu", XP_STREAM_GPU, r->pid);

	for (unsigned i = 1; !err && i < S_STEP0 + steps; i++) {
		char name[32];
		const char *text = i < S_STEP0 ? strings[i] : name;
		struct xp_gpu_string st;

		snprintf(name, sizeof(name), "ProfilerStep#%u", i - S_STEP0);
		st = (struct xp_gpu_string){ .id = i, .len = (uint32_t)strlen(text) };
		err = xp_writer_append(r->g, XP_REC_GPU_STRING, &st, sizeof(st), text, st.len);
	}
	snprintf(rank.host, sizeof(rank.host), "node-%d", r->rank);
	err = err ?: xp_writer_append(r->g, XP_REC_GPU_PROCESS, &proc, sizeof(proc), NULL, 0);
	return err ?: xp_writer_append(r->g, XP_REC_GPU_RANK, &rank, sizeof(rank), NULL, 0);
}

/* The Python functions, as CPython's perf map names them. */
static int python_frames(struct gap_rank *r, const char *dir)
{
	char name[64], text[1024];
	int err = xp_synth_add_mmap(r->cpu, GAP_T0 - 1000000, r->pid, XP_SYNTH_JIT_BASE, 0x10000, 0,
				    "//anon", NULL, 0, 0);

	snprintf(text, sizeof(text), "%llx 100 py::load_batch:/app/data.py\n"
		 "%llx 100 py::tokenize:/app/data.py\n%llx 100 py::log_metrics:/app/train.py\n"
		 "%llx 100 py::train:/app/train.py\n%llx 100 py::save_checkpoint:/app/ckpt.py\n"
		 "%llx 100 c10d::Work::wait(std::chrono::duration<long, std::ratio<1l, 1000l> >)\n"
		 "%llx 100 py::all_reduce:/torch/distributed/distributed_c10d.py\n",
		 (unsigned long long)PY(0x100), (unsigned long long)PY(0x200),
		 (unsigned long long)PY(0x300), (unsigned long long)PY(0x400),
		 (unsigned long long)PY(0x500), (unsigned long long)PY(0x600),
		 (unsigned long long)PY(0x700));
	snprintf(name, sizeof(name), "perf-%u.map", r->pid);
	return err ? err : xp_synth_write_text(dir, name, text);
}

static int write_meta(const char *dir, const struct gap_rank *r, uint64_t end)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "{\n  \"tool\": \"xpcap\",\n  \"tool_version\": \"0.1.0\",\n"
		 "  \"format_version\": %d,\n  \"command\": [\"python3\", \"train.py\"],\n"
		 "  \"hostname\": \"node-%d\",\n  \"kernel_release\": \"6.1.0-synthetic\",\n"
		 "  \"cpu_count\": 4,\n  \"sample_frequency_hz\": 20000,\n"
		 "  \"clock\": \"CLOCK_MONOTONIC\",\n  \"start_monotonic_ns\": %llu,\n"
		 "  \"start_realtime_ns\": %llu,\n  \"stop_monotonic_ns\": %llu,\n"
		 "  \"exit\": { \"code\": 0, \"signal\": null },\n  \"records\": {}\n}\n",
		 XP_FORMAT_VERSION, r->rank, (unsigned long long)(GAP_T0 - 1000000),
		 1763900000000000000ull - 1000000, (unsigned long long)end);
	return xp_synth_write_text(dir, "meta.json", text);
}

static int write_truth(const char *path, const struct gap_rank *r, unsigned steps)
{
	const struct gap_truth *t = &r->t;
	FILE *f = fopen(path, "w");
	int bad;

	if (!f)
		return -errno;
	fprintf(f, "{\"rank\": %d, \"world\": %d, \"steps\": %u, \"step_ns\": %llu,"
		" \"compute_ns\": %llu, \"communication_ns\": %llu, \"memory_ns\": %llu,"
		" \"rank_wait_ns\": %llu, \"idle_ns\": %llu, \"kernel_ns\": %llu, \"overlapped_ns\": %llu,"
		" \"causes\": {"
		"\"host:load_batch\": %llu, \"host:tokenize\": %llu, \"host:log_metrics\": %llu,"
		" \"host_native:data.py:? load_batch\": %llu, \"launch:xp_compute\": %llu,"
		" \"sync:Widget::draw\": %llu,"
		" \"sync:xp_parse\": %llu,"
		" \"rank:rank %d\": %llu},"
		" \"drained\": {\"sync:%s\": %llu, \"none:\": %llu},"
		" \"loop_first_start_ns\": %llu, \"loop_last_end_ns\": %llu,"
		" \"sampled\": {\"load_batch\": %llu, \"tokenize\": %llu, \"log_metrics\": %llu,"
		" \"native\": %llu}, \"wait_ns\": %llu, \"unseen_ns\": %llu,"
		" \"wait_stackless_ns\": %llu, \"preempted_ns\": %llu, \"first_load_ns\": %llu,"
		" \"native_ns_per_step\": %llu, \"last_log_ns\": %llu, \"tokenize_ns_per_step\": %llu}\n",
		r->rank, r->world, steps, (unsigned long long)GAP_STEP, (unsigned long long)t->compute,
		(unsigned long long)t->comm, (unsigned long long)t->memory,
		(unsigned long long)t->rank_wait, (unsigned long long)t->idle,
		(unsigned long long)t->kernels, (unsigned long long)t->overlapped,
		(unsigned long long)t->load_batch, (unsigned long long)t->tokenize,
		(unsigned long long)t->log_metrics, (unsigned long long)t->native,
		(unsigned long long)t->launch, (unsigned long long)t->sync,
		(unsigned long long)t->sync_nearest, r->world - 1, (unsigned long long)t->rank_wait,
		r->rank == r->world - 1 ? "xp_parse" : "Widget::draw",
		(unsigned long long)(t->idle - t->first_gap), (unsigned long long)t->first_gap,
		(unsigned long long)t->loop_first, (unsigned long long)t->loop_last,
		(unsigned long long)t->load_batch, (unsigned long long)t->tokenize,
		(unsigned long long)t->log_metrics, (unsigned long long)t->native,
		(unsigned long long)t->wait, (unsigned long long)t->unseen,
		(unsigned long long)t->wait_stackless, (unsigned long long)t->preempted,
		(unsigned long long)t->first_load, (unsigned long long)(NATIVE_US * US),
		(unsigned long long)t->last_log, (unsigned long long)(TOKENIZE_US * US));
	bad = ferror(f);
	return fclose(f) || bad ? -EIO : 0;
}

static int py_code(struct gap_rank *r, const struct xp_pycode_fx *c, uint64_t id)
{
	struct xp_pycode rec = { .code_id = id, .pid = r->pid, .first_line = c->first_line,
				 .py_version = c->version, .filename_len = (uint16_t)strlen(c->filename),
				 .qualname_len = (uint16_t)strlen(c->qualname),
				 .linetable_len = (uint32_t)c->table_len };
	char tail[1024];
	size_t n = rec.filename_len + rec.qualname_len;

	if (n + c->table_len > sizeof(tail))
		return -E2BIG;
	memcpy(tail, c->filename, rec.filename_len);
	memcpy(tail + rec.filename_len, c->qualname, rec.qualname_len);
	memcpy(tail + n, c->table, c->table_len);
	return xp_writer_append(r->cpu, XP_REC_PYCODE, &rec, sizeof(rec), tail, n + c->table_len);
}

/* The interpreter and main's and <module>'s code objects of the fixture. */
static int py_open(struct gap_rank *r, const struct xp_pyfixture *fx, struct gap_py *py)
{
	struct xp_pyinfo info = { .ts = GAP_T0 - 1000000, .pid = r->pid,
				  .flags = XP_PYINFO_SUPPORTED };
	int64_t off;
	int err;

	py->main = xp_pyfixture_find(fx, "main");
	py->module = xp_pyfixture_find(fx, "<module>");
	if (!py->main || !py->module || (off = xp_pyfixture_offset_of(py->module, PY_MODULE_LINE)) < 0)
		return -ENOENT;
	py->module_off = (uint32_t)off;
	for (int i = 0; i < 4; i++) {
		if ((off = xp_pyfixture_offset_of(py->main, PY_LINE0 + i)) < 0)
			return -ENOENT;
		py->off[i] = (uint32_t)off;
	}
	info.py_hexversion = (uint32_t)py->main->version << 16 | 0x01f0;
	err = xp_writer_append(r->cpu, XP_REC_PYINFO, &info, sizeof(info), NULL, 0);
	err = err ?: py_code(r, py->main, 1);
	return err ?: py_code(r, py->module, 2);
}

/* py: NULL (NVTX steps), "waits" (NVTX steps with a sleep and unsampled
 * gaps), "chain" (step_chain: world 3), "gloo", "gloo-short" or "gloo-user" (step_gloo), "loop:FIXTURE" or "flat:FIXTURE" (Python stacks
 * at the launches over FIXTURE's line tables, no NVTX). */
int xp_synth_write_gaps_rank(const struct xp_synth *s, const char *dir, int rank, int world,
			     unsigned steps, const char *truth, const char *py)
{
	struct gap_rank r = { .s = s, .pid = 5000 + (uint32_t)rank, .rank = rank, .world = world,
			      .waits = py && !strcmp(py, "waits"), .steps = steps };
	struct xp_pyfixture *fx = NULL;
	struct gap_py gp = { .flat = py && !strncmp(py, "flat:", 5) };
	int chain = py && !strcmp(py, "chain"), gloo = py && !strncmp(py, "gloo", 4);
	int gloo_short = gloo && !strcmp(py, "gloo-short");

	r.user = gloo && !strcmp(py, "gloo-user");
	struct xp_gpu_status done = { .code = XP_GPU_ST_STOPPED };
	uint64_t end = GAP_T0 + steps * GAP_STEP;
	int err;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	if (!s->nfuncs)
		return -ENOEXEC;
	err = xp_synth_open_stream(&r.cpu, dir, "cpu", XP_STREAM_CPU, 0);
	err = err ?: open_gpu(&r, dir, steps);
	if (!err && xp_synth_add_comm(r.cpu, GAP_T0 - 1000000, r.pid, r.pid, "python3"))
		err = -EIO;
	err = err ?: xp_synth_map_fixture(s, r.cpu, GAP_T0 - 1000000, r.pid, 1);
	err = err ?: python_frames(&r, dir);
	err = err ?: xp_synth_add_mmap(r.cpu, GAP_T0 - 1000000, r.pid, LIB_BASE, 0x100000, 0,
				       "/usr/lib/libcublasLt.so.13", NULL, 0, 0);
	err = err ?: xp_synth_add_mmap(r.cpu, GAP_T0 - 1000000, r.pid, LIBC_BASE, 0x100000, 0,
				       "/usr/lib/x86_64-linux-gnu/libc.so.6", NULL, 0, 0);
	if (r.waits || chain || gloo)
		py = NULL;
	if (!err && py) {
		err = strchr(py, ':') ? xp_pyfixture_load(&fx, strchr(py, ':') + 1) : -EINVAL;
		err = err ?: py_open(&r, fx, &gp);
		r.py = &gp;
	}
	for (unsigned i = 0; i < steps && !err; i++)
		err = chain ? step_chain(&r, i, GAP_T0 + i * GAP_STEP) :
		      gloo ? step_gloo(&r, i, GAP_T0 + i * GAP_STEP,
				       gloo_short && rank == world - 1 && i + 1 == steps) :
		      step(&r, i, GAP_T0 + i * GAP_STEP);
	done.ts = end;
	err = err ?: xp_writer_append(r.g, XP_REC_GPU_STATUS, &done, sizeof(done), NULL, 0);
	err = (r.cpu ? xp_writer_close(r.cpu) : 0) ?: err;
	err = (r.g ? xp_writer_close(r.g) : 0) ?: err;
	err = err ?: xp_synth_write_text(dir, "kallsyms", xp_synth_kallsyms);
	err = err ?: write_meta(dir, &r, end);
	xp_pyfixture_free(fx);
	return err ?: write_truth(truth, &r, steps);
}
