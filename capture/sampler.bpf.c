// SPDX-License-Identifier: GPL-2.0
/* sampler.bpf.c - kernel side of xpcap record.
 *  - xp_sample_cpu: on every per-CPU cpu-clock perf event, if the current
 *    process is tracked (or -a), a sample with comm, kernel and user stacks
 *  - xp_fork/xp_exit: follow the process tree (tracked tgids map)
 *  - xp_exec: the path of each successful execve of a tracked process
 *  - xp_marker: uprobe on xpcap_correlation_marker(corr_id, cbid)
 *  - xp_switch (--off-cpu): sched_switch; a tracked thread going off CPU
 *    leaves ts, state and stacks in its task storage, and when it is
 *    switched in again one xp_switch record carries the interval
 * Events go to one ring buffer; failures are counted per CPU in `losses`.
 * No vmlinux.h: the two kernel structs read are declared below with
 * preserve_access_index, so libbpf relocates them against the running
 * kernel's BTF (CO-RE). */
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "sampler.h"

char LICENSE[] SEC("license") = "GPL";

struct task_struct {
	int pid;
	int tgid;
	void *mm;                   /* NULL for kernel threads */
} __attribute__((preserve_access_index));


struct linux_binprm {
	const char *filename;
} __attribute__((preserve_access_index));

const volatile bool filter_tgids = true;    /* false with -a */
const volatile __u32 period_ns = 0;
const volatile __u64 offcpu_min_ns = 0;     /* --off-cpu-min-us */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SAMPLER_MAX_TGIDS);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SAMPLER_RINGBUF_BYTES);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SAMPLER_LOSS_N);
	__type(key, __u32);
	__type(value, __u64);
} losses SEC(".maps");

/* Per-thread off-CPU state: allocated on the first switch-out, freed by
 * the kernel with the task, so exited threads leave nothing behind. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_state);
} offcpu SEC(".maps");

static __always_inline void count_loss(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&losses, &idx);

	if (v)
		*v += 1;
}

static __always_inline bool tracked(__u32 tgid)
{
	if (!filter_tgids)
		return true;
	return bpf_map_lookup_elem(&tgids, &tgid) != NULL;
}

/* Reads kernel then user stack of the current task into ips (kernel at
 * ips[0..], user at ips[XP_MAX_STACK_DEPTH..]); loss: counter to bump when
 * the user stack cannot be read. */
static __always_inline void read_stacks(void *ctx, struct xp_stack *st,
					__u64 *ips, bool kernel, __u32 loss)
{
	long n;

	st->flags = 0;
	st->kernel_depth = 0;
	if (kernel) {
		n = bpf_get_stack(ctx, ips, XP_MAX_STACK_DEPTH * 8, 0);
		if (n < 0)
			st->flags |= XP_STACK_KERNEL_ERR;
		else
			st->kernel_depth = n / 8;
	}
	/* kernel threads (-a) have no user stack: not a failed read */
	if (!BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), mm)) {
		st->user_depth = 0;
		return;
	}
	n = bpf_get_stack(ctx, &ips[XP_MAX_STACK_DEPTH], XP_MAX_STACK_DEPTH * 8,
			  BPF_F_USER_STACK);
	if (n < 0) {
		st->flags |= XP_STACK_USER_ERR;
		st->user_depth = 0;
		count_loss(loss);
	} else {
		st->user_depth = n / 8;
		if (st->user_depth >= XP_MAX_STACK_DEPTH)
			st->flags |= XP_STACK_USER_TRUNC;
	}
}

SEC("perf_event")
int xp_sample_cpu(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct sampler_event *e;
	struct xp_sample *s;

	if (!tracked(id >> 32))
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_loss(SAMPLER_LOSS_SAMPLE);
		return 0;
	}
	e->type = XP_REC_SAMPLE;
	s = &e->u.sample;
	s->ts = bpf_ktime_get_ns();
	s->pid = id >> 32;
	s->tid = (__u32)id;
	s->cpu = bpf_get_smp_processor_id();
	s->period_ns = period_ns;
	bpf_get_current_comm(s->comm, sizeof(s->comm));
	read_stacks(ctx, &s->stack, e->tail.ips, true, SAMPLER_LOSS_STACK);
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* sched_process_fork(struct task_struct *parent, struct task_struct *child) */
SEC("raw_tp/sched_process_fork")
int xp_fork(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *parent = (void *)ctx->args[0];
	struct task_struct *child = (void *)ctx->args[1];
	__u32 ptgid = BPF_CORE_READ(parent, tgid);
	__u32 ctgid = BPF_CORE_READ(child, tgid);
	__u8 one = 1;

	if (ptgid == ctgid || !filter_tgids)
		return 0;
	if (bpf_map_lookup_elem(&tgids, &ptgid))
		bpf_map_update_elem(&tgids, &ctgid, &one, BPF_ANY);
	return 0;
}

