/* perfsampler.h - CPU samples without root: a cpu-clock perf event on the
 * user's own process tree with user callchains (and, in dwarf mode, the
 * user registers and a copy of the user stack), as `perf record` takes
 * them for a normal user. sideband.c opens them in place of its side-band
 * events (they report the same) into its per-CPU rings; this file builds their attributes and turns their PERF_RECORD_SAMPLE records into
 * run-format sample records, exactly those the BPF sampler writes (minus
 * kernel frames). Pure: tests/test-perfsampler.c feeds it built records.
 *   struct perf_event_attr a;
 *   perfsampler_attr(&a, 99, 8192, false);
 *   sideband_open(&sb, SIDEBAND_COMMAND, &child, 1, &a, 0);
 *   ... on a PERF_RECORD_SAMPLE read from CPU cpu's ring:
 *   struct perfsample ps;
 *   if (perfsample_convert(rec, len, &a, cpu, &ps) == 0) write ps.rec, ps.copy
 */
#ifndef XP_CAPTURE_PERFSAMPLER_H
#define XP_CAPTURE_PERFSAMPLER_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "src/runfmt.h"

/* What perf_event_paranoid allows a process without CAP_PERFMON. */
enum perfsampler_level {
	PERFSAMPLER_NONE,           /* > 2: no perf events at all (Debian's 3, Android's 3/4) */
	PERFSAMPLER_USER,           /* 2: user mode only; time in the kernel is not sampled */
	PERFSAMPLER_KERNEL_TIME,    /* <= 1: samples in kernel mode too (user stacks only) */
};

/* The level for this process; *paranoid gets the sysctl (or -errno when
 * unreadable: then PERFSAMPLER_USER, the kernel will tell). */
enum perfsampler_level perfsampler_level(int *paranoid);

/* The sampling event: freq Hz of the task's CPU time, copy_bytes of user
 * stack per sample (a multiple of 8, 0: frame-pointer callchains only). */
void perfsampler_attr(struct perf_event_attr *a, unsigned freq, uint32_t copy_bytes,
		      bool kernel_time);

struct perfsample {
	/* the record as the BPF sampler writes it: the sample, then
	 * stack.user_depth user IPs (no kernel IPs) */
	struct {
		struct xp_sample s;
		uint64_t ips[XP_MAX_STACK_DEPTH];
	} rec;
	size_t rec_len;             /* bytes of rec used */
	/* dwarf mode, when the stack has XP_STACK_HAS_USER_COPY: the registers,
	 * then copy->size bytes at data (pointing into the input record) */
	struct xp_user_regs_copy regs;
	const void *data;
};

/* A PERF_RECORD_SAMPLE of an event opened with attr a, read from CPU cpu's
 * ring: 0, or -EBADMSG when it is shorter than its fields say. The comm is
 * left zero (samples carry none; the caller knows it from COMM records). */
int perfsample_convert(const void *rec, size_t len, const struct perf_event_attr *a,
		       uint32_t cpu, struct perfsample *out);

#endif
