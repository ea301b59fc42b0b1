/* recorder_end.c - steps 6 and 7 of xp_record() (recorder.h): wait for the
 * end, detach, empty the rings, write the run; a full disk on the way. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/bpfsampler.h"
#include "capture/drain.h"
#include "capture/fstrust.h"
#include "capture/kernaddr.h"
#include "capture/pyreader.h"
#include "capture/sideband.h"
#include "capture/recorder_steps.h"
#include "src/runfile.h"
#include "src/runfmt_gpu.h"
#include "capture/snapshot.h"

static bool disk_full(int err)
{
	return err == -ENOSPC || err == -EDQUOT;
}

/* Writing cpu.xpr failed (a full disk, a quota): say so once, detach so
 * the command no longer pays for sampling, and let it run on. The file
 * keeps every whole block written before (the writer cuts it back). */
static void stop_on_write_error(struct xp_recorder *r, int err)
{
	if (r->write_failed)
		return;
	r->write_failed = true;
	drain_stop(r->drain);
	xp_sampler__stop(r->sampler);
	r->meta.stop_reason = disk_full(err) ? "disk_full" : "write_error";
	xp_recorder_say(r, XP_SAY_WARN, "cannot write %s/cpu.xpr: %s; recording stopped, the run "
			"keeps what was written before%s", r->rd.path, strerror(-err),
			r->o.command ? " and the command runs on" : "");
}

/* --duration ended with the command still running: nothing more is
 * recorded (the injection library stops by itself at the window's end). */
static void stop_recording(struct xp_recorder *r)
{
	xp_sampler__stop(r->sampler);
	sideband_disable(r->sb);
}

/* The command outlived --duration: as nsys users expect, it is never left
 * running unsaid. By default wait for it (recording stopped) and pass its
 * status through; with --kill end it, SIGKILL after a grace period, and
 * exit 0 when our signal ended it. */
static int wait_after_duration(struct xp_recorder *r)
{
	pid_t child = r->we.child;
	enum xp_waitend_event ev;
	int sent = 0;

	stop_recording(r);
	if (r->o.kill_at_end) {
		xp_recorder_say(r, XP_SAY_WARN, "--duration reached, recording stopped; ending the "
				"program (SIGTERM, SIGKILL in %d s)", XP_RECORD_KILL_GRACE_S);
		if (child > 0 && !kill(child, SIGTERM))
			sent = SIGTERM;
		/* no timer for the grace period: no grace */
		if (xp_waitend_arm_timer(&r->we, XP_RECORD_KILL_GRACE_S) && child > 0 &&
		    !kill(child, SIGKILL))
			sent = SIGKILL;
	} else {
		xp_recorder_say(r, XP_SAY_WARN, "--duration reached, recording stopped; waiting for "
				"the program (Ctrl-C to end it)");
		xp_waitend_arm_timer(&r->we, 0);
	}
	for (;;) {
		switch ((ev = xp_waitend_next(&r->we))) {
		case XP_WAITEND_EXIT:
			return sent && r->we.child_signo == sent ? 0 : r->we.code;
		case XP_WAITEND_DURATION:
			/* the grace period is over */
			xp_waitend_arm_timer(&r->we, 0);
			if (r->we.child > 0 && !kill(r->we.child, SIGKILL))
				sent = SIGKILL;
			break;
		case XP_WAITEND_INTERRUPT:
		case XP_WAITEND_WRITE_FAILED:
			break;
		case XP_WAITEND_SIGNAL:
			return 128 + r->we.stop_signo;
		default:
			return XP_RECORD_EXIT_FAIL;
		}
	}
}

/* Waits until the command exits, the duration ends, the attached
 * processes are gone, or a signal stops us. Returns xpcap's exit status. */
