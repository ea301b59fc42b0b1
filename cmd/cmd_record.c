/* cmd_record.c - `xpcap record`: the only file of the capture stage that
 * talks to the user. It runs the numbered steps below and maps every
 * failure to one line `xpcap: cannot ...: reason` and an exit code:
 *   sudo xpcap record -o run -F 999 -- ./app arg      # exits with app's status
 *   sudo xpcap record -p 1234,5678 --duration 10
 *   sudo xpcap record -a --duration 5
 * As root (or with CAP_BPF and CAP_PERFMON) the eBPF sampler records;
 * as a normal user, perf events on the user's own processes (perfsampler.h)
 * and what only BPF can do (-a, --off-cpu, the uprobe) is refused.
 * Exit codes: the command's own status (128+N if killed by signal N);
 * 2 for bad arguments or environment (nothing is left behind); 127 when the
 * command cannot be executed (like a shell); 1 when writing the run failed
 * (meta.json at the start: nothing is left behind and the command never
 * runs; later, a full disk or quota only stops recording: the command runs
 * on and its status is still xpcap's); 0 for -p/-a runs that ended normally. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bpfsampler.h"
#include "cmd.h"
#include "outname.h"
#include "drain.h"
#include "gpuscan.h"
#include "kernaddr.h"
#include "marker.h"
#include "meta.h"
#include "perfsampler.h"
#include "record.h"
#include "runfile.h"
#include "runfile_zstd.h"
#include "runfmt_gpu.h"
#include "rundir.h"
#include "sideband.h"
#include "snapshot.h"
#include "target.h"
#include "taskowner.h"
#include "tracefmt.h"
#include "waitend.h"

#define EXIT_EXEC_FAILED 127

struct recorder {
	struct xp_record_opts o;
	char output[4096];              /* -o with %h, %r, %p expanded */
	struct xp_record_meta meta;
	struct rundir rd;               /* opened once: every file is made through it */
	bool rd_open;
	bool run_started;               /* from here on the run dir is kept */
	bool write_failed;              /* cpu.xpr hit an error, already reported */
	uid_t uid;                      /* the invoking user */
	gid_t gid;
	struct target t;
	pid_t pids[XP_RECORD_MAX_PIDS];
	unsigned npids;
	struct xp_waitend we;              /* signals, timer, child, attached pids */
	bool bpf;                       /* the eBPF sampler: root, or CAP_BPF + CAP_PERFMON */
	bool perf_samples;              /* else: perf events sample the user's own tasks */
	int paranoid;                   /* kernel.perf_event_paranoid, for messages */
	struct perf_event_attr sample_attr;
	struct xp_sampler *sampler;
	struct sideband *sb;
	struct xp_writer *w;
	struct drain *drain;
	uint64_t kernel_delta;          /* added to kernel addresses (kernaddr.h) */
	char cupti_lib[PATH_MAX];
	char *env[14];
	char env_buf[13][PATH_MAX + 64];
	uint64_t t0;                    /* CLOCK_MONOTONIC ns the window's times count from */
	char cuda_lib[PATH_MAX];        /* the first CUDA library a target mapped */
	struct gpuscan scan;            /* what the injection library said (finish) */
};

#ifndef XP_LIBDIR
#define XP_LIBDIR "the install's libdir"
#endif
/* Why GPU capture is not armed, with what to do about it (meta.json
 * gpu_not_armed, xpcorr info and report repeat it). */
#define NOT_ARMED_NO_GPU "--no-gpu was given"
#define NOT_ARMED_ATTACH "attached with -p or -a: CUDA activity is recorded only in a " \
	"command that xpcap starts (xpcap record -- CMD)"
