/* record.h - the pieces of `xpcap record`, one job per file:
 *   options.c   parse the command line into struct xp_record_opts
 *   target.c    fork the command (held on a pipe until capture is armed),
 *               drop privileges, exec; turn statuses into exit codes
 *   waitend.c   wait for the end: child exit, --duration, signals, pidfds
 *   bpfsampler.c  load sampler.bpf.c, per-CPU sampling perf events, uprobe
 *   sideband.c  per-CPU perf dummy events (mmap/comm/fork/exit) and their rings
 *   perfconv.c  convert one perf side-band record into run-format records
 *   procmaps.c  existing executable mappings from /proc/PID/maps
 *   snapshot.c  those mappings for -p/-a, and JIT perf maps at the end
 *   buildid.c   read an ELF file's GNU build id (libelf)
 *   cuptilib.c  open the injection library once (as the sudo user for --cupti-lib)
 *   fstrust.c   whether root may touch a file a process names (no FUSE server to wait for)
 *   drain.c     the drain thread: BPF ring buffer + perf rings -> cpu.xpr
 *   rundir.c    create/check the run directory, copy files in, chown
 *   meta.c      meta.json (jansson), written at start and atomically at end
 *   tracefmt.c  tracepoint format files (sched_switch) copied into the run
 *   recorder*.c xp_record(): the steps of one run, in order (recorder.h)
 * Everything here returns 0 or a negative errno (xp_record: an exit status
 * and its line in r->err) and never prints; only cmd_record.c talks to the
 * user.
 *
 *   struct xp_record_opts o;
 *   if (xp_record_opts_parse(&o, argc, argv, err, sizeof(err)) < 0) ...
 */
#ifndef XP_CAPTURE_RECORD_H
#define XP_CAPTURE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#include "src/runfmt.h"

#define XP_RECORD_DEFAULT_FREQ 99
#define XP_RECORD_MAX_FREQ 100000
#define XP_RECORD_DEFAULT_OUTPUT "xpcap.run"
#define XP_RECORD_MAX_PIDS 64
#define XP_RECORD_MIN_RING_KIB 4              /* one page */
#define XP_RECORD_MAX_RING_KIB (1u << 20)     /* 1 GiB */
#define XP_RECORD_MAX_OFFCPU_MIN_US 60000000u /* one minute */
#define XP_RECORD_WAITS_MIN_US 50u           /* waits by default: shorter off-CPU intervals dropped */
#define XP_RECORD_DEFAULT_COPY 8192u          /* dwarf: user stack bytes, as perf */
#define XP_RECORD_INPROC_DEFAULT_COPY 65528u  /* --launch-stacks inproc: launch copies */
#define XP_RECORD_MAX_RANGE_NAME 255          /* nvtx:NAME */
#define XP_RECORD_MAX_RANGE_COUNT 1000000
#define XP_RECORD_KILL_GRACE_S 5              /* --kill: SIGTERM, then SIGKILL after */

struct xp_record_opts {
	const char *output;             /* run directory */
	unsigned freq;                  /* sampling frequency, Hz */
	double duration_s;              /* 0: until the command exits / Ctrl-C */
	double delay_s;                 /* --delay: nothing recorded before S seconds */
	bool kill_at_end;               /* --kill: end the command when --duration ends */
	const char *capture_range;      /* --capture-range cudaProfilerApi | nvtx:NAME, or NULL */
	unsigned capture_count;         /* --capture-range-count: ranges recorded (default 1) */
	bool system_wide;               /* -a */
	bool force;                     /* reuse a non-empty run directory */
	bool quiet;                     /* -q: no progress lines */
	bool no_gpu;                    /* --no-gpu: no uprobe, no CUDA injection */
	bool gpu_only;                  /* --gpu-only: no periodic sampling */
	bool help;                      /* -h: print usage, nothing else */
	const char *cupti_lib;          /* --cupti-lib PATH, NULL: next to xpcap */
	uint32_t ring_kib;              /* -m: BPF ring buffer KiB, 0: default */
	bool off_cpu;                   /* off-CPU intervals (waits) recorded: --off-cpu, or by
					 * default where GPU capture is armed (the recorder
					 * settles it: recorder_check.c) */
	bool off_cpu_given;             /* --off-cpu */
	bool no_off_cpu;                /* --no-off-cpu: no waits, not even by default */
	uint32_t offcpu_min_us;         /* --off-cpu-min-us: shorter ones dropped */
	uint32_t sample_copy;           /* --call-graph dwarf,SIZE: bytes; 0: fp (default) */
	uint32_t launch_copy;           /* --launch-call-graph: bytes; default 65528 inproc, 8192 uprobe */
	bool launch_inproc;             /* --launch-stacks inproc (default with a command): the
					 * injection library takes them, the uprobe stays as fallback */
	bool python_lines;              /* --python-lines on (default) | off: the injection library
					 * walks Python frames at each launch */
	bool no_python_frames;          /* --no-python-frames: xpcap reads no Python frames for
					 * CPU samples (capture/pyreader.h) */
	bool reuse_stacks;              /* --reuse-stacks on (default) | off: a repeated launch
					 * names an earlier copy (cupti/stackreuse.h) */
	bool compress;                  /* --compress zstd (default) | none: cpu.xpr in zstd blocks */
	bool record_privileged;         /* --record-privileged: setuid/non-dumpable tasks too (plain root) */
	pid_t pids[XP_RECORD_MAX_PIDS];       /* -p */
	unsigned npids;
	char **command;                 /* argv of the command, NULL-terminated; NULL with -p/-a */
	int command_argc;
};

/* options.c. On error, returns -EINVAL and writes one line to err. */
int xp_record_opts_parse(struct xp_record_opts *o, int argc, char **argv, char *err,
		   size_t errlen);
/* "123,456" -> pids; -EINVAL on anything else. */
int xp_record_parse_pids(const char *s, pid_t *pids, unsigned max, unsigned *n);
void xp_record_usage(FILE *f);
/* perf's spelling: "fp" -> 0, "dwarf" -> XP_RECORD_DEFAULT_COPY, "dwarf,SIZE" ->
 * SIZE rounded up to 8 (1..XP_USER_COPY_MAX); -EINVAL on anything else. */
int xp_record_parse_call_graph(const char *s, uint32_t *copy_bytes);

/* Per record kind and loss reason counts, for meta.json and XP_REC_LOST. */
#define XP_RECORD_NTYPES 128
#define XP_RECORD_NREASONS 7
struct xp_record_counts {
	uint64_t written[XP_RECORD_NTYPES];
	uint64_t lost[XP_RECORD_NTYPES][XP_RECORD_NREASONS];
	/* eBPF: CPU samples the program saw of the recorded tasks (each one
	 * written or counted lost); has_seen: 0 with perf events */
	uint64_t samples_seen;
	bool has_seen;
};

static inline unsigned xp_record_type_slot(uint32_t type)
{
	return type < XP_RECORD_NTYPES ? type : 0;
}

#endif
