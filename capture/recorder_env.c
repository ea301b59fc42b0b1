/* recorder_env.c - the command's environment under xp_record(): perf maps
 * for Python, and for GPU capture the injection library, the run directory
 * and the launch-stack and capture-window settings it reads (marker.h). */
#include <stdio.h>

#include "src/marker.h"
#include "capture/recorder_steps.h"

/* CPython's perf maps name Python functions in stacks unwound natively:
 * CPU samples, off-CPU stacks, the uprobe's launch stacks, launch stacks
 * without the frame walker. Its trampolines cost every Python call ~20 ns
 * (bench/python-perf-tax), so a --gpu-only run whose launch stacks take
 * Python lines in-process goes without. */
static int wants_perf_map(const struct xp_record_opts *o)
{
	return !o->gpu_only || o->off_cpu_given || !o->launch_inproc || !o->python_lines;
}

/* The capture window for the injection library: the range, and the
 * times as CLOCK_MONOTONIC ns, which a process that execs later reads alike. */
static int window_env(struct xp_recorder *r, int n)
{
	if (r->o.capture_range) {
		snprintf(r->env_buf[8], sizeof(r->env_buf[8]), XP_ENV_CAPTURE_RANGE "=%s",
			 r->o.capture_range);
		snprintf(r->env_buf[9], sizeof(r->env_buf[9]), XP_ENV_CAPTURE_COUNT "=%u",
			 r->o.capture_count);
		r->env[n++] = r->env_buf[8];
		r->env[n++] = r->env_buf[9];
	}
	if (r->meta.window_from) {
		snprintf(r->env_buf[10], sizeof(r->env_buf[10]), XP_ENV_WINDOW_FROM "=%llu",
			 (unsigned long long)r->meta.window_from);
		r->env[n++] = r->env_buf[10];
	}
	if (r->meta.window_until) {
		snprintf(r->env_buf[11], sizeof(r->env_buf[11]), XP_ENV_WINDOW_UNTIL "=%llu",
			 (unsigned long long)r->meta.window_until);
		r->env[n++] = r->env_buf[11];
	}
	return n;
}

/* --launch-stacks inproc: the library takes them, as --launch-call-graph,
 * --python-lines and --reuse-stacks say. */
static int inproc_env(struct xp_recorder *r, int n)
{
	snprintf(r->env_buf[4], sizeof(r->env_buf[4]), XP_ENV_LAUNCH_STACKS "=inproc");
	snprintf(r->env_buf[5], sizeof(r->env_buf[5]), XP_ENV_LAUNCH_COPY "=%u",
		 r->o.launch_copy);
	r->env[n++] = r->env_buf[4];
	r->env[n++] = r->env_buf[5];
	if (!r->o.python_lines) {
		snprintf(r->env_buf[6], sizeof(r->env_buf[6]), XP_ENV_PYFRAMES "=0");
		r->env[n++] = r->env_buf[6];
	}
	if (!r->o.reuse_stacks) {
		snprintf(r->env_buf[7], sizeof(r->env_buf[7]), XP_ENV_STACK_REUSE "=0");
		r->env[n++] = r->env_buf[7];
	}
	return n;
}

void xp_recorder_build_env(struct xp_recorder *r)
{
	int n = 0;

	if (wants_perf_map(&r->o)) {
		snprintf(r->env_buf[0], sizeof(r->env_buf[0]), "PYTHONPERFSUPPORT=1");
		r->env[n++] = r->env_buf[0];
	}
	if (r->meta.gpu_armed) {
		snprintf(r->env_buf[1], sizeof(r->env_buf[1]), "CUDA_INJECTION64_PATH=%s",
			 r->cupti_lib);
		snprintf(r->env_buf[2], sizeof(r->env_buf[2]), XP_ENV_RUN_DIR "=%s", r->rd.path);
		/* NVTX ranges: our library forwards to the process's libcupti */
		snprintf(r->env_buf[3], sizeof(r->env_buf[3]), "NVTX_INJECTION64_PATH=%s",
			 r->cupti_lib);
		r->env[n++] = r->env_buf[1];
		r->env[n++] = r->env_buf[2];
		r->env[n++] = r->env_buf[3];
		if (r->o.launch_inproc)
			n = inproc_env(r, n);
		n = window_env(r, n);
	}
	r->env[n] = NULL;
}
