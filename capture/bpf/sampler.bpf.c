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
 * Dwarf mode (a *_copy size set): the event is built in a per-CPU scratch
 * slot with a copy of the user stack from sp (x86-64 only) and sent with
 * its used length; the fp IPs are kept too.
 * Privileged tasks (see privileged()) leave no sample, launch or off-CPU
 * record: they are counted as lost for reason "privileged" instead. Under
 * sudo xp_fork and xp_exec also keep a verdict per process (`verdicts`),
 * by which user space drops the side-band records of others' processes,
 * and xp_exec sends no exec of a task whose real ids are another's.
 * No vmlinux.h: the kernel structs read are declared below with
 * preserve_access_index, so libbpf relocates them against the running
 * kernel's BTF (CO-RE). */
#include <stdbool.h>
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "capture/bpf/sampler.h"

char LICENSE[] SEC("license") = "GPL";

struct signal_struct {
	struct { int counter; } live;   /* threads of the group not yet exiting */
} __attribute__((preserve_access_index));

typedef struct { unsigned int val; } kuid_t___xp;
typedef struct { unsigned int val; } kgid_t___xp;

struct cred {
	kuid_t___xp uid;
	kgid_t___xp gid;
	kuid_t___xp suid;
	kgid_t___xp sgid;
	kuid_t___xp euid;
	kgid_t___xp egid;
	kuid_t___xp fsuid;
	kgid_t___xp fsgid;
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
	int tgid;
	void *mm;                   /* NULL for kernel threads */
	struct signal_struct *signal;
	const struct cred *real_cred;   /* objective credentials, what ptrace checks */
} __attribute__((preserve_access_index));

/* mm->flags: one unsigned long before 6.18 (or so), a bitmap (mm_flags_t)
 * since; either way the dumpable mode is its two lowest bits. */
struct mm_struct___bitmap {
	struct { unsigned long __mm_flags[1]; } flags;
} __attribute__((preserve_access_index));

struct mm_struct___word {
	unsigned long flags;
} __attribute__((preserve_access_index));

#define XP_MMF_DUMPABLE_MASK 3ul    /* MMF_DUMPABLE_BITS = 2 */
#define XP_SUID_DUMP_USER 1         /* dumpable (and ptrace-able) as its user */


struct linux_binprm {
	const char *filename;
} __attribute__((preserve_access_index));

/* the kernel's x86-64 pt_regs (the ___xp flavor matches "pt_regs") */
struct pt_regs___xp {
	unsigned long bp;
	unsigned long sp;
	unsigned long ip;
} __attribute__((preserve_access_index));

const volatile bool filter_tgids = true;    /* false with -a */
const volatile __u32 period_ns = 0;
const volatile __u64 offcpu_min_ns = 0;     /* --off-cpu-min-us */
const volatile bool switch_kernel = true;   /* off-CPU kernel stacks (--off-cpu; not the default waits) */
const volatile __u64 wakeup_bytes = 1;      /* wake the drain thread past this fill */
/* dwarf mode: user stack bytes to copy, multiple of 8; 0: frame pointers only */
const volatile __u32 sample_copy = 0;       /* --call-graph, <= SAMPLER_MAX_COPY */
const volatile __u32 launch_copy = 0;       /* --launch-call-graph */
const volatile __u32 switch_copy = 0;       /* --call-graph with --off-cpu, <= SAMPLER_OFFCPU_MAX_COPY */
/* false only with --record-privileged (plain root) */
const volatile bool protect = true;
/* under sudo: only tasks entirely the invoking user's are recorded */
const volatile bool owner_only = false;
const volatile __u32 owner_uid = 0;
const volatile __u32 owner_gid = 0;
/* set by xpcap as it stops: no marker record after that, while the uprobe
 * is detached beside the end of the run (bpfsampler.c) */
volatile __u32 marker_off = 0;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SAMPLER_MAX_TGIDS);
	__type(key, __u32);
	__type(value, __u8);
} tgids SEC(".maps");

