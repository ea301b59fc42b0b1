/* recorder.h - xp_record(): one `xpcap record` run, as xp_ingest() is one
 * ingest. It checks the environment, opens the run directory, starts the
 * command held, arms capture, lets the command run, waits for the end and
 * writes the run. It never prints: the lines the user reads go through
 * say() (from the drain thread too), and the line of a failure is left in
 * r->err; cmd_record.c prints both, with "xpcap: " before them.
 *
 *   struct xp_recorder *r = xp_recorder_new(say, ctx);
 *   xp_record_opts_parse(&r->o, argc, argv, err, sizeof(err));   // checked
 *   status = xp_record(r);
 *   if (r->err[0])
 *       fprintf(stderr, "xpcap: %s\n", r->err);
 *   xp_recorder_free(r);
 *
 * The steps, one file each: recorder_check.c (1. what may be recorded,
 * where the injection library is), recorder.c (2. the run directory and the
 * held child, 3. the start files, 5. release, 7. close), recorder_env.c (the
 * child's environment), recorder_arm.c (4. BPF, perf events, writer, drain
 * thread), recorder_end.c (6. wait, 7. stop and write). */
#ifndef XP_CAPTURE_RECORDER_H
#define XP_CAPTURE_RECORDER_H

#include <limits.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "capture/gpuscan.h"
#include "capture/meta.h"
#include "capture/record.h"
#include "capture/rundir.h"
#include "capture/target.h"
#include "capture/waitend.h"

/* xpcap record's exit statuses besides the command's own (xpcap(1)). */
enum xp_record_exit {
	XP_RECORD_EXIT_FAIL = 1,        /* writing the run failed */
	XP_RECORD_EXIT_USAGE = 2,       /* bad arguments or environment: nothing is left behind */
	XP_RECORD_EXIT_EXEC = 127,      /* the command cannot be executed (like a shell) */
};

enum xp_say {
	XP_SAY_PROGRESS,                /* progress: not with -q */
	XP_SAY_WARN,                    /* what the user must know, even with -q */
};
/* One line, without "xpcap: " or a newline. */
typedef void (*xp_say_fn)(void *ctx, enum xp_say kind, const char *line);

struct xp_sampler;
struct sideband;
struct xp_writer;
struct drain;
struct pyreader;

struct xp_recorder {
	struct xp_record_opts o;        /* parsed by the caller (xp_record_opts_parse) */
	char output[4096];              /* -o with %h, %r, %p expanded */
	char err[2 * PATH_MAX];         /* the failure's line, "" when none */
	xp_say_fn say;
	void *say_ctx;
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
	struct pyreader *pyreader;      /* Python frames for CPU samples (pyreader.h) */
	uint64_t kernel_delta;          /* added to kernel addresses (kernaddr.h) */
	char cupti_lib[PATH_MAX];
	int cupti_fd;                   /* that file, open (cuptilib.h); -1: none */
	char *env[14];
	char env_buf[13][PATH_MAX + 64];
	uint64_t t0;                    /* CLOCK_MONOTONIC ns the window's times count from */
	char cuda_lib[PATH_MAX];        /* the first CUDA library a target mapped */
	struct gpuscan scan;            /* what the injection library said (finish) */
};

/* NULL when out of memory. */
struct xp_recorder *xp_recorder_new(xp_say_fn say, void *ctx);
/* The whole run, r->o parsed: xpcap's exit status (the command's own, or
 * 0 for -p/-a runs that ended normally, or an xp_record_exit with r->err
 * set). Everything it opened is closed when it returns. */
int xp_record(struct xp_recorder *r);
void xp_recorder_free(struct xp_recorder *r);

#endif
