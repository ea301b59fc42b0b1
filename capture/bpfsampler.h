/* bpfsampler.h - user side of sampler.bpf.c: load, track pids, sample,
 * probe the marker, detach. Every step returns 0 or -errno.
 *   struct xp_sampler *s;
 *   struct xp_sampler_config c = { .filter = true, .freq = 99 };
 *   xp_sampler__open(&s, &c);              // load, follow fork/exit/exec
 *   xp_sampler__track(s, child_pid);
 *   xp_sampler__start(s, 99);              // per-CPU cpu-clock events
 *   ... drain xp_sampler__events_fd(s) ...
 *   xp_sampler__stop(s);                   // nothing fires after this
 *   xp_sampler__close(s);
 */
#ifndef XP_CAPTURE_BPFSAMPLER_H
#define XP_CAPTURE_BPFSAMPLER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "capture/bpf/sampler.h"

struct xp_sampler;

/* Which step failed, for the one-line error of cmd_record. */
enum xp_sampler_step {
	SAMPLER_STEP_NONE, SAMPLER_STEP_LOAD, SAMPLER_STEP_ATTACH,
	SAMPLER_STEP_PERF, SAMPLER_STEP_UPROBE, SAMPLER_STEP_OFFCPU,
};

struct xp_sampler_config {
	bool filter;                /* only tracked processes (false: -a) */
	unsigned freq;              /* sampling frequency, Hz (for period_ns) */
	uint32_t ring_bytes;        /* BPF ring buffer, a power of two >= page; 0: default */
	bool off_cpu;               /* attach sched_switch (--off-cpu) */
	uint64_t offcpu_min_ns;     /* shorter off-CPU intervals are not recorded */
	bool offcpu_user_only;      /* off-CPU stacks without kernel frames (the default waits) */
	/* dwarf mode: user stack bytes copied (multiple of 8); 0: frame pointers only */
	uint32_t sample_copy;       /* samples and off-CPU (capped at SAMPLER_OFFCPU_MAX_COPY) */
	uint32_t launch_copy;       /* marker uprobe */
	/* Tasks with mixed credentials (setuid, setgid) or not dumpable as
	 * their user are never recorded (counted as lost, reason privileged)
	 * unless record_privileged; with owner_only neither are tasks whose
	 * uids and gids are not all owner_uid and owner_gid (sudo). */
	bool record_privileged;     /* --record-privileged (plain root only) */
	bool owner_only;
	uint32_t owner_uid;
	uint32_t owner_gid;
};

/* May this process load the sampler: root, or CAP_BPF and CAP_PERFMON
 * effective (the kernel's own test, 5.8+)? Otherwise xpcap samples
 * through perf events (perfsampler.h). */
bool xp_sampler__permitted(void);
int xp_sampler__open(struct xp_sampler **out, const struct xp_sampler_config *c);
int xp_sampler__track(struct xp_sampler *s, pid_t tgid);
int xp_sampler__start(struct xp_sampler *s, unsigned freq);
/* Under sudo (true, with the invoking user's ids): the BPF programs'
 * verdict on a process, 1 when its records must stay out of the run, 0
 * when they are the user's, -ENOENT when they have none (it is older than
 * the recording); set_verdict gives one where there is none yet. */
bool xp_sampler__owner_only(const struct xp_sampler *s, uint32_t *uid, uint32_t *gid);
int xp_sampler__verdict(const struct xp_sampler *s, pid_t tgid);
int xp_sampler__set_verdict(struct xp_sampler *s, pid_t tgid, bool denied);
/* Uprobe on XP_MARKER_SYMBOL in the library open on fd (cuptilib.h),
 * every process. */
int xp_sampler__attach_marker(struct xp_sampler *s, int fd);
int xp_sampler__events_fd(const struct xp_sampler *s);
/* Sums of the per-CPU loss counters since load. */
int xp_sampler__losses(const struct xp_sampler *s, uint64_t out[SAMPLER_LOSS_N]);
/* The CPU samples of tracked tasks the program saw (SAMPLER_SEEN_SAMPLE),
 * summed over CPUs; 0 or a negative errno. */
int xp_sampler__seen(const struct xp_sampler *s, uint64_t *out);
enum xp_sampler_step xp_sampler__failed_step(const struct xp_sampler *s);
/* Detaches every probe and closes the perf events; idempotent. The
 * marker's program returns at once from here on, while its uprobe is
 * detached on a thread (tens of ms of kernel grace periods) that
 * xp_sampler__close joins. */
void xp_sampler__stop(struct xp_sampler *s);
/* Stops and frees; accepts NULL. */
void xp_sampler__close(struct xp_sampler *s);

#endif