/* Under sudo (owner_only), per process: 1 once it was seen privileged
 * since recording began, 0 while it is the user's. User space drops the
 * side-band records (mappings, comm, fork, exit) of a process at 1, and
 * judges a process without a verdict (older than the recording) from
 * /proc. A new process takes its parent's verdict; an exec or a thread
 * that is privileged sets 1; nothing sets 1 back to 0, so the records of
 * a privileged process stay out when it later becomes the user's. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, SAMPLER_MAX_VERDICTS);
	__type(key, __u32);
	__type(value, __u8);
} verdicts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, SAMPLER_RINGBUF_BYTES);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SAMPLER_COUNTERS_N);
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

/* Dwarf mode scratch: ncpus * SAMPLER_SLOT_N slots (1 when unused); an
 * array, not a per-CPU array, whose values are limited to 32 KiB. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sampler_copy_event);
} scratch SEC(".maps");

/* Dwarf off-CPU: the stack copy taken at switch-out, per thread. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_copy);
} offcpu_copies SEC(".maps");

static __always_inline void count_loss(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&losses, &idx);

	if (v)
		*v += 1;
}

/* A wakeup per record costs the traced thread an irq_work and a context
 * switch of the drain thread, microseconds per CUDA launch; the drain
 * thread polls every POLL_MS anyway, so wake it only when the ring fills. */
static __always_inline __u64 wakeup_flag(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ?
	       BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP;
}

static __always_inline bool tracked(__u32 tgid)
{
	if (!filter_tgids)
		return true;
	return bpf_map_lookup_elem(&tgids, &tgid) != NULL;
}

/* get_dumpable(mm), or -1 when this kernel's mm->flags is of a layout
 * not known here (the caller then fails closed). */
static __always_inline long mm_dumpable(void *mm)
{
	unsigned long flags;

	if (bpf_core_field_exists(struct mm_struct___bitmap, flags) &&
	    bpf_core_field_size(struct mm_struct___bitmap, flags) >= sizeof(flags))
		flags = BPF_CORE_READ((struct mm_struct___bitmap *)mm, flags.__mm_flags[0]);
	else if (bpf_core_field_exists(struct mm_struct___word, flags) &&
		 bpf_core_field_size(struct mm_struct___word, flags) == sizeof(flags))
		flags = BPF_CORE_READ((struct mm_struct___word *)mm, flags);
	else
		return -1;
	return (long)(flags & XP_MMF_DUMPABLE_MASK);
}

/* The kernel's own rule for who may read a task's memory (ptrace,
 * /proc/PID/mem): a task whose credentials are mixed (setuid, setgid
 * binaries; a daemon between privilege levels) or whose mm is not
 * dumpable as its user (it gained credentials or file capabilities at
 * exec, or asked not to be dumped) is not the user's to copy. Under sudo
 * (owner_only) neither is a task of anyone else, kernel threads included. */
static __always_inline bool privileged(struct task_struct *task)
{
	const struct cred *c;
	__u32 uid, gid;
	void *mm;

	if (!protect)
		return false;
	c = BPF_CORE_READ(task, real_cred);
	if (!c)
		return true;
	uid = BPF_CORE_READ(c, uid.val);
	gid = BPF_CORE_READ(c, gid.val);
	if (owner_only && (uid != owner_uid || gid != owner_gid))
		return true;
	if (BPF_CORE_READ(c, euid.val) != uid || BPF_CORE_READ(c, suid.val) != uid ||
	    BPF_CORE_READ(c, fsuid.val) != uid || BPF_CORE_READ(c, egid.val) != gid ||
	    BPF_CORE_READ(c, sgid.val) != gid || BPF_CORE_READ(c, fsgid.val) != gid)
		return true;
	mm = BPF_CORE_READ(task, mm);
	return mm && mm_dumpable(mm) != XP_SUID_DUMP_USER;
}

static __always_inline bool current_privileged(void)
{
	return privileged((struct task_struct *)bpf_get_current_task());
}

/* fresh: a new process, whose verdict replaces any of a pid reused */
static __always_inline void note_verdict(__u32 tgid, bool denied, bool fresh)
{
	__u8 v = denied;

	if (owner_only && (fresh || denied))
		bpf_map_update_elem(&verdicts, &tgid, &v, BPF_ANY);
}