#define NOT_ARMED_NO_LIB "the injection library libxpcupti.so was found neither in the build " \
	"tree, nor next to xpcap, nor in " XP_LIBDIR " (install with meson install, or give " \
	"--cupti-lib PATH; a build without CUPTI does not make it)"

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* library chatter only when asked for: XPCAP_DEBUG=1 */
	if (!getenv("XPCAP_DEBUG") || level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void progress(const struct recorder *r, const char *fmt, ...)
{
	va_list ap;

	if (r->o.quiet)
		return;
	va_start(ap, fmt);
	fputs("xpcap: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* The first of these that exists: the build tree's (build/bin/xpcap ->
 * build/cupti/, where build.ninja marks a meson build directory),
 * next to xpcap (a copied static binary), the install's libdir. */
static bool find_cupti_lib(const char *exe_dir, char *out, size_t len)
{
	char tree[PATH_MAX];

	if (snprintf(tree, sizeof(tree), "%s/../build.ninja", exe_dir) < (int)sizeof(tree) &&
	    access(tree, F_OK) == 0 &&
	    snprintf(out, len, "%s/../cupti/libxpcupti.so", exe_dir) < (int)len &&
	    access(out, R_OK) == 0)
		return true;
	if (snprintf(out, len, "%s/libxpcupti.so", exe_dir) < (int)len && access(out, R_OK) == 0)
		return true;
#ifdef XP_LIBDIR
	snprintf(out, len, "%s", XP_LIBDIR "/libxpcupti.so");
	if (access(out, R_OK) == 0)
		return true;
#endif
	return false;
}

/* --cupti-lib, else the first candidate above that exists, as a canonical
 * path (meta.json and the child's environment name the file itself). Left
 * empty when none exists: GPU capture is then not armed, and the run says
 * why (meta.json gpu_not_armed). */
static void resolve_cupti_lib(struct recorder *r)
{
	char exe[PATH_MAX - 32], found[PATH_MAX];
	ssize_t n;
	char *slash;

	if (r->o.cupti_lib) {
		snprintf(r->cupti_lib, sizeof(r->cupti_lib), "%s", r->o.cupti_lib);
		return;
	}
	r->cupti_lib[0] = '\0';
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	if (find_cupti_lib(exe, found, sizeof(found)) && !realpath(found, r->cupti_lib))
		r->cupti_lib[0] = '\0';
}

/* CPython's perf maps name Python functions in stacks unwound natively:
 * CPU samples, off-CPU stacks, the uprobe's launch stacks, launch stacks
 * without the frame walker. Its trampolines cost every Python call ~20 ns
 * (bench/python-perf-tax), so a --gpu-only run whose launch stacks take
 * Python lines in-process goes without. */
static int wants_perf_map(const struct xp_record_opts *o)
{
	return !o->gpu_only || o->off_cpu || !o->launch_inproc || !o->python_lines;
}

/* The capture window for the injection library: the range, and the
 * times as CLOCK_MONOTONIC ns, which a process that execs later reads alike. */
static int window_env(struct recorder *r, int n)
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

static void build_env(struct recorder *r)
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
		if (r->o.launch_inproc) {
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
		}
		n = window_env(r, n);
	}
	r->env[n] = NULL;
}

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
static unsigned perf_ring_pages(const struct recorder *r)
{
	unsigned long page = (unsigned long)sysconf(_SC_PAGESIZE);

	if (r->bpf)
		return 0;
	if (r->o.ring_kib)
		return r->o.ring_kib * 1024ul >= page ? (unsigned)(r->o.ring_kib * 1024ul / page) : 1;
	return r->perf_samples && r->o.sample_copy ? 128 : 0;
}

static const char *perf_hint(const struct recorder *r, int err)
{
	static char hint[256];

	if (r->bpf)
		return bpf_hint(SAMPLER_STEP_PERF, err);
	if (err == -EPERM)
		snprintf(hint, sizeof(hint), "the rings exceed what a normal user may lock, "
			 "/proc/sys/kernel/perf_event_mlock_kb per CPU: give a smaller -m");
	else if (err == -EACCES)
		snprintf(hint, sizeof(hint), "a normal user may sample only their own processes, "
			 "where kernel.perf_event_paranoid <= 2 (it is %d)", r->paranoid);
	else if (err == -EINVAL && r->perf_samples)
		snprintf(hint, sizeof(hint), "is -F %u above /proc/sys/kernel/perf_event_max_sample_rate?",
			 r->o.freq);
	else
		snprintf(hint, sizeof(hint), "needs perf events (CONFIG_PERF_EVENTS)");
	return hint;
}

/* On the drain thread, at the first libcuda or libcudart a target maps:
 * a CUDA program whose GPU work would go unrecorded says so now. */
