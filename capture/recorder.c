/* recorder.c - xp_record() (recorder.h): the run's steps in order, the run
 * directory and the held child, the start files, releasing the command. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture/drain.h"
#include "capture/pyreader.h"
#include "capture/bpfsampler.h"
#include "capture/recorder_steps.h"
#include "src/runfile.h"
#include "capture/sideband.h"
#include "capture/tracefmt.h"

void xp_recorder_say(const struct xp_recorder *r, enum xp_say kind, const char *fmt, ...)
{
	char line[3 * PATH_MAX];
	va_list ap;

	if (kind == XP_SAY_PROGRESS && r->o.quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	r->say(r->say_ctx, kind, line);
}

int xp_recorder_fail(struct xp_recorder *r, int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return status;
}

uint64_t xp_recorder_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct xp_recorder *xp_recorder_new(xp_say_fn say, void *ctx)
{
	struct xp_recorder *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->say = say;
	r->say_ctx = ctx;
	r->we.sigfd = r->we.timerfd = r->we.failfd = -1;
	r->t.go_fd = r->t.err_fd = -1;
	r->cupti_fd = -1;
	return r;
}

static int rundir_refused(struct xp_recorder *r, int err)
{
	const char *arg = r->o.output;
	int st = XP_RECORD_EXIT_USAGE;

	switch (err) {
	case -ENOTEMPTY:
		return xp_recorder_fail(r, st, "cannot use %s as run directory: %s (use --force to "
					"reuse it)", arg, strerror(-err));
	case -EBUSY:
		if (r->rd.holder > 0)
			return xp_recorder_fail(r, st, "cannot use %s as run directory: another xpcap "
						"(pid %d) is recording into it", arg, (int)r->rd.holder);
		return xp_recorder_fail(r, st, "cannot use %s as run directory: another xpcap is "
					"recording into it", arg);
	case -ELOOP:
		return xp_recorder_fail(r, st, "cannot use %s as run directory: it is a symbolic "
					"link (name the directory itself)", arg);
	case -EPERM:
		return xp_recorder_fail(r, st, "cannot use %s as run directory: it belongs to uid "
					"%u, not to the invoking user (uid %u); use a directory of "
					"your own", arg, (unsigned)r->rd.owner, (unsigned)r->uid);
	default:
		return xp_recorder_fail(r, st, "cannot use %s as run directory: %s", arg,
					strerror(-err));
	}
}

/* 2. the run directory, opened once as the invoking user and locked (root
 * must not make or take a directory where that user could not); 3. signals,
 * then the held child. 0, or the exit status. */
static int open_run(struct xp_recorder *r)
{
	int err = rundir_open(&r->rd, r->o.output, r->uid, r->gid, r->o.force);

	if (err)
		return rundir_refused(r, err);
	r->rd_open = true;
	/* -p takes a descriptor per thread and CPU; the command gets its own back */
	target_raise_nofile(&r->t);
	err = xp_waitend_open(&r->we);
	if (err)
		return xp_recorder_fail(r, XP_RECORD_EXIT_USAGE, "cannot set up signal handling: %s",
					strerror(-err));
	if (r->o.command) {
		xp_recorder_build_env(r);
		err = target_fork(&r->t, r->o.command, r->env, r->uid, r->gid);
		if (err)
			return xp_recorder_fail(r, XP_RECORD_EXIT_USAGE, "cannot start %s: %s",
						r->o.command[0], strerror(-err));
		r->pids[r->npids++] = r->t.pid;
		xp_waitend_set_child(&r->we, r->t.pid);
	}
	return 0;
}

/* meta.json first (it reserves room for its final version, which a disk
 * that fills while recording could otherwise refuse), then the files the
 * run may do without. 0 or the exit status. */
static int write_start_files(struct xp_recorder *r)
{
	int err;

	r->meta.pids = r->pids;
	r->meta.npids = r->npids;
	err = meta_write(&r->rd, &r->meta);
	if (err)
		return xp_recorder_fail(r, XP_RECORD_EXIT_FAIL, "cannot write %s/meta.json: %s",
					r->rd.path, strerror(-err));
	if (r->o.off_cpu && r->bpf)
		r->meta.tracefmt_err = tracefmt_save(&r->rd, "sched", "sched_switch");
	if (r->meta.tracefmt_err)
		xp_recorder_say(r, XP_SAY_PROGRESS, "cannot save the sched_switch tracepoint format: "
				"%s (noted in meta.json)", strerror(-r->meta.tracefmt_err));
	/* kallsyms is copied at the end, if kernel frames were sampled
	 * (recorder_end.c); perf samples of a normal user have none to name;
	 * under sudo kernel addresses the user may not see are dropped */
	if (r->bpf && !r->kernel_delta && r->meta.kernel_addresses)
		r->meta.kallsyms_err = -EPERM;
	if (r->meta.kallsyms_err)
		xp_recorder_say(r, XP_SAY_PROGRESS, "cannot save kallsyms into the run: %s (kernel "
				"frames stay addresses; noted in meta.json)",
				strerror(-r->meta.kallsyms_err));
	return 0;
}

