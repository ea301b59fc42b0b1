/* bpfsampler.h - user side of sampler.bpf.c: load, track pids, sample,
 * probe the marker, detach. Every step returns 0 or -errno.
 *   struct bpf_sampler *s;
 *   struct bpf_sampler_config c = { .filter = true, .freq = 99 };
 *   bpf_sampler_open(&s, &c);              // load, follow fork/exit/exec
 *   bpf_sampler_track(s, child_pid);
 *   bpf_sampler_start(s, 99);              // per-CPU cpu-clock events
 *   ... drain bpf_sampler_events_fd(s) ...
 *   bpf_sampler_stop(s);                   // nothing fires after this
 *   bpf_sampler_close(s);
 */
#ifndef XP_CAPTURE_BPFSAMPLER_H
#define XP_CAPTURE_BPFSAMPLER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sampler.h"

struct bpf_sampler;

/* Which step failed, for the one-line error of cmd_record. */
enum bpf_sampler_step {
	SAMPLER_STEP_NONE, SAMPLER_STEP_LOAD, SAMPLER_STEP_ATTACH,
	SAMPLER_STEP_PERF, SAMPLER_STEP_UPROBE, SAMPLER_STEP_OFFCPU,
};

struct bpf_sampler_config {
	bool filter;                /* only tracked processes (false: -a) */
	unsigned freq;              /* sampling frequency, Hz (for period_ns) */
	uint32_t ring_bytes;        /* BPF ring buffer, a power of two >= page; 0: default */
	bool off_cpu;               /* attach sched_switch (--off-cpu) */
	uint64_t offcpu_min_ns;     /* shorter off-CPU intervals are not recorded */
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

int bpf_sampler_open(struct bpf_sampler **out, const struct bpf_sampler_config *c);
int bpf_sampler_track(struct bpf_sampler *s, pid_t tgid);
int bpf_sampler_start(struct bpf_sampler *s, unsigned freq);
/* Uprobe on XP_MARKER_SYMBOL in the library at path, every process. */
int bpf_sampler_attach_marker(struct bpf_sampler *s, const char *path);
int bpf_sampler_events_fd(const struct bpf_sampler *s);
/* Sums of the per-CPU loss counters since load. */
int bpf_sampler_losses(const struct bpf_sampler *s, uint64_t out[SAMPLER_LOSS_N]);
enum bpf_sampler_step bpf_sampler_failed_step(const struct bpf_sampler *s);
/* Detaches every probe and closes the perf events; idempotent. */
void bpf_sampler_stop(struct bpf_sampler *s);
/* Stops and frees; accepts NULL. */
void bpf_sampler_close(struct bpf_sampler *s);

#endif