static void on_cuda_mapped(void *ctx, pid_t pid, const char *path)
{
	struct recorder *r = ctx;

	snprintf(r->cuda_lib, sizeof(r->cuda_lib), "%s", path);
	r->meta.cuda_library = r->cuda_lib;
	r->meta.cuda_pid = pid;
	if (!r->meta.gpu_armed && !r->o.no_gpu)
		fprintf(stderr, "xpcap: pid %d loaded %s, but GPU capture is not armed: %s\n",
			(int)pid, path, r->meta.gpu_not_armed);
}

/* Under sudo, kernel addresses only as the invoking user may see them. */
static void hide_kernel_addresses(struct recorder *r)
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

/* cpu.xpr, its header on disk: 0 or XP_EXIT_USAGE after saying why. */
static int open_cpu_stream(struct recorder *r)
{
	char path[PATH_MAX + 16];
	int err;

	snprintf(path, sizeof(path), "%s/cpu.xpr", r->rd.path);
	err = rundir_open_file(&r->rd, "cpu.xpr", O_WRONLY | O_CREAT);
	err = err < 0 ? err : xp_writer_open_fd(&r->w, err, XP_STREAM_CPU, 0);
	if (!err && r->o.compress)
		err = xp_writer_set_codec(r->w, &xp_zstd_codec);
	/* the header on disk now: a disk that fills later leaves a valid file */
	if (!err)
		err = xp_writer_flush(r->w);
	if (err) {
		fprintf(stderr, "xpcap: cannot create %s: %s\n", path, strerror(-err));
		return XP_EXIT_USAGE;
	}
	return 0;
}

/* Opens everything, in the order that loses nothing: the child exists but
 * waits; BPF tracks it; side-band events follow it; then it is released. */
static int arm(struct recorder *r)
{
	int err;

	r->meta.start_mono = clock_ns(CLOCK_MONOTONIC);
	r->meta.start_real = clock_ns(CLOCK_REALTIME);
	struct xp_sampler_config bc = {
		.filter = !r->o.system_wide, .freq = r->o.freq, .ring_bytes = r->o.ring_kib * 1024u,
		.off_cpu = r->o.off_cpu, .offcpu_min_ns = (uint64_t)r->o.offcpu_min_us * 1000,
		.sample_copy = r->o.sample_copy, .launch_copy = r->o.launch_copy,
		/* under sudo only the invoking user's own unprivileged tasks */
		.record_privileged = r->o.record_privileged, .owner_only = r->uid != 0,
		.owner_uid = r->uid, .owner_gid = r->gid,
	};

	err = r->bpf ? xp_sampler__open(&r->sampler, &bc) : 0;
	if (err) {
		fprintf(stderr, "xpcap: cannot load BPF programs: %s (%s)\n", strerror(-err),
			bpf_hint(xp_sampler__failed_step(r->sampler), err));
		return XP_EXIT_USAGE;
	}
	for (unsigned i = 0; r->bpf && i < r->npids; i++) {
		/* ours: the command (which execs as the user) or -p pids checked */
		xp_sampler__set_verdict(r->sampler, r->pids[i], false);
		err = xp_sampler__track(r->sampler, r->pids[i]);
		if (err) {
			fprintf(stderr, "xpcap: cannot track pid %d: %s\n", (int)r->pids[i],
				strerror(-err));
			return XP_EXIT_USAGE;
		}
	}
	/* perf_event_paranoid > 2: no perf event at all for a normal user */
	err = strcmp(r->meta.sampler, "none") == 0 ? 0 :
	      sideband_open(&r->sb, r->o.system_wide ? SIDEBAND_SYSTEM :
			    r->o.npids ? SIDEBAND_ATTACH : SIDEBAND_COMMAND, r->pids, r->npids,
			    r->perf_samples ? &r->sample_attr : NULL, perf_ring_pages(r));
	if (err) {
		fprintf(stderr, "xpcap: cannot open perf %s events: %s (%s)\n",
			r->perf_samples ? "sampling" : "side-band", strerror(-err), perf_hint(r, err));
		return XP_EXIT_USAGE;
	}
	if ((err = open_cpu_stream(r)))
		return err;
	err = drain_open(&r->drain, r->w, r->sampler, r->sb,
			 r->perf_samples ? &r->sample_attr : NULL);
	if (err) {
		fprintf(stderr, "xpcap: cannot poll the event rings: %s\n", strerror(-err));
		return XP_EXIT_USAGE;
	}
	if (r->o.delay_s)
		drain_set_window(r->drain, r->meta.window_from);
	drain_watch_cuda(r->drain, on_cuda_mapped, r);
	hide_kernel_addresses(r);
	/* -p and -a: what is already mapped will never produce an mmap event */
	if (r->o.npids || r->o.system_wide)
		snapshot_existing_maps(r->drain, r->o.system_wide ? NULL : r->pids, r->npids,
				       clock_ns(CLOCK_MONOTONIC));
	if (r->bpf && !r->o.gpu_only) {
		err = xp_sampler__start(r->sampler, r->o.freq);
		if (err) {
			fprintf(stderr, "xpcap: cannot start sampling at %u Hz: %s (%s)\n",
				r->o.freq, strerror(-err), bpf_hint(SAMPLER_STEP_PERF, err));
			return XP_EXIT_USAGE;
		}
	}
	if (r->bpf && !r->o.no_gpu && access(r->cupti_lib, R_OK) == 0) {
		err = xp_sampler__attach_marker(r->sampler, r->cupti_lib);
		/* CAP_BPF and CAP_PERFMON without root may be refused the uprobe:
		 * only a fallback where the library takes launch stacks itself */
		if (err && r->o.launch_inproc && geteuid() != 0) {
			progress(r, "cannot attach the correlation uprobe (%s): launch stacks are "
				 "taken in-process only", strerror(-err));
		} else if (err) {
			fprintf(stderr, "xpcap: cannot attach the correlation uprobe to %s:%s: %s\n",
				r->cupti_lib, XP_MARKER_SYMBOL, strerror(-err));
			return XP_EXIT_USAGE;
		}
		r->meta.marker_attached = !err;
	}
	/* the uprobe tells the drain when the program's range opens and closes */
	if (r->o.capture_range && r->meta.marker_attached)
		drain_set_range(r->drain);
	err = drain_start(r->drain);
	if (err) {
		fprintf(stderr, "xpcap: cannot start the drain thread: %s\n", strerror(-err));
		return XP_EXIT_FAIL;
	}
	xp_waitend_watch_fd(&r->we, drain_failed_fd(r->drain));
	return 0;
}

