/* sampler.h - what sampler.bpf.c hands to user space through the ring
 * buffer, shared by both sides (fixed-width types only).
 * Every event is reserved at its maximum size; user space copies out the
 * used part (stacks: kernel IPs in ips[0..], user IPs in
 * ips[XP_MAX_STACK_DEPTH..]) into one run-format record. */
#ifndef XP_CAPTURE_SAMPLER_H
#define XP_CAPTURE_SAMPLER_H

#include "src/runfmt.h"

#define SAMPLER_PATH_MAX 256          /* exec path bytes kept */
#define SAMPLER_MAX_TGIDS 65536       /* tracked processes */
#define SAMPLER_MAX_VERDICTS 65536    /* processes judged under sudo (LRU) */
#define SAMPLER_FEW_ENTRIES 64        /* either of the two when not used */
#define SAMPLER_RINGBUF_BYTES (8u << 20)
#define SAMPLER_MAX_COPY XP_USER_COPY_MAX   /* dwarf mode: user stack bytes */
#define SAMPLER_OFFCPU_MAX_COPY 32768u      /* dwarf off-CPU: kept per thread while off */
/* copy buffer: room for the verifier's bounds on the chunked read (an
 * offset below 64 KiB plus a chunk below 32 KiB) */
#define SAMPLER_COPY_BUF (65536u + 32768u)

/* Index into the per-CPU loss counter array. */
enum sampler_loss {
	SAMPLER_LOSS_SAMPLE = 0,      /* sample: ring buffer full */
	SAMPLER_LOSS_LAUNCH = 1,      /* launch: ring buffer full */
	SAMPLER_LOSS_EXEC = 2,        /* exec: ring buffer full */
	SAMPLER_LOSS_STACK = 3,       /* a sample's stack could not be read (record kept) */
	SAMPLER_LOSS_SWITCH = 4,      /* off-CPU interval: ring buffer full */
	SAMPLER_LOSS_SWITCH_STATE = 5,  /* off-CPU: no per-thread slot (task storage
					 * full, or busy on this CPU) */
	SAMPLER_LOSS_SWITCH_STACK = 6,  /* off-CPU: user stack unreadable (record kept) */
	SAMPLER_LOSS_LAUNCH_STACK = 7,  /* launch: user stack unreadable (record kept) */
	SAMPLER_LOSS_COPY_STATE = 8,    /* dwarf off-CPU: no per-thread slot for the copy (record kept) */
	SAMPLER_LOSS_PRIV_SAMPLE = 9,   /* sample of a privileged task: not recorded */
	SAMPLER_LOSS_PRIV_LAUNCH = 10,  /* launch of a privileged task: not recorded */
	SAMPLER_LOSS_PRIV_SWITCH = 11,  /* off-CPU interval of a privileged task: not recorded */
	SAMPLER_LOSS_PRIV_EXEC = 12,    /* under sudo, exec of another user's task: not recorded */
	SAMPLER_LOSS_N = 13,
	/* not a loss: CPU samples of tracked tasks the program saw, so the
	 * run can show seen == written + lost exactly */
	SAMPLER_SEEN_SAMPLE = SAMPLER_LOSS_N,
	SAMPLER_COUNTERS_N,
};

/* Dwarf mode: events are assembled in a per-CPU slot of this shape (one
 * slot per program kind, so programs that nest cannot share one) and sent
 * with the used length: the event, then regs and regs.size stack bytes
 * when e's stack has XP_STACK_HAS_USER_COPY. */
enum sampler_slot { SAMPLER_SLOT_SAMPLE, SAMPLER_SLOT_LAUNCH, SAMPLER_SLOT_SWITCH, SAMPLER_SLOT_N };

/* Dwarf off-CPU: the user stack copy taken at switch-out (task storage). */
struct offcpu_copy {
	struct xp_user_regs_copy regs;
	uint8_t data[SAMPLER_OFFCPU_MAX_COPY];
};

/* --off-cpu: what the switch-out of a tracked thread leaves in its task
 * storage until it runs again (same stack layout as sampler_event.tail). */
struct offcpu_state {
	uint64_t ts;                  /* ns, switch-out; 0: nothing pending */
	uint32_t cpu;                 /* CPU it left */
	uint32_t state;               /* prev_state, 0 when preempted */
	uint32_t privileged;          /* 1: the thread was privileged, no stacks taken */
	uint32_t pad;
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

struct sampler_copy_event {
	struct sampler_event e;
	struct xp_user_regs_copy regs;
	uint8_t data[SAMPLER_COPY_BUF];
};

#endif
