/* recorder_arm.c - step 4 of xp_record() (recorder.h): opens everything,
 * in the order that loses nothing: the child exists but waits; BPF tracks
 * it; side-band events follow it; cpu.xpr and the drain thread; sampling
 * and the correlation uprobe; then (recorder.c) it is released. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "capture/bpfsampler.h"
#include "capture/drain.h"
#include "capture/kernaddr.h"
#include "capture/pyreader.h"
#include "src/marker.h"
#include "capture/recorder_steps.h"
#include "src/runfile.h"
#include "src/runfile_zstd.h"
#include "capture/sideband.h"
#include "capture/snapshot.h"

static const char *bpf_hint(enum xp_sampler_step step, int err)
{
	switch (step) {
	case SAMPLER_STEP_LOAD:
		if (err == -EPERM || err == -EACCES)
			return "needs root (or CAP_BPF and CAP_PERFMON); is kernel lockdown on?";
		return "needs a kernel with BPF ring buffers and BTF (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF=y)";
	case SAMPLER_STEP_ATTACH:
		return "needs raw tracepoints sched_process_fork/exit/exec";
	case SAMPLER_STEP_OFFCPU:
		return "--off-cpu needs the BTF tracepoint sched_switch and BPF task storage (5.11+)";
	case SAMPLER_STEP_PERF:
		return "needs perf events (CONFIG_PERF_EVENTS; check /proc/sys/kernel/perf_event_paranoid)";
	default:
		return "";
	}
}

/* Data pages of each perf ring: -m without BPF, else the default; dwarf
 * samples (8 KiB each) get 512 KiB, what perf_event_mlock_kb lets a normal
 * user lock per CPU. */
static unsigned perf_ring_pages(const struct xp_recorder *r)
{
	unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE);

	if (r->bpf)
		return 0;
	if (r->o.ring_kib)
		return r->o.ring_kib * 1024ul >= page ? (unsigned)(r->o.ring_kib * 1024ul / page) : 1;
	return r->perf_samples && r->o.sample_copy ? 128 : 0;
}

static const char *perf_hint(const struct xp_recorder *r, int err, char *hint, size_t len)
{
	if (r->bpf)
		return bpf_hint(SAMPLER_STEP_PERF, err);
	if (err == -EPERM)
		snprintf(hint, len, "the rings exceed what a normal user may lock, "
			 "/proc/sys/kernel/perf_event_mlock_kb per CPU: give a smaller -m");
	else if (err == -EACCES)
		snprintf(hint, len, "a normal user may sample only their own processes, "
			 "where kernel.perf_event_paranoid <= 2 (it is %d)", r->paranoid);
	else if (err == -EINVAL && r->perf_samples)
		snprintf(hint, len, "is -F %u above /proc/sys/kernel/perf_event_max_sample_rate?",
			 r->o.freq);
	else
		snprintf(hint, len, "needs perf events (CONFIG_PERF_EVENTS)");
	return hint;
}

/* On the drain thread, at the first libcuda or libcudart a target maps:
 * a CUDA program whose GPU work would go unrecorded says so now. */
static void on_cuda_mapped(void *ctx, pid_t pid, const char *path)
{
	struct xp_recorder *r = ctx;

	snprintf(r->cuda_lib, sizeof(r->cuda_lib), "%s", path);
	r->meta.cuda_library = r->cuda_lib;
	r->meta.cuda_pid = pid;
	if (!r->meta.gpu_armed && !r->o.no_gpu)
		xp_recorder_say(r, XP_SAY_WARN, "pid %d loaded %s, but GPU capture is not armed: %s",
				(int)pid, path, r->meta.gpu_not_armed);
}

/* Under sudo, kernel addresses only as the invoking user may see them. */
static void hide_kernel_addresses(struct xp_recorder *r)
{
	if (!r->bpf || r->uid == 0 || kernaddr_user_sees())
		return;
	r->meta.kernel_addresses = "rebased";
	if (kernaddr_rebase_delta(&r->kernel_delta)) {
		r->meta.kernel_addresses = "dropped";
		r->kernel_delta = 0;
	}
	drain_rebase_kernel(r->drain, r->kernel_delta, !r->kernel_delta);
}

/* The uprobe's launch stack copy. Where the injection library takes launch
 * stacks itself (inproc, its 64 KiB copies) the uprobe is only its
 * fallback, and copies what the uprobe mode copies by default. (The cap
 * came from the BPF verifier's cost, 0.6-1.25 s at 65528 bytes; since
 * sampler.bpf.c forgets the copy's length it verifies in ms at any size.) */
static uint32_t uprobe_copy(const struct xp_record_opts *o)
{
	if (o->launch_inproc && o->launch_copy > XP_RECORD_DEFAULT_COPY)
		return XP_RECORD_DEFAULT_COPY;
	return o->launch_copy;
}