/* Under sudo: the task's real ids are the invoking user's (its own exec
 * of a setuid program is the user's to see, another user's is not). */
static __always_inline bool own_real_ids(void)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	const struct cred *c = BPF_CORE_READ(task, real_cred);

	return c && BPF_CORE_READ(c, uid.val) == owner_uid &&
	       BPF_CORE_READ(c, gid.val) == owner_gid;
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

static __always_inline struct sampler_copy_event *scratch_slot(__u32 kind)
{
	__u32 key = bpf_get_smp_processor_id() * SAMPLER_SLOT_N + kind;

	return bpf_map_lookup_elem(&scratch, &key);
}

/* v through the scratch slot (map memory): the verifier keeps only the
 * bounds the caller masks it to, not the value. */
static __always_inline __u32 forget(struct sampler_copy_event *c, __u32 v)
{
	*(volatile __u32 *)&c->regs.size = v;
	return *(volatile __u32 *)&c->regs.size;
}

/* Copies up to want bytes of user stack from c->regs.sp into c->data (a
 * scratch buffer of SAMPLER_COPY_BUF bytes): all at once; when that faults
 * (the stack ends sooner), the largest halving of want that reads, then
 * smaller and smaller chunks after it. Returns the bytes read. The masks
 * only tell the verifier what the loop already guarantees. got, a sum of
 * any of the halvings, is forgotten at each step: kept exact, the verifier
 * walked each sum apart (0.12-0.2 s of CPU, most of xpcap's start-up, for
 * the launch uprobe's 8 KiB copy; the buffer holds 0xffff + 0x7fff). */
static __always_inline __u32 read_user_stack(struct sampler_copy_event *c, __u32 want)
{
	__u8 *dst = c->data;
	__u64 sp = c->regs.sp;
	__u32 got = 0, n = want;
	int i;

	if (!want || !bpf_probe_read_user(dst, want & 0xffff, (void *)sp))
		return want;
	for (i = 0; i < 14 && !got; i++) {
		n = (n / 2) & ~7u;
		if (n < 8)
			return 0;
		if (!bpf_probe_read_user(dst, n & 0xffff, (void *)sp))
			got = n;
	}
	for (i = 0; i < 14; i++) {
		n = (n / 2) & ~7u;
		if (n < 8)
			break;
		got = forget(c, got) & 0xffff;
		if (!bpf_probe_read_user(dst + got, n & 0x7fff, (void *)(sp + got)))
			got += n;
	}
	return forget(c, got);
}

/* The user registers of the current task (where it entered the kernel). */
static __always_inline void current_user_regs(struct xp_user_regs_copy *r)
{
	struct pt_regs___xp *regs = (void *)bpf_task_pt_regs(bpf_get_current_task_btf());

	r->ip = BPF_CORE_READ(regs, ip);
	r->sp = BPF_CORE_READ(regs, sp);
	r->bp = BPF_CORE_READ(regs, bp);
}

/* Fills c->regs.size and the copy (regs already set), flags the stack,
 * sends the event with its used length. */
static __always_inline void send_with_copy(struct sampler_copy_event *c, struct xp_stack *st,
					   __u32 want, __u32 loss)
{
	__u32 got = read_user_stack(c, want);

	c->regs.size = got;
	c->regs.key = 0;
	st->flags |= XP_STACK_HAS_USER_COPY;
	if (bpf_ringbuf_output(&events, c, sizeof(c->e) + sizeof(c->regs) + (got & 0xffff), wakeup_flag()))
		count_loss(loss);
}

static __always_inline bool has_user(void)
{
	return BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), mm) != NULL;
}