static bool disk_full(int err)
{
	return err == -ENOSPC || err == -EDQUOT;
}

/* Writing cpu.xpr failed (a full disk, a quota): say so once, detach so
 * the command no longer pays for sampling, and let it run on. The file
 * keeps every whole block written before (the writer cuts it back). */
static void stop_on_write_error(struct recorder *r, int err)
{
	if (r->write_failed)
		return;
	r->write_failed = true;
	drain_stop(r->drain);
	xp_sampler__stop(r->sampler);
	r->meta.stop_reason = disk_full(err) ? "disk_full" : "write_error";
	fprintf(stderr, "xpcap: cannot write %s/cpu.xpr: %s; recording stopped, the run keeps "
		"what was written before%s\n", r->rd.path, strerror(-err),
		r->o.command ? " and the command runs on" : "");
}

/* Waits until the command exits, the duration ends, the attached
 * processes are gone, or a signal stops us. Returns xpcap's exit status. */
static int wait_for_end(struct recorder *r)
{
	enum xp_waitend_event ev;

	if (r->o.npids)
		xp_waitend_watch_pids(&r->we, r->pids, r->npids);
	while ((ev = xp_waitend_next(&r->we)) == XP_WAITEND_INTERRUPT || ev == XP_WAITEND_WRITE_FAILED) {
		if (ev == XP_WAITEND_WRITE_FAILED)
			stop_on_write_error(r, drain_write_error(r->drain));
		else
			progress(r, "interrupt: waiting for the command (Ctrl-C again to stop now)");
	}
	switch (ev) {
	case XP_WAITEND_EXIT:
		if (!r->write_failed)
			r->meta.stop_reason = "exit";
		return r->we.code;
	case XP_WAITEND_DURATION:
		if (!r->write_failed)
			r->meta.stop_reason = "duration";
		return 0;
	case XP_WAITEND_TARGETS_GONE:
		if (!r->write_failed)
			r->meta.stop_reason = "targets_exited";
		return 0;
	case XP_WAITEND_SIGNAL:
		r->meta.stop_reason = "signal";
		return 128 + r->we.stop_signo;
	default:
		return XP_EXIT_FAIL;
	}
}

