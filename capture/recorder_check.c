/* recorder_check.c - step 1 of xp_record() (recorder.h), after the options:
 * which sampler this user gets, the -p pids they may record, where the
 * injection library is, the capture window. Nothing is created before
 * these pass. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/bpfsampler.h"
#include "capture/cuptilib.h"
#include "capture/perfsampler.h"
#include "capture/recorder_steps.h"
#include "capture/taskowner.h"

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
	snprintf(out, len, "%s", XP_LIBDIR "/libxpcupti.so");
	return access(out, R_OK) == 0;
}

/* --cupti-lib, else the first candidate above that exists, as a canonical
 * path (meta.json and the child's environment name the file itself). Left
 * empty when none exists: GPU capture is then not armed, and the run says
 * why (meta.json gpu_not_armed). */
static void resolve_cupti_lib(struct xp_recorder *r)
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

/* The injection library, opened once (cuptilib.h): a --cupti-lib PATH as
 * the invoking user, who gave it; xpcap's own copy as xpcap. -1 to go on,
 * else the exit status. */
static int open_cupti_lib(struct xp_recorder *r)
{
	bool given = r->o.cupti_lib != NULL;
	int fd;

	resolve_cupti_lib(r);
	if (r->o.no_gpu || !r->cupti_lib[0])
		return -1;
	fd = cuptilib_open(r->cupti_lib, given ? r->uid : 0, given ? r->gid : 0);
	if (fd >= 0)
		r->cupti_fd = fd;
	else if (!given)
		r->cupti_lib[0] = '\0';
	else if (fd == -ENXIO)
		return xp_recorder_fail(r, XP_RECORD_EXIT_USAGE, "cannot use injection library %s: "
					"not a regular file", r->cupti_lib);
	else if (fd == -EREMOTE)
		return xp_recorder_fail(r, XP_RECORD_EXIT_USAGE, "cannot use injection library %s: "
					"on a FUSE file system (or one xpcap cannot tell is local), "
					"which root does not touch for a user: its server may never "
					"answer", r->cupti_lib);
	else
		return xp_recorder_fail(r, XP_RECORD_EXIT_USAGE, "cannot use injection library %s: "
					"%s%s", r->cupti_lib, strerror(-fd),
					r->uid != 0 && geteuid() == 0 ? " (looked up as the invoking "
					"user, who gave it)" : "");
	return -1;
}

/* Root (or CAP_BPF and CAP_PERFMON): the eBPF sampler. Otherwise perf
 * events on the user's own processes, as `perf record` for a normal user;
 * what only BPF does is refused. -1 to go on, else the exit status. */
static int choose_sampler(struct xp_recorder *r)
{
	const char *root_only = NULL;
	enum perfsampler_level level;

	r->bpf = xp_sampler__permitted();
	r->meta.sampler = "bpf";
	if (r->bpf)
		return -1;
	if (r->o.system_wide)
		root_only = "-a (all CPUs)";
	else if (r->o.command && !r->o.no_gpu && !r->o.launch_inproc)
		root_only = "--launch-stacks uprobe (a BPF uprobe)";
	if (root_only)
		return xp_recorder_fail(r, XP_RECORD_EXIT_USAGE, "cannot record: %s needs root or "
					"CAP_BPF and CAP_PERFMON; a normal user records their own "
					"processes, with user stacks only", root_only);
	level = perfsampler_level(&r->paranoid);
	r->meta.sampler = level == PERFSAMPLER_NONE ? "none" : "perf";
	/* waits come from perf's context-switch records of the user's own
	 * processes (perfswitch.h): none where no perf event is allowed */
	if (level == PERFSAMPLER_NONE && r->o.off_cpu_given)
		return xp_recorder_fail(r, XP_RECORD_EXIT_USAGE, "cannot record: --off-cpu needs perf "
					"events, which kernel.perf_event_paranoid %d refuses to a normal "
					"user (they need it <= 2, or root)", r->paranoid);
	if (level == PERFSAMPLER_NONE)
		r->o.off_cpu = false;
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

/* -p: pids that exist and that this user may record. -1 to go on, else
 * the exit status. */
static int check_pids(struct xp_recorder *r)
{
	int st = XP_RECORD_EXIT_USAGE;
	uid_t uid;
	gid_t gid;

	target_invoking_user(&uid, &gid);
	for (unsigned i = 0; i < r->o.npids; i++) {
		pid_t pid = r->o.pids[i];
		long owner;

		if (kill(pid, 0) && errno == ESRCH)
			return xp_recorder_fail(r, st, "cannot attach to pid %d: no such process",
						(int)pid);
		owner = proc_uid(pid);
		if (!r->bpf && owner >= 0 && (uid_t)owner != getuid())
			return xp_recorder_fail(r, st, "cannot attach to pid %d: it belongs to uid %ld; "
						"a normal user records only their own processes (root "
						"records any)", (int)pid, owner);
		/* under sudo nothing of a process the user could not trace */
		if (r->bpf && uid != 0 && taskowner_is(pid, uid, gid) != 1)
			return xp_recorder_fail(r, st, "cannot attach to pid %d: not a process the "
						"invoking user (uid %u) may trace (another user's, root's "
						"or privileged)", (int)pid, (unsigned)uid);
		r->pids[r->npids++] = pid;
	}
	return -1;
}

/* GPU capture armed or why not; the capture window's times. */
static void plan_gpu(struct xp_recorder *r)
{
	r->meta.opts = &r->o;
	r->meta.status = "recording";
	r->meta.gpu_armed = r->o.command && !r->o.no_gpu && r->cupti_fd >= 0;
	r->meta.cupti_lib = r->meta.gpu_armed ? r->cupti_lib : NULL;
	r->meta.gpu_not_armed = r->meta.gpu_armed ? NULL : r->o.no_gpu ? NOT_ARMED_NO_GPU :
				!r->o.command ? NOT_ARMED_ATTACH : NOT_ARMED_NO_LIB;
	/* the default waits follow GPU capture; a normal user's come from
	 * perf's context-switch records of their own processes (perfswitch.h) */
	if (!r->o.off_cpu_given && !r->meta.gpu_armed)
		r->o.off_cpu = false;
	/* the window's times count from here (a few ms before the command runs) */
	r->t0 = xp_recorder_clock_ns(CLOCK_MONOTONIC);
	r->meta.window_from = r->o.delay_s ? r->t0 + (uint64_t)(r->o.delay_s * 1e9) : 0;
	r->meta.window_until = r->o.duration_s ? r->t0 + (uint64_t)((r->o.delay_s +
								     r->o.duration_s) * 1e9) : 0;
}

int xp_recorder_check(struct xp_recorder *r)
{
	int ret;

	if ((ret = choose_sampler(r)) >= 0 || (ret = check_pids(r)) >= 0)
		return ret;
	target_invoking_user(&r->uid, &r->gid);
	if ((ret = open_cupti_lib(r)) >= 0)
		return ret;
	plan_gpu(r);
	if (r->o.record_privileged && r->uid != 0)
		return xp_recorder_fail(r, XP_RECORD_EXIT_USAGE, "cannot record: --record-privileged "
					"is for root without sudo (the run would give uid %u the "
					"memory of privileged tasks)", (unsigned)r->uid);
	gitdesc_take(r->o.command, r->uid, r->gid, &r->meta.git);     /* no thread yet */
	return -1;
}