/* The BPF programs, tracking the command or the -p pids. */
static int arm_bpf(struct xp_recorder *r)
{
	struct xp_sampler_config bc = {
		.filter = !r->o.system_wide, .freq = r->o.freq, .ring_bytes = r->o.ring_kib * 1024u,
		.off_cpu = r->o.off_cpu, .offcpu_min_ns = (uint64_t)r->o.offcpu_min_us * 1000,
		/* the default waits are named by their user stacks; kernel frames
		 * (and the kallsyms copy they need) are for --off-cpu */
		.offcpu_user_only = !r->o.off_cpu_given,
		.sample_copy = r->o.sample_copy, .launch_copy = uprobe_copy(&r->o),
		/* under sudo only the invoking user's own unprivileged tasks */
		.record_privileged = r->o.record_privileged, .owner_only = r->uid != 0,
		.owner_uid = r->uid, .owner_gid = r->gid,
	};
	int err = xp_sampler__open(&r->sampler, &bc);

	/* the default waits are not worth failing a run: without sched_switch
	 * or task storage the run goes on without them, and says why */
	if (err && bc.off_cpu && !r->o.off_cpu_given) {
		xp_sampler__close(r->sampler);
		r->sampler = NULL;
		bc.off_cpu = r->o.off_cpu = false;
		r->meta.waits_error = err;
		err = xp_sampler__open(&r->sampler, &bc);
	}
	if (err)
		return xp_recorder_fail(r, XP_RECORD_EXIT_USAGE, "cannot load BPF programs: %s (%s)",
					strerror(-err), bpf_hint(xp_sampler__failed_step(r->sampler),
								 err));
	for (unsigned i = 0; i < r->npids; i++) {
		/* ours: the command (which execs as the user) or -p pids checked */
		xp_sampler__set_verdict(r->sampler, r->pids[i], false);
		err = xp_sampler__track(r->sampler, r->pids[i]);
		if (err)
			return xp_recorder_fail(r, XP_RECORD_EXIT_USAGE, "cannot track pid %d: %s",
						(int)r->pids[i], strerror(-err));
	}
	return 0;
}

/* Descriptors open now (those of /proc/self/fd but its own). */
static unsigned long open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	unsigned long n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n ? n - 1 : 0;
}

/* Out of descriptors (the events already opened closed): how many the
 * events need beside those open, against the limit. */
static const char *nofile_hint(const struct xp_recorder *r, enum sideband_mode mode,
			       char *hint, size_t len)
{
	unsigned threads, ncpus;
	unsigned long need = sideband_needs(mode, r->pids, r->npids, &threads, &ncpus);
	struct rlimit lim = { 0, 0 };

	need += open_fds();
	getrlimit(RLIMIT_NOFILE, &lim);
	snprintf(hint, len, "%u thread%s x %u CPU%s needs %lu descriptors, limit %llu",
		 threads, threads == 1 ? "" : "s", ncpus, ncpus == 1 ? "" : "s", need,
		 (unsigned long long)lim.rlim_cur);
	return hint;
}

/* Side-band events (and a normal user's samples); none at all where
 * perf_event_paranoid > 2 leaves a normal user no perf event. */
static int arm_perf(struct xp_recorder *r)
{
	enum sideband_mode mode = r->o.system_wide ? SIDEBAND_SYSTEM :
				  r->o.npids ? SIDEBAND_ATTACH : SIDEBAND_COMMAND;
	char hint[256];
	int err = strcmp(r->meta.sampler, "none") == 0 ? 0 :
		  sideband_open(&r->sb, mode, r->pids, r->npids,
				r->perf_samples ? &r->sample_attr : NULL, perf_ring_pages(r),
				!r->bpf && r->o.off_cpu);

	if (err == -EMFILE) {
		sideband_close(r->sb);
		r->sb = NULL;
		return xp_recorder_fail(r, XP_RECORD_EXIT_USAGE, "cannot open perf %s events: "
					"too many open files: %s", r->perf_samples ? "sampling" :
					"side-band", nofile_hint(r, mode, hint, sizeof(hint)));
	}
	if (err)
		return xp_recorder_fail(r, XP_RECORD_EXIT_USAGE, "cannot open perf %s events: %s (%s)",
					r->perf_samples ? "sampling" : "side-band", strerror(-err),
					perf_hint(r, err, hint, sizeof(hint)));
	return 0;
}

/* cpu.xpr, its header on disk: 0 or the exit status. */
static int open_cpu_stream(struct xp_recorder *r)
{
	int err = rundir_open_file(&r->rd, "cpu.xpr", O_WRONLY | O_CREAT);

	err = err < 0 ? err : xp_writer_open_fd(&r->w, err, XP_STREAM_CPU, 0);
	if (!err && r->o.compress)
		err = xp_writer_set_codec(r->w, &xp_zstd_codec);
	/* the header on disk now: a disk that fills later leaves a valid file */
	if (!err)
		err = xp_writer_flush(r->w);
	if (err)
		return xp_recorder_fail(r, XP_RECORD_EXIT_USAGE, "cannot create %s/cpu.xpr: %s",
					r->rd.path, strerror(-err));
	return 0;
}