int xp_recorder_wait(struct xp_recorder *r)
{
	enum xp_waitend_event ev;

	if (r->o.npids)
		xp_waitend_watch_pids(&r->we, r->pids, r->npids);
	while ((ev = xp_waitend_next(&r->we)) == XP_WAITEND_INTERRUPT || ev == XP_WAITEND_WRITE_FAILED) {
		if (ev == XP_WAITEND_WRITE_FAILED)
			stop_on_write_error(r, drain_write_error(r->drain));
		else
			xp_recorder_say(r, XP_SAY_PROGRESS, "interrupt: waiting for the command "
					"(Ctrl-C again to stop now)");
	}
	switch (ev) {
	case XP_WAITEND_EXIT:
		if (!r->write_failed)
			r->meta.stop_reason = "exit";
		return r->we.code;
	case XP_WAITEND_DURATION:
		if (!r->write_failed)
			r->meta.stop_reason = "duration";
		return r->o.command ? wait_after_duration(r) : 0;
	case XP_WAITEND_TARGETS_GONE:
		if (!r->write_failed)
			r->meta.stop_reason = "targets_exited";
		return 0;
	case XP_WAITEND_SIGNAL:
		r->meta.stop_reason = "signal";
		return 128 + r->we.stop_signo;
	default:
		return XP_RECORD_EXIT_FAIL;
	}
}

/* What the injection library said at its start in each process: a fatal
 * status (CUPTI held by torch.profiler, nsys or another xpcap; a CUPTI
 * error) means no GPU records there. The remedy goes with it. */
static void note_gpu_problem(struct xp_recorder *r)
{
	static char text[400];

	if (!r->meta.gpu_armed || gpuscan_run(r->rd.fd, &r->scan) || !r->scan.fatal)
		return;
	snprintf(text, sizeof(text), "%s%s", r->scan.text, r->scan.code == XP_GPU_ST_SUBSCRIBER ?
		 ": close torch.profiler, nsys, ncu or the other xpcap that holds CUPTI, and "
		 "record again" : "");
	r->meta.gpu_problem = text;
	r->meta.gpu_problem_pid = r->scan.pid;
	r->meta.gpu_problem_procs = r->scan.fatal;
}

/* The child's end into meta, the rings emptied, cpu.xpr closed: 0 or the
 * writer's error (already said). */
static int close_cpu_stream(struct xp_recorder *r)
{
	int err;

	/* first: the marker's uprobe detaches beside all that follows */
	xp_sampler__stop(r->sampler);
	err = pyreader_stop(r->pyreader);
	r->pyreader = NULL;
	if (err)
		xp_recorder_say(r, XP_SAY_WARN, "cannot write %s/pyframes.xpr: %s (CPU samples "
				"lack Python frames from there on)", r->rd.path, strerror(-err));
	drain_stop(r->drain);
	err = drain_final(r->drain);
	xp_waitend_reap(&r->we);
	r->meta.have_exit = r->we.exited;
	r->meta.exit_code = r->we.code;
	r->meta.exit_signal = r->we.child_signo;
	r->meta.stop_mono = xp_recorder_clock_ns(CLOCK_MONOTONIC);
	r->meta.stop_real = xp_recorder_clock_ns(CLOCK_REALTIME);
	if (err)
		stop_on_write_error(r, err);
	r->meta.cpu_bytes = xp_writer_bytes(r->w);
	r->meta.cpu_raw_bytes = xp_writer_raw_bytes(r->w);
	if (!err)
		err = xp_writer_close(r->w);
	else
		xp_writer_close(r->w);
	r->w = NULL;
	if (err)
		stop_on_write_error(r, err);
	return err;
}

/* The kernel symbols that the run's kernel frames fall in, only where
 * there are some: `xpcap record -- true` pays nothing, and a run that
 * sampled the kernel copies a few lines, not the 5 MB of /proc/kallsyms.
 * A partial copy is removed, the run goes on; under sudo the addresses are
 * moved where the user may not see them. */
static void save_kallsyms(struct xp_recorder *r)
{
	uint64_t *ips = NULL;
	size_t n = 0;
	int err;

	if (!r->bpf || r->meta.kallsyms_err)
		return;
	err = drain_kernel_ips(r->drain, &ips, &n);
	if (!err && !n)
		return;
	r->meta.kallsyms_err = err == -ENOMEM ? err :
		kernaddr_save_kallsyms(&r->rd, r->kernel_delta, ips, n, err == -E2BIG,
				       &r->meta.kallsyms_bytes);
	free(ips);
	if (r->meta.kallsyms_err)
		xp_recorder_say(r, XP_SAY_PROGRESS, "cannot save kallsyms into the run: %s (kernel "
				"frames stay addresses; noted in meta.json)",
				strerror(-r->meta.kallsyms_err));
}

