/* drain.h - the drain thread: moves records from the BPF ring buffer and
 * the perf side-band rings into cpu.xpr, flushes every second (so a killed
 * xpcap still leaves a readable run), and turns loss counters into
 * XP_REC_LOST records. The writer is only touched by this thread once
 * started, and by the caller before drain_start and after drain_stop.
 *   drain_open(&d, writer, sampler, sideband, NULL);
 *   drain_append(d, XP_REC_MMAP, &m, sizeof(m), path, len);   // before start
 *   drain_start(d); ... drain_stop(d);
 *   xp_sampler__stop(s); drain_final(d);   // what arrived before the detach
 */
#ifndef XP_CAPTURE_DRAIN_H
#define XP_CAPTURE_DRAIN_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "capture/record.h"

struct xp_gpu_rank;

struct drain;
struct xp_writer;
struct xp_sampler;
struct sideband;

/* s NULL: no BPF sampler; the samples (of sample_attr, perfsampler.h) come
 * through the side-band rings, or there are none (sample_attr NULL). */
int drain_open(struct drain **out, struct xp_writer *w, struct xp_sampler *s,
	       struct sideband *sb, const struct perf_event_attr *sample_attr);
/* Appends and counts one record; returns what the writer returned. */
int drain_append(struct drain *d, uint32_t type, const void *fixed, size_t flen,
		 const void *tail, size_t tlen);
/* Same, for mmap and exec records: path (path_len bytes) NUL-terminated. */
int drain_append_path(struct drain *d, uint32_t type, const void *fixed, size_t flen,
		      const char *path, size_t path_len);
/* fn(ctx, pid, path) on the drain thread at the first libcuda.so* or
 * libcudart.so* mapped by a recorded process: the program uses CUDA. */
typedef void (*drain_cuda_fn)(void *ctx, pid_t pid, const char *path);
void drain_watch_cuda(struct drain *d, drain_cuda_fn fn, void *ctx);
/* Samples, launch and off-CPU records before from_ns are dropped (--delay). */
void drain_set_window(struct drain *d, uint64_t from_ns);
/* Before drain_start, without a BPF sampler: the side-band rings' context
 * switch records are paired into off-CPU intervals of min_ns or more
 * (perfswitch.h). 0 or -ENOMEM. */
int drain_take_switches(struct drain *d, uint64_t min_ns);
/* Under sudo, whether the records of process pid may go into the run
 * (the sampler's verdict, else its /proc entry now); always true else. */
bool drain_task_allowed(struct drain *d, pid_t pid);
/* Counts records of a process not allowed, as lost (reason privileged). */
void drain_drop_privileged(struct drain *d, uint32_t type, uint64_t count);
/* Before drain_start: every kernel IP written plus delta, or with drop
 * none at all (kernaddr.h: addresses the invoking user may not see). */
void drain_rebase_kernel(struct drain *d, uint64_t delta, bool drop);
/* --capture-range: samples, launch and off-CPU records only while a
 * process's range window is open (the injection library calls the marker
 * with XP_CBID_WINDOW_OPEN/CLOSE, marker.h, which are not written). */
void drain_set_range(struct drain *d);
int drain_start(struct drain *d);
void drain_stop(struct drain *d);
/* Reads everything still queued, writes loss records, flushes. Returns
 * the first write error of the whole recording, or 0. */
int drain_final(struct drain *d);
/* An eventfd that becomes readable when writing cpu.xpr first fails (a
 * full disk); the error itself, or 0. */
int drain_failed_fd(const struct drain *d);
int drain_write_error(const struct drain *d);
const struct xp_record_counts *drain_counts(const struct drain *d);
/* After drain_final: the distinct kernel IPs of the stack records written,
 * as sampled (before drain_rebase_kernel's delta), sorted, in an array the
 * caller frees (*ips NULL when none). 0, -E2BIG (too many kept: the run
 * needs every symbol) or -ENOMEM. */
int drain_kernel_ips(const struct drain *d, uint64_t **ips, size_t *n);
/* Processes seen in records (for /tmp/perf-PID.map copies); returns count. */
unsigned drain_pids(const struct drain *d, pid_t *out, unsigned max);
/* The exec'd processes whose environment named a rank (procrank.h), in
 * the order first seen, into *out (the drain's; valid until it closes);
 * returns how many. */
unsigned drain_ranks(const struct drain *d, const struct xp_gpu_rank **out);
void drain_close(struct drain *d);

#endif