/* What a normal user's run lacks, once; no CPU samples at all even with -q. */
static void say_unprivileged(const struct xp_recorder *r)
{
	if (r->bpf)
		return;
	if (strcmp(r->meta.sampler, "none") == 0)
		xp_recorder_say(r, XP_SAY_WARN, "kernel.perf_event_paranoid is %d: no CPU samples or "
				"mappings (they need it <= 2, or root); recording the GPU side only",
				r->paranoid);
	else if (r->perf_samples)
		xp_recorder_say(r, XP_SAY_PROGRESS, "not root: CPU samples through perf events with "
				"user stacks%s; kernel frames and -a need root",
				r->paranoid == 2 ? ", none while in the kernel "
				"(kernel.perf_event_paranoid 2)" : "");
}

static void say_window(const struct xp_recorder *r)
{
	char range[320] = "";

	if (!r->o.capture_range && !r->o.delay_s)
		return;
	if (r->o.capture_range && !strcmp(r->o.capture_range, "cudaProfilerApi"))
		snprintf(range, sizeof(range), "between cudaProfilerStart and cudaProfilerStop");
	else if (r->o.capture_range)
		snprintf(range, sizeof(range), "inside NVTX range '%s'", r->o.capture_range + 5);
	if (r->o.capture_range && r->o.capture_count > 1)
		snprintf(range + strlen(range), sizeof(range) - strlen(range), " (the first %u)",
			 r->o.capture_count);
	xp_recorder_say(r, XP_SAY_PROGRESS, "capture window: GPU activity and launch stacks "
			"%s%s%s; CUPTI activity is off outside it", range,
			r->o.delay_s && range[0] ? ", " : "", r->o.delay_s ? "after the --delay" : "");
}

/* 5. the duration counts from here; let the command run. 0 or the exit status. */
static int release(struct xp_recorder *r)
{
	/* --duration counts from the end of --delay, as nsys's does */
	int err = xp_waitend_arm_timer(&r->we, r->o.duration_s ? r->o.delay_s + r->o.duration_s : 0);
	int exec_errno;

	if (err)
		return xp_recorder_fail(r, XP_RECORD_EXIT_FAIL, "cannot set the --duration timer: %s",
					strerror(-err));
	if (r->o.command && target_release(&r->t, &exec_errno))
		return xp_recorder_fail(r, XP_RECORD_EXIT_EXEC, "cannot run %s: %s", r->o.command[0],
					strerror(exec_errno));
	r->run_started = true;
	xp_recorder_say(r, XP_SAY_PROGRESS, "recording %s%s into %s", r->o.command ?
			r->o.command[0] : r->o.system_wide ? "all CPUs" : "pids",
			r->meta.gpu_armed ? " (GPU capture armed)" : "", r->rd.path);
	say_window(r);
	if (r->o.npids && !r->o.no_gpu)
		xp_recorder_say(r, XP_SAY_PROGRESS, "attached: CPU samples only; CUDA launches are "
				"seen only in processes that loaded the injection library at their "
				"start");
	say_unprivileged(r);
	return 0;
}

static void close_all(struct xp_recorder *r)
{
	if (r->t.pid > 0 && !r->run_started)
		target_abort(&r->t);
	pyreader_stop(r->pyreader);
	r->pyreader = NULL;
	drain_close(r->drain);
	r->drain = NULL;
	xp_writer_close(r->w);
	r->w = NULL;
	xp_sampler__close(r->sampler);
	r->sampler = NULL;
	sideband_close(r->sb);
	r->sb = NULL;
	/* capture never started: only what this xpcap made goes */
	if (r->rd_open && !r->run_started)
		rundir_abandon(&r->rd);
	xp_waitend_close(&r->we);
	if (r->rd_open)
		rundir_close(&r->rd);
	r->rd_open = false;
	if (r->cupti_fd >= 0)
		close(r->cupti_fd);
	r->cupti_fd = -1;
}

int xp_record(struct xp_recorder *r)
{
	int ret, err;

	r->err[0] = '\0';
	if ((ret = xp_recorder_check(r)) >= 0 || (ret = open_run(r)))
		goto out;
	/* 4. BPF, perf events, writer, drain thread */
	if ((ret = xp_recorder_arm(r)) || (ret = write_start_files(r)) || (ret = release(r)))
		goto out;
	/* 6. wait, 7. stop and write */
	ret = xp_recorder_wait(r);
	err = xp_recorder_finish(r);
	if (err && !ret)
		ret = err;
	if (!err && !r->write_failed)
		xp_recorder_say_written(r);
	xp_recorder_say_gpu_end(r);
out:
	close_all(r);
	return ret;
}

void xp_recorder_free(struct xp_recorder *r)
{
	free(r);
}