/* Detach first so nothing new arrives, then empty the rings, then write. */
int xp_recorder_finish(struct xp_recorder *r)
{
	int err = close_cpu_stream(r), ret = 0;

	/* a full disk or quota is the run's limit, not xpcap's failure */
	if (err && !disk_full(err))
		ret = XP_RECORD_EXIT_FAIL;
	snapshot_perf_maps(r->drain, r->pids, r->npids, &r->rd);
	save_kallsyms(r);
	note_gpu_problem(r);
	r->meta.status = "complete";
	r->meta.counts = drain_counts(r->drain);
	r->meta.nranks = drain_ranks(r->drain, &r->meta.ranks);
	err = meta_write(&r->rd, &r->meta);
	if (err) {
		/* said now: the lines after the run follow it */
		xp_recorder_say(r, XP_SAY_WARN, "cannot write %s/meta.json: %s", r->rd.path,
				strerror(-err));
		ret = XP_RECORD_EXIT_FAIL;
	}
	return ret;
}

/* Files not touched: on FUSE or a mount not known (capture/fstrust.h). */
static void say_untrusted_fs(const struct xp_recorder *r)
{
	char types[256];

	if (!fstrust_skipped())
		return;
	fstrust_skipped_types(types, sizeof(types));
	xp_recorder_say(r, XP_SAY_PROGRESS, "%llu files not read (no build id or perf map from "
			"them): on %s mounts, FUSE or not known to be local, whose server may "
			"never answer (meta.json untrusted_fs)",
			(unsigned long long)fstrust_skipped(), types);
}

/* What was written and lost. */
void xp_recorder_say_written(const struct xp_recorder *r)
{
	const struct xp_record_counts *c = drain_counts(r->drain);
	uint64_t lost = c->lost[XP_REC_SAMPLE][XP_LOST_RINGBUF_FULL] +
			c->lost[XP_REC_LAUNCH][XP_LOST_RINGBUF_FULL] +
			c->lost[XP_REC_SWITCH][XP_LOST_RINGBUF_FULL] +
			c->lost[0][XP_LOST_PERF_LOST];

	if (lost)
		xp_recorder_say(r, XP_SAY_PROGRESS, "lost %llu records: the rings were full (a larger "
				"-m may help)", (unsigned long long)lost);
	xp_recorder_say(r, XP_SAY_PROGRESS, "wrote %s: %llu samples, %llu launches, %llu off-CPU "
			"intervals, %llu mmaps, %.1f MiB",
			r->rd.path, (unsigned long long)c->written[XP_REC_SAMPLE],
			(unsigned long long)c->written[XP_REC_LAUNCH],
			(unsigned long long)c->written[XP_REC_SWITCH],
			(unsigned long long)c->written[XP_REC_MMAP],
			(double)r->meta.cpu_bytes / (1 << 20));
	say_untrusted_fs(r);
	if (r->o.compress && r->meta.cpu_bytes)
		xp_recorder_say(r, XP_SAY_PROGRESS, "cpu.xpr compressed %.1fx (%.1f MiB of records)",
				(double)r->meta.cpu_raw_bytes / (double)r->meta.cpu_bytes,
				(double)r->meta.cpu_raw_bytes / (1 << 20));
}

/* The last lines: a CUDA program whose GPU work went unrecorded. */
void xp_recorder_say_gpu_end(const struct xp_recorder *r)
{
	if (r->meta.cuda_library && !r->meta.gpu_armed && !r->o.no_gpu)
		xp_recorder_say(r, XP_SAY_WARN, "no GPU records: pid %d loaded %s, but GPU capture "
				"was not armed: %s", (int)r->meta.cuda_pid, r->meta.cuda_library,
				r->meta.gpu_not_armed);
	if (r->meta.gpu_problem)
		xp_recorder_say(r, XP_SAY_WARN, "no GPU records from pid %d%s: %s",
				(int)r->meta.gpu_problem_pid, r->meta.gpu_problem_procs > 1 ?
				" and other processes" : "", r->meta.gpu_problem);
}