/* What the injection library said at its start in each process: a fatal
 * status (CUPTI held by torch.profiler, nsys or another xpcap; a CUPTI
 * error) means no GPU records there. The remedy goes with it. */
static void note_gpu_problem(struct recorder *r)
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

/* The last lines: a CUDA program whose GPU work went unrecorded. */
static void say_gpu_end(const struct recorder *r)
{
	if (r->meta.cuda_library && !r->meta.gpu_armed && !r->o.no_gpu)
		fprintf(stderr, "xpcap: no GPU records: pid %d loaded %s, but GPU capture was not "
			"armed: %s\n", (int)r->meta.cuda_pid, r->meta.cuda_library,
			r->meta.gpu_not_armed);
	if (r->meta.gpu_problem)
		fprintf(stderr, "xpcap: no GPU records from pid %d%s: %s\n",
			(int)r->meta.gpu_problem_pid, r->meta.gpu_problem_procs > 1 ?
			" and other processes" : "", r->meta.gpu_problem);
}

/* Detach first so nothing new arrives, then empty the rings, then write. */
static int finish(struct recorder *r)
{
	int err, ret = 0;

	drain_stop(r->drain);
	xp_sampler__stop(r->sampler);
	err = drain_final(r->drain);
	xp_waitend_reap(&r->we);
	r->meta.have_exit = r->we.exited;
	r->meta.exit_code = r->we.code;
	r->meta.exit_signal = r->we.child_signo;
	r->meta.stop_mono = clock_ns(CLOCK_MONOTONIC);
	r->meta.stop_real = clock_ns(CLOCK_REALTIME);
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
	/* a full disk or quota is the run's limit, not xpcap's failure */
	if (err && !disk_full(err))
		ret = XP_EXIT_FAIL;
	snapshot_perf_maps(r->drain, r->pids, r->npids, &r->rd);
	note_gpu_problem(r);
	r->meta.status = "complete";
	r->meta.counts = drain_counts(r->drain);
	err = meta_write(&r->rd, &r->meta);
	if (err) {
		fprintf(stderr, "xpcap: cannot write %s/meta.json: %s\n", r->rd.path, strerror(-err));
		ret = XP_EXIT_FAIL;
	}
	return ret;
}

static void say_rundir_refused(const struct recorder *r, int err)
{
	const char *arg = r->o.output;

	switch (err) {
	case -ENOTEMPTY:
		fprintf(stderr, "xpcap: cannot use %s as run directory: %s (use --force to reuse "
			"it)\n", arg, strerror(-err));
		break;
	case -EBUSY:
		if (r->rd.holder > 0)
			fprintf(stderr, "xpcap: cannot use %s as run directory: another xpcap (pid %d) "
				"is recording into it\n", arg, (int)r->rd.holder);
		else
			fprintf(stderr, "xpcap: cannot use %s as run directory: another xpcap is "
				"recording into it\n", arg);
		break;
	case -ELOOP:
		fprintf(stderr, "xpcap: cannot use %s as run directory: it is a symbolic link "
			"(name the directory itself)\n", arg);
		break;
	case -EPERM:
		fprintf(stderr, "xpcap: cannot use %s as run directory: it belongs to uid %u, not "
			"to the invoking user (uid %u); use a directory of your own\n", arg,
			(unsigned)r->rd.owner, (unsigned)r->uid);
		break;
	default:
		fprintf(stderr, "xpcap: cannot use %s as run directory: %s\n", arg, strerror(-err));
	}
}

/* Root (or CAP_BPF and CAP_PERFMON): the eBPF sampler. Otherwise perf
 * events on the user's own processes, as `perf record` for a normal user;
 * what only BPF does is refused. -1 to go on, else the exit status. */
