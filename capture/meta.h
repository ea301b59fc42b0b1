/* meta.h - run/meta.json: what was recorded, how, and what was lost.
 * Written once at start (status "recording": a run whose xpcap was killed
 * still says what it is) and again at the end, atomically (tmp + rename).
 * The first version is padded with spaces to META_RESERVE bytes, so that
 * on a full disk the last one can overwrite it in place instead.
 *   struct xp_record_meta m = { .opts = &o, ... };
 *   meta_write(&rd, &m);         // rd: rundir_open(&rd, "run", ...)
 */
#ifndef XP_CAPTURE_META_H
#define XP_CAPTURE_META_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "capture/gitdesc.h"
#include "capture/record.h"

struct xp_record_meta {
	const struct xp_record_opts *opts;
	const char *status;             /* "recording", "complete" */
	const char *stop_reason;        /* "exit", "duration", "signal", ... or NULL */
	uint64_t start_mono, start_real;  /* ns */
	uint64_t stop_mono, stop_real;    /* ns, 0 while recording */
	const pid_t *pids;              /* targets */
	unsigned npids;
	bool have_exit;                 /* the command's status is known */
	int exit_code;                  /* as a shell reports it */
	int exit_signal;                /* 0 or the signal that killed it */
	const char *sampler;            /* "bpf", "perf" (a normal user's), "none" (paranoid > 2) */
	bool gpu_armed;                 /* CUDA_INJECTION64_PATH was set */
	bool marker_attached;           /* correlation uprobe attached */
	const char *cupti_lib;          /* library path, or NULL */
	const char *gpu_not_armed;      /* why GPU capture is not armed, or NULL */
	const char *cuda_library;       /* first libcuda/libcudart a target mapped, or NULL */
	pid_t cuda_pid;                 /* the process that mapped it */
	const char *gpu_problem;        /* a fatal status of the injection library, or NULL */
	pid_t gpu_problem_pid;          /* in that process */
	unsigned gpu_problem_procs;     /* processes with one */
	uint64_t window_from, window_until;  /* CLOCK_MONOTONIC ns of --delay and --duration;
					      * until 0: none */
	const struct xp_record_counts *counts;  /* NULL at start */
	uint64_t cpu_bytes;             /* size of cpu.xpr */
	uint64_t cpu_raw_bytes;         /* what it would be uncompressed */
	int tracefmt_err;               /* --off-cpu: 0 or -errno of saving the format */
	int waits_error;                /* the default waits could not be armed: -errno */
	int kallsyms_err;               /* 0 or -errno of saving /proc/kallsyms */
	uint64_t kallsyms_bytes;        /* size of the whole copy, 0 until it is in place */
	const char *kernel_addresses;   /* "rebased", "dropped" (kernaddr.h), NULL: real */
	struct gitdesc git;             /* git describe of the program's checkout */
	const struct xp_gpu_rank *ranks; /* exec'd processes with a launcher's rank */
	unsigned nranks;                /* (drain_ranks), 0 until the end */
};

#define META_RESERVE (64u << 10)       /* a meta.json is a few KiB */

struct rundir;

/* 0 or -errno (-ENOSPC when not even the reserved first version was there
 * to overwrite). */
int meta_write(struct rundir *rd, const struct xp_record_meta *m);

#endif
