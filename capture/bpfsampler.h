/* bpfsampler.h - user side of sampler.bpf.c: load, track pids, sample,
 * probe the marker, detach. Every step returns 0 or -errno.
 *   struct bpf_sampler *s;
 *   bpf_sampler_open(&s, true, 99, 0);     // load, follow fork/exit/exec
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
	SAMPLER_STEP_PERF, SAMPLER_STEP_UPROBE,
};

/* ring_bytes: BPF ring buffer size, a power of two >= page size; 0: default. */
int bpf_sampler_open(struct bpf_sampler **out, bool filter, unsigned freq,
		     uint32_t ring_bytes);
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