static int choose_sampler(struct recorder *r)
{
	const char *root_only = NULL;
	enum perfsampler_level level;

	r->bpf = xp_sampler__permitted();
	r->meta.sampler = "bpf";
	if (r->bpf)
		return -1;
	if (r->o.system_wide)
		root_only = "-a (all CPUs)";
	else if (r->o.off_cpu)
		root_only = "--off-cpu (a BPF program on sched_switch)";
	else if (r->o.command && !r->o.no_gpu && !r->o.launch_inproc)
		root_only = "--launch-stacks uprobe (a BPF uprobe)";
	if (root_only) {
		fprintf(stderr, "xpcap: cannot record: %s needs root or CAP_BPF and CAP_PERFMON; "
			"a normal user records their own processes, with user stacks only\n",
			root_only);
		return XP_EXIT_USAGE;
	}
	level = perfsampler_level(&r->paranoid);
	r->meta.sampler = level == PERFSAMPLER_NONE ? "none" : "perf";
	r->perf_samples = level != PERFSAMPLER_NONE && !r->o.gpu_only;
	if (r->perf_samples)
		perfsampler_attr(&r->sample_attr, r->o.freq, r->o.sample_copy,
				 level == PERFSAMPLER_KERNEL_TIME);
	return -1;
}

/* The owner of a live process, or -1. */
static long proc_uid(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return stat(path, &st) ? -1 : (long)st.st_uid;
}

static int check_pids(struct recorder *r)
{
	uid_t uid;
	gid_t gid;

	target_invoking_user(&uid, &gid);
	for (unsigned i = 0; i < r->o.npids; i++) {
		long owner;

		if (kill(r->o.pids[i], 0) && errno == ESRCH) {
			fprintf(stderr, "xpcap: cannot attach to pid %d: no such process\n",
				(int)r->o.pids[i]);
			return -ESRCH;
		}
		owner = proc_uid(r->o.pids[i]);
		if (!r->bpf && owner >= 0 && (uid_t)owner != getuid()) {
			fprintf(stderr, "xpcap: cannot attach to pid %d: it belongs to uid %ld; a normal "
				"user records only their own processes (root records any)\n",
				(int)r->o.pids[i], owner);
			return -EPERM;
		}
		/* under sudo nothing of a process the user could not trace */
		if (r->bpf && uid != 0 && taskowner_is(r->o.pids[i], uid, gid) != 1) {
			fprintf(stderr, "xpcap: cannot attach to pid %d: not a process the invoking "
				"user (uid %u) may trace (another user's, root's or privileged)\n",
				(int)r->o.pids[i], (unsigned)uid);
			return -EPERM;
		}
		r->pids[r->npids++] = r->o.pids[i];
	}
	return 0;
}

/* 1. arguments and environment: nothing is created before these pass.
 * -1 to go on, else the exit status. */
static int check_args(struct recorder *r, int argc, char **argv)
{
	char err_line[256];
	int ret;

	if (xp_record_opts_parse(&r->o, argc, argv, err_line, sizeof(err_line))) {
		fprintf(stderr, "xpcap: cannot record: %s (see xpcap record --help)\n", err_line);
		return XP_EXIT_USAGE;
	}
	if (r->o.help) {
		xp_record_usage(stdout);
		return XP_EXIT_OK;
	}
	if (strchr(r->o.output, '%')) {
		if (xp_output_expand(r->o.output, getenv, r->output, sizeof(r->output), err_line,
				     sizeof(err_line))) {
			fprintf(stderr, "xpcap: cannot record: %s\n", err_line);
			return XP_EXIT_USAGE;
		}
		r->o.output = r->output;
	}
	if ((ret = choose_sampler(r)) >= 0)
		return ret;
	if (check_pids(r))
		return XP_EXIT_USAGE;
	resolve_cupti_lib(r);
	if (r->o.cupti_lib && !r->o.no_gpu && access(r->cupti_lib, R_OK)) {
		fprintf(stderr, "xpcap: cannot use injection library %s: %s\n", r->cupti_lib,
			strerror(errno));
		return XP_EXIT_USAGE;
	}
	r->meta.opts = &r->o;
	r->meta.status = "recording";
	r->meta.gpu_armed = r->o.command && !r->o.no_gpu && access(r->cupti_lib, R_OK) == 0;
	r->meta.cupti_lib = r->meta.gpu_armed ? r->cupti_lib : NULL;
	r->meta.gpu_not_armed = r->meta.gpu_armed ? NULL : r->o.no_gpu ? NOT_ARMED_NO_GPU :
				!r->o.command ? NOT_ARMED_ATTACH : NOT_ARMED_NO_LIB;
	/* the window's times count from here (a few ms before the command runs) */
	r->t0 = clock_ns(CLOCK_MONOTONIC);
	r->meta.window_from = r->o.delay_s ? r->t0 + (uint64_t)(r->o.delay_s * 1e9) : 0;
	r->meta.window_until = r->o.duration_s ? r->t0 + (uint64_t)((r->o.delay_s +
								     r->o.duration_s) * 1e9) : 0;
	target_invoking_user(&r->uid, &r->gid);
	if (r->o.record_privileged && r->uid != 0) {
		fprintf(stderr, "xpcap: cannot record: --record-privileged is for root without sudo "
			"(the run would give uid %u the memory of privileged tasks)\n", (unsigned)r->uid);
		return XP_EXIT_USAGE;
	}
	gitdesc_take(r->o.command, r->uid, r->gid, &r->meta.git);     /* no thread yet */
	return -1;
}