SEC("perf_event")
int xp_sample_cpu(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct sampler_copy_event *c = NULL;
	struct sampler_event *e;
	struct xp_sample *s;

	if (!tracked(id >> 32))
		return 0;
	count_loss(SAMPLER_SEEN_SAMPLE);
	if (current_privileged()) {
		count_loss(SAMPLER_LOSS_PRIV_SAMPLE);
		return 0;
	}
	if (sample_copy) {
		c = scratch_slot(SAMPLER_SLOT_SAMPLE);
		e = c ? &c->e : NULL;
	} else {
		e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	}
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
	e->entry_ret = 0;
	if (c && has_user()) {
		current_user_regs(&c->regs);
		send_with_copy(c, &s->stack, sample_copy, SAMPLER_LOSS_SAMPLE);
	} else if (c) {
		if (bpf_ringbuf_output(&events, e, sizeof(*e), wakeup_flag()))
			count_loss(SAMPLER_LOSS_SAMPLE);
	} else {
		bpf_ringbuf_submit(e, wakeup_flag());
	}
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

	if (owner_only)
		note_verdict(ctgid, privileged(parent), ptgid != ctgid);
	if (ptgid == ctgid || !filter_tgids)
		return 0;
	if (bpf_map_lookup_elem(&tgids, &ptgid))
		bpf_map_update_elem(&tgids, &ctgid, &one, BPF_ANY);
	return 0;
}

/* sched_process_exit(struct task_struct *p, ...): runs in the exiting task,
 * after do_exit counted it out of signal->live. The process is gone only
 * when its last thread exits: a main thread that calls pthread_exit first
 * leaves the others running, and they must stay tracked. */
SEC("raw_tp/sched_process_exit")
int xp_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct task_struct *task = (void *)bpf_get_current_task();
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;

	if (filter_tgids && BPF_CORE_READ(task, signal, live.counter) == 0)
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

	if (owner_only)
		note_verdict(id >> 32, current_privileged(), false);
	if (!tracked(id >> 32))
		return 0;
	if (owner_only && !own_real_ids()) {
		count_loss(SAMPLER_LOSS_PRIV_EXEC);
		return 0;
	}
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
	bpf_ringbuf_submit(e, wakeup_flag());
	return 0;
}

/* xpcap_correlation_marker(uint64_t correlation_id, uint32_t cbid) */
SEC("uprobe")
int xp_marker(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct sampler_copy_event *c = NULL;
	struct sampler_event *e;
	struct xp_launch *l;

	if (marker_off || !tracked(id >> 32))
		return 0;
	if (current_privileged()) {
		count_loss(SAMPLER_LOSS_PRIV_LAUNCH);
		return 0;
	}
	if (launch_copy) {
		c = scratch_slot(SAMPLER_SLOT_LAUNCH);
		e = c ? &c->e : NULL;
	} else {
		e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	}
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
	read_stacks(ctx, &l->stack, e->tail.ips, false, SAMPLER_LOSS_LAUNCH_STACK);
	e->entry_ret = 0;
#ifdef __TARGET_ARCH_x86
	bpf_probe_read_user(&e->entry_ret, sizeof(e->entry_ret), (void *)PT_REGS_SP(ctx));
	if (c) {
		/* the probe's own registers: at the marker's first instruction */
		c->regs.ip = PT_REGS_IP(ctx);
		c->regs.sp = PT_REGS_SP(ctx);
		c->regs.bp = PT_REGS_FP(ctx);
		send_with_copy(c, &l->stack, launch_copy, SAMPLER_LOSS_LAUNCH);
		return 0;
	}
#endif
	if (c) {
		if (bpf_ringbuf_output(&events, e, sizeof(*e), wakeup_flag()))
			count_loss(SAMPLER_LOSS_LAUNCH);
	} else {
		bpf_ringbuf_submit(e, wakeup_flag());
	}
	return 0;
}

/* Switch-out: prev is current, so its user stack is readable; a privileged
 * thread leaves only the time, to count the interval lost. */