/* cpu.xpr and the drain that fills it from the rings. */
static int arm_drain(struct xp_recorder *r)
{
	int err = open_cpu_stream(r);

	if (err)
		return err;
	err = drain_open(&r->drain, r->w, r->sampler, r->sb,
			 r->perf_samples ? &r->sample_attr : NULL);
	if (err)
		return xp_recorder_fail(r, XP_RECORD_EXIT_USAGE, "cannot poll the event rings: %s",
					strerror(-err));
	if (r->o.delay_s)
		drain_set_window(r->drain, r->meta.window_from);
	/* a normal user's waits: perf's context-switch records, paired */
	if (!r->bpf && r->o.off_cpu && r->sb &&
	    (err = drain_take_switches(r->drain, (uint64_t)r->o.offcpu_min_us * 1000)))
		return xp_recorder_fail(r, XP_RECORD_EXIT_USAGE, "cannot follow context switches: %s",
					strerror(-err));
	drain_watch_cuda(r->drain, on_cuda_mapped, r);
	hide_kernel_addresses(r);
	/* -p and -a: what is already mapped will never produce an mmap event */
	if (r->o.npids || r->o.system_wide)
		snapshot_existing_maps(r->drain, r->o.system_wide ? NULL : r->pids, r->npids,
				       xp_recorder_clock_ns(CLOCK_MONOTONIC));
	return 0;
}

/* Periodic sampling, and the correlation uprobe on the injection library. */
static int arm_probes(struct xp_recorder *r)
{
	int err;

	if (r->bpf && !r->o.gpu_only && (err = xp_sampler__start(r->sampler, r->o.freq)))
		return xp_recorder_fail(r, XP_RECORD_EXIT_USAGE, "cannot start sampling at %u Hz: "
					"%s (%s)", r->o.freq, strerror(-err),
					bpf_hint(SAMPLER_STEP_PERF, err));
	if (!r->bpf || r->o.no_gpu || r->cupti_fd < 0)
		return 0;
	err = xp_sampler__attach_marker(r->sampler, r->cupti_fd);
	/* CAP_BPF and CAP_PERFMON without root may be refused the uprobe:
	 * only a fallback where the library takes launch stacks itself */
	if (err && r->o.launch_inproc && geteuid() != 0)
		xp_recorder_say(r, XP_SAY_PROGRESS, "cannot attach the correlation uprobe (%s): "
				"launch stacks are taken in-process only", strerror(-err));
	else if (err)
		return xp_recorder_fail(r, XP_RECORD_EXIT_USAGE, "cannot attach the correlation "
					"uprobe to %s:%s: %s", r->cupti_lib, XP_MARKER_SYMBOL,
					strerror(-err));
	r->meta.marker_attached = !err;
	return 0;
}

/* Python frames for the CPU samples of the command or -p pids (not -a):
 * pyframes.xpr and its reader thread. Without it samples only lack them. */
static void arm_pyreader(struct xp_recorder *r)
{
	struct pyreader_config c = { .roots = r->pids, .nroots = r->npids, .freq = r->o.freq,
				     .uid = r->uid, .gid = r->gid, .compress = r->o.compress,
				     .record_privileged = r->o.record_privileged,
				     .off = r->o.no_python_frames,
				     /* released only after this (recorder.c) */
				     .roots_held = r->o.command != NULL,
				     /* a normal user's waits (perfswitch.h) */
				     .waits = !r->bpf && r->o.off_cpu && r->sb };
	int err;

	if (r->o.system_wide || r->o.gpu_only || !r->npids || strcmp(r->meta.sampler, "none") == 0)
		return;
	c.fd = rundir_open_file(&r->rd, "pyframes.xpr", O_WRONLY | O_CREAT);
	err = c.fd < 0 ? c.fd : pyreader_start(&r->pyreader, &c);
	if (err)
		xp_recorder_say(r, XP_SAY_WARN, "cannot read Python frames for CPU samples: %s",
				strerror(-err));
}

int xp_recorder_arm(struct xp_recorder *r)
{
	int err;

	r->meta.start_mono = xp_recorder_clock_ns(CLOCK_MONOTONIC);
	r->meta.start_real = xp_recorder_clock_ns(CLOCK_REALTIME);
	if ((r->bpf && (err = arm_bpf(r))) || (err = arm_perf(r)) || (err = arm_drain(r)) ||
	    (err = arm_probes(r)))
		return err;
	/* the uprobe tells the drain when the program's range opens and closes */
	if (r->o.capture_range && r->meta.marker_attached)
		drain_set_range(r->drain);
	err = drain_start(r->drain);
	if (err)
		return xp_recorder_fail(r, XP_RECORD_EXIT_FAIL, "cannot start the drain thread: %s",
					strerror(-err));
	arm_pyreader(r);
	xp_waitend_watch_fd(&r->we, drain_failed_fd(r->drain));
	return 0;
}