/* 2. the run directory, opened once as the invoking user and locked (root
 * must not make or take a directory where that user could not); 3. signals,
 * then the held child. 0, or the exit status after saying why. */
static int open_run(struct recorder *r)
{
	int err = rundir_open(&r->rd, r->o.output, r->uid, r->gid, r->o.force);

	if (err) {
		say_rundir_refused(r, err);
		return XP_EXIT_USAGE;
	}
	r->rd_open = true;
	err = xp_waitend_open(&r->we);
	if (err) {
		fprintf(stderr, "xpcap: cannot set up signal handling: %s\n", strerror(-err));
		return XP_EXIT_USAGE;
	}
	if (r->o.command) {
		build_env(r);
		err = target_fork(&r->t, r->o.command, r->env, r->uid, r->gid);
		if (err) {
			fprintf(stderr, "xpcap: cannot start %s: %s\n", r->o.command[0],
				strerror(-err));
			return XP_EXIT_USAGE;
		}
		r->pids[r->npids++] = r->t.pid;
		xp_waitend_set_child(&r->we, r->t.pid);
	}
	return 0;
}

/* meta.json first (it reserves room for its final version, which a disk
 * that fills while recording could otherwise refuse), then the files the
 * run may do without. 0 or the exit status. */
static int write_start_files(struct recorder *r)
{
	int err;

	r->meta.pids = r->pids;
	r->meta.npids = r->npids;
	err = meta_write(&r->rd, &r->meta);
	if (err) {
		fprintf(stderr, "xpcap: cannot write %s/meta.json: %s\n", r->rd.path, strerror(-err));
		return XP_EXIT_FAIL;
	}
	if (r->o.off_cpu)
		r->meta.tracefmt_err = tracefmt_save(&r->rd, "sched", "sched_switch");
	if (r->meta.tracefmt_err)
		progress(r, "cannot save the sched_switch tracepoint format: %s (noted in meta.json)",
			 strerror(-r->meta.tracefmt_err));
	/* the largest file (MiBs): a partial copy is removed, the run goes on;
	 * perf samples of a normal user have no kernel frames to name; under
	 * sudo the addresses are moved where the user may not see them */
	if (r->bpf)
		r->meta.kallsyms_err = r->kernel_delta || !r->meta.kernel_addresses ?
				       kernaddr_save_kallsyms(&r->rd, r->kernel_delta,
							      &r->meta.kallsyms_bytes) : -EPERM;
	if (r->meta.kallsyms_err)
		progress(r, "cannot save kallsyms into the run: %s (kernel frames stay addresses; "
			 "noted in meta.json)", strerror(-r->meta.kallsyms_err));
	return 0;
}

/* What a normal user's run lacks, once; no CPU samples at all even with -q. */
static void say_unprivileged(const struct recorder *r)
{
	if (r->bpf)
		return;
	if (strcmp(r->meta.sampler, "none") == 0)
		fprintf(stderr, "xpcap: kernel.perf_event_paranoid is %d: no CPU samples or mappings "
			"(they need it <= 2, or root); recording the GPU side only\n", r->paranoid);
	else if (r->perf_samples)
		progress(r, "not root: CPU samples through perf events with user stacks%s; kernel "
			 "frames, --off-cpu and -a need root", r->paranoid == 2 ?
			 ", none while in the kernel (kernel.perf_event_paranoid 2)" : "");
}

static void say_window(const struct recorder *r)
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
	progress(r, "capture window: GPU activity and launch stacks %s%s%s; CUPTI activity is off"
		 " outside it", range, r->o.delay_s && range[0] ? ", " : "",
		 r->o.delay_s ? "after the --delay" : "");
}