static __always_inline void switch_out(void *ctx, struct task_struct *prev, bool preempt,
				       unsigned int prev_state, __u64 now)
{
	struct sampler_copy_event *c;
	struct offcpu_copy *cp;
	struct offcpu_state *st;
	bool priv;
	__u32 got;

	priv = privileged(prev);
	st = bpf_task_storage_get(&offcpu, prev, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!st) {
		count_loss(SAMPLER_LOSS_SWITCH_STATE);
		return;
	}
	/* an interval still open was never closed: switch_in found no slot,
	 * the task storage busy on its CPU (a task's storage being freed by a
	 * preempted thread) */
	if (st->ts)
		count_loss(SAMPLER_LOSS_SWITCH_STATE);
	st->ts = now;
	st->cpu = bpf_get_smp_processor_id();
	st->state = preempt ? 0 : prev_state;
	st->privileged = priv;
	if (priv)
		return;
	read_stacks(ctx, &st->stack, st->ips, switch_kernel, SAMPLER_LOSS_SWITCH_STACK);
	if (!switch_copy || !prev->mm)
		return;
	/* read into the scratch slot (the bounded chunked read wants its
	 * room), keep what was read with the thread */
	c = scratch_slot(SAMPLER_SLOT_SWITCH);
	cp = bpf_task_storage_get(&offcpu_copies, prev, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!c || !cp) {
		count_loss(SAMPLER_LOSS_COPY_STATE);
		return;
	}
	current_user_regs(&cp->regs);
	c->regs.sp = cp->regs.sp;
	got = read_user_stack(c, switch_copy);
	if (got > SAMPLER_OFFCPU_MAX_COPY)
		got = SAMPLER_OFFCPU_MAX_COPY;
	cp->regs.size = got;
	cp->regs.key = 0;
	bpf_probe_read_kernel(cp->data, got, c->data);
	st->stack.flags |= XP_STACK_HAS_USER_COPY;
}

/* Sends the switch record of an interval (with its stack copy, if any). */
static __always_inline void send_switch(struct sampler_event *e, struct sampler_copy_event *c,
					struct offcpu_copy *cp)
{
	__u32 got;

	if (!c || !cp) {
		bpf_ringbuf_submit(e, wakeup_flag());
		return;
	}
	c->regs = cp->regs;
	got = cp->regs.size;
	if (got > SAMPLER_OFFCPU_MAX_COPY)
		got = SAMPLER_OFFCPU_MAX_COPY;
	c->regs.size = got;
	bpf_probe_read_kernel(c->data, got, cp->data);
	if (bpf_ringbuf_output(&events, c, sizeof(c->e) + sizeof(c->regs) + got, wakeup_flag()))
		count_loss(SAMPLER_LOSS_SWITCH);
}

/* Switch-in: closes the interval next left open. */
static __always_inline void switch_in(struct task_struct *next, __u64 now)
{
	struct sampler_copy_event *c = NULL;
	struct offcpu_copy *cp = NULL;
	struct sampler_event *e;
	struct offcpu_state *st;
	struct xp_switch *sw;
	__u64 dur;

	st = bpf_task_storage_get(&offcpu, next, NULL, 0);
	if (!st || !st->ts)     /* NULL: not ours, or the storage busy (switch_out counts it) */
		return;
	dur = now - st->ts;
	if (dur < offcpu_min_ns) {
		st->ts = 0;
		return;
	}
	if (st->privileged) {
		st->ts = 0;
		count_loss(SAMPLER_LOSS_PRIV_SWITCH);
		return;
	}
	if (st->stack.flags & XP_STACK_HAS_USER_COPY) {
		c = scratch_slot(SAMPLER_SLOT_SWITCH);
		cp = bpf_task_storage_get(&offcpu_copies, next, NULL, 0);
		e = c && cp ? &c->e : NULL;
	} else {
		e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	}
	if (!e) {
		st->ts = 0;
		count_loss(SAMPLER_LOSS_SWITCH);
		return;
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
	send_switch(e, c, cp);
}

/* sched_switch(bool preempt, struct task_struct *prev, struct task_struct *next,
 *              unsigned int prev_state): runs in prev, just before the switch.
 * tp_btf rather than raw_tp: task storage wants typed task pointers. */
SEC("tp_btf/sched_switch")
int BPF_PROG(xp_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u64 now = bpf_ktime_get_ns();

	if (prev->pid && tracked(prev->tgid))
		switch_out(ctx, prev, preempt, prev_state, now);
	if (next->pid)
		switch_in(next, now);
	return 0;
}
