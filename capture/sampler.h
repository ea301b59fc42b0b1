/* sampler.h - what sampler.bpf.c hands to user space through the ring
 * buffer, shared by both sides (fixed-width types only).
 * Every event is reserved at its maximum size; user space copies out the
 * used part (stacks: kernel IPs in ips[0..], user IPs in
 * ips[XP_MAX_STACK_DEPTH..]) into one run-format record. */
#ifndef XP_CAPTURE_SAMPLER_H
#define XP_CAPTURE_SAMPLER_H

#include "runfmt.h"

#define SAMPLER_PATH_MAX 256          /* exec path bytes kept */
#define SAMPLER_MAX_TGIDS 65536       /* tracked processes */
#define SAMPLER_RINGBUF_BYTES (8u << 20)

/* Index into the per-CPU loss counter array. */
enum sampler_loss {
	SAMPLER_LOSS_SAMPLE = 0,      /* sample: ring buffer full */
	SAMPLER_LOSS_LAUNCH = 1,      /* launch: ring buffer full */
	SAMPLER_LOSS_EXEC = 2,        /* exec: ring buffer full */
	SAMPLER_LOSS_STACK = 3,       /* a sample's stack could not be read (record kept) */
	SAMPLER_LOSS_SWITCH = 4,      /* off-CPU interval: ring buffer full */
	SAMPLER_LOSS_SWITCH_STATE = 5,  /* off-CPU: no per-thread slot (task storage) */
	SAMPLER_LOSS_SWITCH_STACK = 6,  /* off-CPU: user stack unreadable (record kept) */
	SAMPLER_LOSS_N = 7,
};

/* --off-cpu: what the switch-out of a tracked thread leaves in its task
 * storage until it runs again (same stack layout as sampler_event.tail). */
struct offcpu_state {
	uint64_t ts;                  /* ns, switch-out; 0: nothing pending */
	uint32_t cpu;                 /* CPU it left */
	uint32_t state;               /* prev_state, 0 when preempted */
	struct xp_stack stack;
	uint64_t ips[2 * XP_MAX_STACK_DEPTH];
};

struct sampler_event {
	uint32_t type;                /* XP_REC_SAMPLE, _LAUNCH, _EXEC or _SWITCH */
	uint32_t pad;
	/* launch: the marker's return address, read from the stack at its
	 * first instruction: the frame-pointer walk cannot see that caller,
	 * whose frame the marker has not pushed yet. 0 if unknown. */
	uint64_t entry_ret;
	union {
		struct xp_sample sample;
		struct xp_launch launch;
		struct xp_exec exec;
		struct xp_switch sw;
	} u;
	union {
		uint64_t ips[2 * XP_MAX_STACK_DEPTH];   /* kernel, then user */
		char path[SAMPLER_PATH_MAX];            /* exec */
	} tail;
};

#endif