/* 5. the duration counts from here; let the command run. 0 or the exit status. */
static int release(struct recorder *r)
{
	/* --duration counts from the end of --delay, as nsys's does */
	int err = xp_waitend_arm_timer(&r->we, r->o.duration_s ? r->o.delay_s + r->o.duration_s : 0);
	int exec_errno;

	if (err) {
		fprintf(stderr, "xpcap: cannot set the --duration timer: %s\n", strerror(-err));
		return XP_EXIT_FAIL;
	}
	if (r->o.command && target_release(&r->t, &exec_errno)) {
		fprintf(stderr, "xpcap: cannot run %s: %s\n", r->o.command[0],
			strerror(exec_errno));
		return EXIT_EXEC_FAILED;
	}
	r->run_started = true;
	progress(r, "recording %s%s into %s", r->o.command ? r->o.command[0] :
		 r->o.system_wide ? "all CPUs" : "pids",
		 r->meta.gpu_armed ? " (GPU capture armed)" : "", r->rd.path);
	say_window(r);
	if (r->o.npids && !r->o.no_gpu)
		progress(r, "attached: CPU samples only; CUDA launches are seen only in processes "
			 "that loaded the injection library at their start");
	say_unprivileged(r);
	return 0;
}

/* What was written and lost, on stderr. */
static void say_written(struct recorder *r)
{
	const struct xp_record_counts *c = drain_counts(r->drain);
	uint64_t lost = c->lost[XP_REC_SAMPLE][XP_LOST_RINGBUF_FULL] +
			c->lost[XP_REC_LAUNCH][XP_LOST_RINGBUF_FULL] +
			c->lost[XP_REC_SWITCH][XP_LOST_RINGBUF_FULL] +
			c->lost[0][XP_LOST_PERF_LOST];

	if (lost)
		progress(r, "lost %llu records: the rings were full (a larger -m may help)",
			 (unsigned long long)lost);
	progress(r, "wrote %s: %llu samples, %llu launches, %llu off-CPU intervals, "
		 "%llu mmaps, %.1f MiB",
		 r->rd.path, (unsigned long long)c->written[XP_REC_SAMPLE],
		 (unsigned long long)c->written[XP_REC_LAUNCH],
		 (unsigned long long)c->written[XP_REC_SWITCH],
		 (unsigned long long)c->written[XP_REC_MMAP],
		 (double)r->meta.cpu_bytes / (1 << 20));
	if (r->o.compress && r->meta.cpu_bytes)
		progress(r, "cpu.xpr compressed %.1fx (%.1f MiB of records)",
			 (double)r->meta.cpu_raw_bytes / (double)r->meta.cpu_bytes,
			 (double)r->meta.cpu_raw_bytes / (1 << 20));
}

static void close_all(struct recorder *r)
{
	if (r->t.pid > 0 && !r->run_started)
		target_abort(&r->t);
	drain_close(r->drain);
	xp_writer_close(r->w);
	xp_sampler__close(r->sampler);
	sideband_close(r->sb);
	/* capture never started: only what this xpcap made goes */
	if (r->rd_open && !r->run_started)
		rundir_abandon(&r->rd);
	xp_waitend_close(&r->we);
	if (r->rd_open)
		rundir_close(&r->rd);
	free(r);
}

int cmd_record(int argc, char **argv)
{
	struct recorder *r = calloc(1, sizeof(*r));
	int ret, err;

	if (!r) {
		fprintf(stderr, "xpcap: cannot record: out of memory\n");
		return XP_EXIT_FAIL;
	}
	r->we.sigfd = r->we.timerfd = r->we.failfd = -1;
	r->t.go_fd = r->t.err_fd = -1;
	if ((ret = check_args(r, argc, argv)) >= 0 || (ret = open_run(r)))
		goto out;
	libbpf_set_print(libbpf_quiet);
	/* 4. BPF, perf events, writer, drain thread */
	if ((ret = arm(r)) || (ret = write_start_files(r)) || (ret = release(r)))
		goto out;
	/* 6. wait, 7. stop and write */
	ret = wait_for_end(r);
	err = finish(r);
	if (err && !ret)
		ret = err;
	if (!err && !r->write_failed)
		say_written(r);
	say_gpu_end(r);
out:
	close_all(r);
	return ret;
}