/* sched_process_exit(struct task_struct *p, ...): runs in the exiting task. */
SEC("raw_tp/sched_process_exit")
int xp_exit(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;

	if (tgid == (__u32)id && filter_tgids)
		bpf_map_delete_elem(&tgids, &tgid);
	return 0;
}

/* sched_process_exec(struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm) */
SEC("raw_tp/sched_process_exec")
int xp_exec(struct bpf_raw_tracepoint_args *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct linux_binprm *bprm = (void *)ctx->args[2];
	struct sampler_event *e;
	const char *filename;
	long n;

	if (!tracked(id >> 32))
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_loss(SAMPLER_LOSS_EXEC);
		return 0;
	}
	e->type = XP_REC_EXEC;
	e->u.exec.ts = bpf_ktime_get_ns();
	e->u.exec.pid = id >> 32;
	e->u.exec.tid = (__u32)id;
	e->u.exec.old_tid = (__u32)ctx->args[1];
	e->u.exec.pad = 0;
	filename = BPF_CORE_READ(bprm, filename);
	n = bpf_probe_read_kernel_str(e->tail.path, sizeof(e->tail.path), filename);
	e->u.exec.path_len = n > 0 ? n - 1 : 0;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* xpcap_correlation_marker(uint64_t correlation_id, uint32_t cbid) */
SEC("uprobe")
int xp_marker(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct sampler_event *e;
	struct xp_launch *l;

	if (!tracked(id >> 32))
		return 0;
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_loss(SAMPLER_LOSS_LAUNCH);
		return 0;
	}
	e->type = XP_REC_LAUNCH;
	l = &e->u.launch;
	l->ts = bpf_ktime_get_ns();
	l->correlation_id = PT_REGS_PARM1(ctx);
	l->cbid = (__u32)PT_REGS_PARM2(ctx);
	l->pid = id >> 32;
	l->tid = (__u32)id;
	l->cpu = bpf_get_smp_processor_id();
	read_stacks(ctx, &l->stack, e->tail.ips, false, SAMPLER_LOSS_STACK);
	e->entry_ret = 0;
#ifdef __TARGET_ARCH_x86
	bpf_probe_read_user(&e->entry_ret, sizeof(e->entry_ret), (void *)PT_REGS_SP(ctx));
#endif
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* sched_switch(bool preempt, struct task_struct *prev, struct task_struct *next,
 *              unsigned int prev_state): runs in prev, just before the switch.
 * tp_btf rather than raw_tp: task storage wants typed task pointers. */
SEC("tp_btf/sched_switch")
int BPF_PROG(xp_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();
	struct sampler_event *e;
	struct offcpu_state *st;
	struct xp_switch *sw;
	__u64 dur;

	/* switch-out: prev is current, so its user stack is readable */
	if (prev->pid && tracked(prev->tgid)) {
		st = bpf_task_storage_get(&offcpu, prev, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
		if (st) {
			st->ts = now;
			st->cpu = bpf_get_smp_processor_id();
			st->state = preempt ? 0 : prev_state;
			read_stacks(ctx, &st->stack, st->ips, true, SAMPLER_LOSS_SWITCH_STACK);
		} else {
			count_loss(SAMPLER_LOSS_SWITCH_STATE);
		}
	}
	/* switch-in: close the interval next left open */
	if (!next->pid)
		return 0;
	st = bpf_task_storage_get(&offcpu, next, NULL, 0);
	if (!st || !st->ts)
		return 0;
	dur = now - st->ts;
	if (dur < offcpu_min_ns) {
		st->ts = 0;
		return 0;
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		st->ts = 0;
		count_loss(SAMPLER_LOSS_SWITCH);
		return 0;
	}
	e->type = XP_REC_SWITCH;
	e->entry_ret = 0;
	sw = &e->u.sw;
	sw->ts = st->ts;
	sw->duration_ns = dur;
	sw->pid = next->tgid;
	sw->tid = next->pid;
	sw->cpu = st->cpu;
	sw->prev_state = st->state;
	sw->stack = st->stack;
	bpf_probe_read_kernel(e->tail.ips, sizeof(e->tail.ips), st->ips);
	st->ts = 0;
	bpf_ringbuf_submit(e, 0);
	return 0;
}
