/* drain.c - see drain.h. One thread, one writer: no locks on the write path.
 * Without a BPF sampler (a normal user's run) the samples come from the
 * perf rings too, and perftrack.h adds what the BPF sampler would have
 * written beside them: thread names in samples, exec records. */
#include "capture/drain.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "capture/bpfsampler.h"
#include "capture/dumpable.h"
#include "capture/perfconv.h"
#include "capture/perfsampler.h"
#include "capture/perfswitch.h"
#include "capture/perftrack.h"
#include "capture/procrank.h"
#include "capture/buildid.h"
#include "capture/ipset.h"
#include "capture/mapfile.h"
#include "src/marker.h"
#include "src/runfile.h"
#include "capture/sideband.h"
#include "capture/taskowner.h"

#define FLUSH_INTERVAL_NS 1000000000ull
#define POLL_MS 100
#define POLL_MS_PERF 20             /* perf samples: how stale a dumpable look may be */
#define MAX_PIDS 4096
#define MAX_OPEN 256                /* processes with a capture window open at once */
/* distinct kernel IPs kept for the kallsyms copy (2 MiB of map); past it
 * the copy holds every text symbol */
#define MAX_KERNEL_IPS 65536

struct drain {
	struct xp_writer *w;        /* borrowed */
	struct xp_sampler *s;      /* borrowed */
	struct sideband *sb;        /* borrowed, may be NULL */
	struct ring_buffer *rb;     /* the BPF sampler's, NULL without one */
	const struct perf_event_attr *sample_attr;   /* perf samples' attr, or NULL */
	struct perftrack *track;    /* without a BPF sampler */
	struct dumpable *dump;      /* and what of its processes stays out */
	struct perfswitch *switches; /* a normal user's waits (perfswitch.h), or NULL */
	uint64_t stack_err, stack_err_reported;      /* perf samples without a user stack */
	int epfd;
	pthread_t thread;
	int started;
	int stop;                   /* set by drain_stop, read atomically */
	int fail_fd;                /* eventfd: readable once writing failed */
	int write_err;              /* that first write error, negative errno */
	uint64_t last_flush;
	/* under sudo where the user may not see kernel addresses: added to
	 * each kernel IP (kernaddr.h), or the kernel IPs left out */
	uint64_t kernel_delta;
	bool kernel_dropped;
	/* the kernel IPs written (as sampled, before the delta): what the
	 * run's kallsyms must name (kernaddr.h) */
	struct ipset kernel_ips;
	uint64_t bpf_reported[SAMPLER_LOSS_N];
	struct xp_record_counts counts;
	/* records in the writer's buffer, not yet on disk: written once a
	 * flush succeeds, lost (XP_LOST_WRITE) if it fails */
	uint64_t pending[XP_RECORD_NTYPES];
	uint64_t flushed;           /* xp_writer_flushed_bytes at the last look */
	/* under sudo: side-band records of others' processes dropped since
	 * the last loss report, per kind (mmap, comm, fork, exit) */
	uint64_t priv_dropped[XP_RECORD_NTYPES];
	pid_t pids[MAX_PIDS];
	unsigned npids;
	pid_t last_pid;
	/* a sample or launch record assembled from the fixed-size BPF event */
	unsigned char scratch[sizeof(struct xp_sample) + (2 * XP_MAX_STACK_DEPTH + 1) * 8];
	char path[4096];            /* a path with its NUL, for mmap and exec */
	struct perfsample ps;       /* a perf sample being converted */
	unsigned char copy[sizeof(struct xp_user_regs_copy) + XP_USER_COPY_MAX];
	uint64_t window_from;       /* --delay: stack records before this ns are dropped */
	bool range;                 /* --capture-range: stack records only inside a window */
	pid_t open_pids[MAX_OPEN];  /* processes whose window is open now */
	unsigned nopen;
	struct procranks ranked;    /* exec'd processes with a launcher's rank */
	drain_cuda_fn on_cuda;      /* called once, at the first CUDA library mapped */
	void *on_cuda_ctx;
	int cuda_seen;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void note_pid(struct drain *d, pid_t pid)
{
	if (pid == d->last_pid || pid <= 0)
		return;
	d->last_pid = pid;
	for (unsigned i = 0; i < d->npids; i++)
		if (d->pids[i] == pid)
			return;
	if (d->npids < MAX_PIDS)
		d->pids[d->npids++] = pid;
}

/* The first write error (a full disk) wakes the main thread, which stops
 * recording; later records are only counted as lost. */
static void note_write_error(struct drain *d, int err)
{
	uint64_t one = 1;

	if (!err || err == -EMSGSIZE || d->write_err)
		return;
	d->write_err = err;
	if (d->fail_fd >= 0 && write(d->fail_fd, &one, sizeof(one)) < 0)
		return;
}

/* After the writer flushed (or failed to): settle the pending counts. */
static void settle(struct drain *d, int err)
{
	uint64_t now = xp_writer_flushed_bytes(d->w);

	if (!err && now == d->flushed)
		return;         /* nothing left the buffer */
	for (unsigned k = 0; k < XP_RECORD_NTYPES; k++) {
		if (err)
			d->counts.lost[k][XP_LOST_WRITE] += d->pending[k];
		else
			d->counts.written[k] += d->pending[k];
		d->pending[k] = 0;
	}
	d->flushed = now;
	note_write_error(d, err);
}

int drain_append(struct drain *d, uint32_t type, const void *fixed, size_t flen,
		 const void *tail, size_t tlen)
{
	int err = xp_writer_append(d->w, type, fixed, flen, tail, tlen);

	/* an append that flushed sent the records before this one */
	settle(d, err == -EMSGSIZE ? 0 : err);
	if (!err)
		d->pending[xp_record_type_slot(type)]++;
	else
		d->counts.lost[xp_record_type_slot(type)][XP_LOST_WRITE]++;
	return err;
}

static void flush(struct drain *d)
{
	settle(d, xp_writer_flush(d->w));
}

/* libcuda.so* or libcudart.so*: the program uses CUDA */
static bool is_cuda_library(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libcuda.so", 10) || !strncmp(base, "libcudart.so", 12);
}

int drain_append_path(struct drain *d, uint32_t type, const void *fixed, size_t flen,
		      const char *path, size_t path_len)
{
	/* the format wants the path NUL-terminated inside the record */
	if (path_len >= sizeof(d->path))
		path_len = sizeof(d->path) - 1;
	memcpy(d->path, path, path_len);
	d->path[path_len] = '\0';
	if (type == XP_REC_MMAP && !d->cuda_seen && is_cuda_library(d->path)) {
		d->cuda_seen = 1;
		if (d->on_cuda)
			d->on_cuda(d->on_cuda_ctx, (pid_t)((const struct xp_mmap *)fixed)->pid, d->path);
	}
	return drain_append(d, type, fixed, flen, d->path, path_len + 1);
}

void drain_watch_cuda(struct drain *d, drain_cuda_fn fn, void *ctx)
{
	d->on_cuda = fn;
	d->on_cuda_ctx = ctx;
}

void drain_set_window(struct drain *d, uint64_t from_ns)
{
	d->window_from = from_ns;
}

void drain_set_range(struct drain *d)
{
	d->range = true;
}

/* A process's window opened (the library called the marker) or closed,
 * or the process exited. */
static void window_mark(struct drain *d, pid_t pid, bool open)
{
	unsigned i;

	for (i = 0; i < d->nopen && d->open_pids[i] != pid; i++)
		;
	if (open && i == d->nopen && d->nopen < MAX_OPEN)
		d->open_pids[d->nopen++] = pid;
	else if (!open && i < d->nopen)
		d->open_pids[i] = d->open_pids[--d->nopen];
}

/* What the window keeps: 1 to write the record, 0 to drop it. */
static int window_keeps(struct drain *d, const struct sampler_event *e)
{
	if (e->type != XP_REC_SAMPLE && e->type != XP_REC_LAUNCH && e->type != XP_REC_SWITCH)
		return 1;
	if (e->type == XP_REC_LAUNCH && !e->u.launch.correlation_id &&
	    (e->u.launch.cbid == XP_CBID_WINDOW_OPEN || e->u.launch.cbid == XP_CBID_WINDOW_CLOSE)) {
		window_mark(d, (pid_t)e->u.launch.pid, e->u.launch.cbid == XP_CBID_WINDOW_OPEN);
		return 0;
	}
	/* --delay: nothing before it ends (each record begins with its ts) */
	if (d->window_from && e->u.sample.ts < d->window_from)
		return 0;
	return !d->range || d->nopen;
}

static void write_lost(struct drain *d, uint32_t kind, uint32_t reason, uint64_t count)
{
	struct xp_lost l = { .ts = now_ns(), .kind = kind, .reason = reason, .count = count };

	d->counts.lost[xp_record_type_slot(kind)][reason] += count;
	drain_append(d, XP_REC_LOST, &l, sizeof(l), NULL, 0);
}

/* Dwarf mode: the regs and stack bytes after the event, if the stack says
 * so and the event is long enough for them; else NULL. */
static const struct xp_user_regs_copy *event_copy(const struct sampler_event *e,
						  size_t size, const struct xp_stack *st)
{
	const struct sampler_copy_event *c = (const void *)e;

	if (!(st->flags & XP_STACK_HAS_USER_COPY))
		return NULL;
	if (size < sizeof(*e) + sizeof(c->regs))
		return NULL;
	if (c->regs.size > XP_USER_COPY_MAX || c->regs.size % 8 ||
	    size < sizeof(*e) + sizeof(c->regs) + c->regs.size)
		return NULL;
	return &c->regs;
}

/* Stack records: fixed part, then kernel IPs, then user IPs, contiguous,
 * then (dwarf mode) the registers and the user stack copy. */
static void write_stack_record(struct drain *d, uint32_t type, const void *fixed,
			       size_t flen, const struct xp_stack *st,
			       const struct sampler_event *e, size_t size)
{
	const struct xp_user_regs_copy *copy = event_copy(e, size, st);
	struct xp_stack *out;
	size_t kd = st->kernel_depth <= XP_MAX_STACK_DEPTH ? st->kernel_depth : 0;
	size_t ud = st->user_depth <= XP_MAX_STACK_DEPTH ? st->user_depth : 0;
	const uint64_t *user = &e->tail.ips[XP_MAX_STACK_DEPTH];
	unsigned char *p = d->scratch;

	if (d->kernel_dropped)
		kd = 0;
	memcpy(p, fixed, flen);
	memcpy(p + flen, e->tail.ips, kd * 8);
	ipset_add(&d->kernel_ips, e->tail.ips, kd);   /* read at the end */
	for (size_t i = 0; d->kernel_delta && i < kd; i++) {
		uint64_t ip;

		memcpy(&ip, p + flen + i * 8, 8);
		ip += d->kernel_delta;
		memcpy(p + flen + i * 8, &ip, 8);
	}
	if (type == XP_REC_LAUNCH && e->entry_ret && ud >= 1) {
		/* leaf (the marker), its caller from the stack, then the walk */
		size_t rest = ud - 1 < XP_MAX_STACK_DEPTH - 2 ? ud - 1 : XP_MAX_STACK_DEPTH - 2;

		memcpy(p + flen + kd * 8, user, 8);
		memcpy(p + flen + kd * 8 + 8, &e->entry_ret, 8);
		memcpy(p + flen + kd * 8 + 16, user + 1, rest * 8);
		ud = rest + 2;
	} else {
		memcpy(p + flen + kd * 8, user, ud * 8);
	}
	/* the depths written must match the IPs that follow */
	out = (struct xp_stack *)(p + flen - sizeof(*st));
	out->kernel_depth = (uint16_t)kd;
	out->user_depth = (uint16_t)ud;
	if (!copy)
		out->flags &= ~XP_STACK_HAS_USER_COPY;
	drain_append(d, type, p, flen + (kd + ud) * 8, copy,
		     copy ? sizeof(*copy) + copy->size : 0);
}

/* An exec'd process that may be recorded: its rank, where its launcher
 * set one in its environment (a CPU-only rank records none of its own). */
static void note_rank(struct drain *d, pid_t pid)
{
	if (drain_task_allowed(d, pid))
		procranks_note(&d->ranked, pid);
}

static int on_bpf_event(void *ctx, void *data, size_t size)
{
	const struct sampler_event *e = data;
	struct drain *d = ctx;

	if (size < sizeof(*e))
		return 0;
	if (!window_keeps(d, e))
		return 0;
	switch (e->type) {
	case XP_REC_SAMPLE:
		note_pid(d, (pid_t)e->u.sample.pid);
		write_stack_record(d, XP_REC_SAMPLE, &e->u.sample, sizeof(e->u.sample),
				   &e->u.sample.stack, e, size);
		break;
	case XP_REC_LAUNCH:
		note_pid(d, (pid_t)e->u.launch.pid);
		write_stack_record(d, XP_REC_LAUNCH, &e->u.launch, sizeof(e->u.launch),
				   &e->u.launch.stack, e, size);
		break;
	case XP_REC_SWITCH:
		note_pid(d, (pid_t)e->u.sw.pid);
		write_stack_record(d, XP_REC_SWITCH, &e->u.sw, sizeof(e->u.sw),
				   &e->u.sw.stack, e, size);
		break;
	case XP_REC_EXEC: {
		size_t n = e->u.exec.path_len < SAMPLER_PATH_MAX ? e->u.exec.path_len : 0;
		struct xp_exec x = e->u.exec;

		x.path_len = (uint16_t)n;
		note_pid(d, (pid_t)x.pid);
		drain_append_path(d, XP_REC_EXEC, &x, sizeof(x), e->tail.path, n);
		note_rank(d, (pid_t)x.pid);
		break;
	}
	default:
		break;
	}
	return 0;
}

/* The perf path runs as the user whose processes it samples: the kernel's
 * rule (taskowner.h) with xpcap's own ids. */
static int look_dumpable(void *ctx, pid_t pid)
{
	(void)ctx;
	return taskowner_is(pid, getuid(), getgid());
}

/* A thread of an attached process (-p) that has not changed its name
 * since: no COMM record says it; /proc does while it lives. */
static void proc_comm(pid_t pid, pid_t tid, char comm[XP_COMM_LEN])
{
	char path[64], name[XP_COMM_LEN + 1] = { 0 };
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(name, sizeof(name), f))
		name[strcspn(name, "\n")] = '\0';
	fclose(f);
	memcpy(comm, name, XP_COMM_LEN);    /* NUL padded: name was zeroed */
}

/* A perf sample: the same record the BPF sampler writes, without kernel
 * IPs; the copy (dwarf mode) after the IPs. */
static void on_perf_sample(struct drain *d, const void *rec, size_t len)
{
	struct perfsample *ps = &d->ps;
	size_t clen = 0;

	if (!d->sample_attr || !d->track ||
	    perfsample_convert(rec, len, d->sample_attr, (uint32_t)sideband_cpu(d->sb), ps)) {
		write_lost(d, XP_REC_SAMPLE, XP_LOST_PERF_LOST, 1);
		return;
	}
	/* --delay: no samples before it ends */
	if (d->window_from && ps->rec.s.ts < d->window_from)
		return;
	if (d->dump && !dumpable_keeps(d->dump, (pid_t)ps->rec.s.pid, ps->rec.s.ts)) {
		drain_drop_privileged(d, XP_REC_SAMPLE, 1);
		return;
	}
	perftrack_comm(d->track, ps->rec.s.tid, ps->rec.s.comm);
	if (!ps->rec.s.comm[0]) {
		proc_comm((pid_t)ps->rec.s.pid, (pid_t)ps->rec.s.tid, ps->rec.s.comm);
		if (ps->rec.s.comm[0])
			perftrack_set_comm(d->track, ps->rec.s.tid, ps->rec.s.comm);
	}
	note_pid(d, (pid_t)ps->rec.s.pid);
	if (ps->rec.s.stack.flags & XP_STACK_USER_ERR)
		d->stack_err++;
	if (ps->data) {
		memcpy(d->copy, &ps->regs, sizeof(ps->regs));
		memcpy(d->copy + sizeof(ps->regs), ps->data, ps->regs.size);
		clen = sizeof(ps->regs) + ps->regs.size;
	}
	drain_append(d, XP_REC_SAMPLE, &ps->rec, ps->rec_len, clen ? d->copy : NULL, clen);
}

static void write_exec(struct drain *d, const struct xp_exec *x, const char *path)
{
	struct xp_exec e = *x;

	if (e.path_len >= sizeof(d->path))
		e.path_len = (uint16_t)(sizeof(d->path) - 1);
	drain_append_path(d, XP_REC_EXEC, &e, sizeof(e), path, e.path_len);
	note_rank(d, (pid_t)e.pid);
}

bool drain_task_allowed(struct drain *d, pid_t pid)
{
	uint32_t uid, gid;
	int v;

	if (!d->s)
		return !d->dump || dumpable_allowed(d->dump, pid);
	if (!xp_sampler__owner_only(d->s, &uid, &gid))
		return true;
	v = xp_sampler__verdict(d->s, pid);
	if (v >= 0)
		return v == 0;
	/* older than the recording: judged now, once; a process already
	 * gone is not recorded */
	xp_sampler__set_verdict(d->s, pid, taskowner_is(pid, uid, gid) != 1);
	return xp_sampler__verdict(d->s, pid) == 0;
}

void drain_drop_privileged(struct drain *d, uint32_t type, uint64_t count)
{
	d->priv_dropped[xp_record_type_slot(type)] += count;
}

/* The process a side-band record is of. */
static pid_t perf_record_pid(const struct perfconv_rec *r)
{
	switch (r->type) {
	case XP_REC_MMAP:
		return (pid_t)r->u.mmap.pid;
	case XP_REC_COMM:
		return (pid_t)r->u.comm.pid;
	default:
		return (pid_t)r->u.task.pid;    /* fork (the child), exit */
	}
}

/* Without a BPF sampler: a mapping of a process not dumpable stays out
 * (its /proc maps are closed to the user too); its task records are kept,
 * as /proc shows them to anyone. Execs and forks start a new image. */
static bool perf_dump_keeps(struct drain *d, const struct perfconv_rec *r)
{
	switch (r->type) {
	case XP_REC_MMAP:
		return dumpable_keeps(d->dump, (pid_t)r->u.mmap.pid, r->u.mmap.ts);
	case XP_REC_COMM:
		if (r->u.comm.flags & XP_COMM_EXEC)
			dumpable_exec(d->dump, (pid_t)r->u.comm.pid, r->u.comm.ts);
		return true;
	case XP_REC_FORK:
		if (r->u.task.pid == r->u.task.tid)      /* a process, not a thread */
			dumpable_fork(d->dump, (pid_t)r->u.task.pid, (pid_t)r->u.task.ppid,
				      r->u.task.ts);
		return true;
	default:
		return true;
	}
}

/* A normal user's off-CPU interval (perfswitch.h), of a task we keep. */
static void on_perf_switch(void *ctx, const struct xp_switch *w)
{
	struct drain *d = ctx;

	if (d->window_from && w->ts < d->window_from)
		return;
	/* the perf path keeps nothing of a task that is not dumpable, as for
	 * its samples (dumpable.h) */
	if (d->dump ? !dumpable_keeps(d->dump, (pid_t)w->pid, w->ts) :
		      !drain_task_allowed(d, (pid_t)w->pid)) {
		drain_drop_privileged(d, XP_REC_SWITCH, 1);
		return;
	}
	drain_append(d, XP_REC_SWITCH, w, sizeof(*w), NULL, 0);
}

int drain_take_switches(struct drain *d, uint64_t min_ns)
{
	d->switches = perfswitch_new(min_ns);
	return d->switches ? 0 : -ENOMEM;
}

/* After a pass over the perf rings: the switch records paired. */
static void pair_switches(struct drain *d, bool final)
{
	if (d->switches)
		perfswitch_flush(d->switches, final, on_perf_switch, d);
}

static void on_perf_record(void *ctx, const void *rec, size_t len)
{
	struct perfconv_rec r;
	struct drain *d = ctx;
	struct xp_exec x;
	char path[4096];
	int sw;

	if (len >= sizeof(struct perf_event_header) &&
	    ((const struct perf_event_header *)rec)->type == PERF_RECORD_SAMPLE) {
		on_perf_sample(d, rec, len);
		return;
	}
	if (d->switches && (sw = perfswitch_take(d->switches, rec, len,
						 (uint32_t)sideband_cpu(d->sb))) != 0) {
		if (sw < 0)
			write_lost(d, XP_REC_SWITCH, sw == -ENOMEM ? XP_LOST_NO_MEMORY :
				   XP_LOST_PERF_LOST, 1);
		return;
	}
	if (perfconv_convert(rec, len, &r) || !r.type)
		return;
	if (d->track && perftrack_before(d->track, &r, &x))
		write_exec(d, &x, r.type == XP_REC_MMAP ? r.path : "");
	if (r.type == XP_REC_LOST) {
		d->counts.lost[0][XP_LOST_PERF_LOST] += r.u.lost.count;
		drain_append(d, XP_REC_LOST, &r.u, r.fixed_len, NULL, 0);
		return;
	}
	if (d->s ? !drain_task_allowed(d, perf_record_pid(&r)) :
		   d->dump && !perf_dump_keeps(d, &r)) {
		drain_drop_privileged(d, r.type, 1);
		return;
	}
	if (r.type == XP_REC_FORK)
		note_pid(d, (pid_t)r.u.task.pid);
	if (r.type == XP_REC_EXIT && d->nopen && r.u.task.pid == r.u.task.tid)
		window_mark(d, (pid_t)r.u.task.pid, false);
	if (r.needs_build_id && r.path_len < sizeof(path)) {
		struct mapfile_id id = { .pid = (pid_t)r.u.mmap.pid, .start = r.u.mmap.addr,
					 .end = r.u.mmap.addr + r.u.mmap.len,
					 .dev = makedev(r.maj, r.min), .ino = r.ino, .path = path };
		size_t n = 0;

		memcpy(path, r.path, r.path_len);
		path[r.path_len] = '\0';
		if (buildid_read_mapping(&id, r.u.mmap.build_id, XP_BUILD_ID_MAX, &n) == 0) {
			r.u.mmap.build_id_size = (uint8_t)n;
			r.u.mmap.flags |= XP_MMAP_HAS_BUILD_ID;
		}
	}
	if (r.type == XP_REC_MMAP) {
		if (r.path_len >= sizeof(d->path))
			r.u.mmap.path_len = (uint16_t)(sizeof(d->path) - 1);
		drain_append_path(d, r.type, &r.u, r.fixed_len, r.path, r.u.mmap.path_len);
	} else {
		drain_append(d, r.type, &r.u, r.fixed_len, NULL, 0);
	}
}

static void report_losses(struct drain *d)
{
	static const uint32_t kinds[SAMPLER_LOSS_N][2] = {
		[SAMPLER_LOSS_SAMPLE] = { XP_REC_SAMPLE, XP_LOST_RINGBUF_FULL },
		[SAMPLER_LOSS_LAUNCH] = { XP_REC_LAUNCH, XP_LOST_RINGBUF_FULL },
		[SAMPLER_LOSS_EXEC] = { XP_REC_EXEC, XP_LOST_RINGBUF_FULL },
		[SAMPLER_LOSS_STACK] = { XP_REC_SAMPLE, XP_LOST_STACK },
		[SAMPLER_LOSS_SWITCH] = { XP_REC_SWITCH, XP_LOST_RINGBUF_FULL },
		[SAMPLER_LOSS_SWITCH_STATE] = { XP_REC_SWITCH, XP_LOST_NO_MEMORY },
		[SAMPLER_LOSS_SWITCH_STACK] = { XP_REC_SWITCH, XP_LOST_STACK },
		[SAMPLER_LOSS_LAUNCH_STACK] = { XP_REC_LAUNCH, XP_LOST_STACK },
		[SAMPLER_LOSS_COPY_STATE] = { XP_REC_SWITCH, XP_LOST_NO_MEMORY },
		[SAMPLER_LOSS_PRIV_SAMPLE] = { XP_REC_SAMPLE, XP_LOST_PRIVILEGED },
		[SAMPLER_LOSS_PRIV_LAUNCH] = { XP_REC_LAUNCH, XP_LOST_PRIVILEGED },
		[SAMPLER_LOSS_PRIV_SWITCH] = { XP_REC_SWITCH, XP_LOST_PRIVILEGED },
		[SAMPLER_LOSS_PRIV_EXEC] = { XP_REC_EXEC, XP_LOST_PRIVILEGED },
	};
	uint64_t now[SAMPLER_LOSS_N];

	if (d->stack_err > d->stack_err_reported) {
		write_lost(d, XP_REC_SAMPLE, XP_LOST_STACK, d->stack_err - d->stack_err_reported);
		d->stack_err_reported = d->stack_err;
	}
	if (d->s && xp_sampler__seen(d->s, &d->counts.samples_seen) == 0)
		d->counts.has_seen = true;
	if (d->s && xp_sampler__losses(d->s, now) == 0) {
		for (int i = 0; i < SAMPLER_LOSS_N; i++) {
			if (now[i] > d->bpf_reported[i])
				write_lost(d, kinds[i][0], kinds[i][1], now[i] - d->bpf_reported[i]);
			d->bpf_reported[i] = now[i];
		}
	}
	for (uint32_t k = 0; k < XP_RECORD_NTYPES; k++) {
		if (d->priv_dropped[k])
			write_lost(d, k, XP_LOST_PRIVILEGED, d->priv_dropped[k]);
		d->priv_dropped[k] = 0;
	}
}

static void drain_once(struct drain *d, int timeout_ms)
{
	struct epoll_event ev[16];
	int n = epoll_wait(d->epfd, ev, 16, timeout_ms);

	/* a perf ring whose task is gone (children included) reports EPOLLHUP
	 * from then on: left in the set, it woke this thread in a loop until
	 * the end of the run (2500 times for `true`). Its ring is still read. */
	for (int i = 0; i < n; i++)
		if ((ev[i].events & (EPOLLHUP | EPOLLERR)) &&
		    !(d->rb && ev[i].data.fd == ring_buffer__epoll_fd(d->rb)))
			epoll_ctl(d->epfd, EPOLL_CTL_DEL, ev[i].data.fd, NULL);
	if (d->dump)
		dumpable_pass(d->dump);
	if (d->rb)
		ring_buffer__consume(d->rb);
	if (d->sb)
		sideband_read(d->sb, on_perf_record, d);
	pair_switches(d, false);
	if (now_ns() - d->last_flush >= FLUSH_INTERVAL_NS) {
		report_losses(d);
		flush(d);
		d->last_flush = now_ns();
	}
}

static void *drain_main(void *arg)
{
	struct drain *d = arg;

	while (!__atomic_load_n(&d->stop, __ATOMIC_ACQUIRE))
		drain_once(d, d->dump ? POLL_MS_PERF : POLL_MS);
	return NULL;
}

int drain_open(struct drain **out, struct xp_writer *w, struct xp_sampler *s,
	       struct sideband *sb, const struct perf_event_attr *sample_attr)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct drain *d;
	int fds[1024];
	unsigned n;
	int err = 0;

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	*out = d;
	d->w = w;
	d->s = s;
	d->sb = sb;
	d->sample_attr = sample_attr;
	ipset_init(&d->kernel_ips, MAX_KERNEL_IPS);
	d->last_flush = now_ns();
	d->flushed = xp_writer_flushed_bytes(w);
	d->fail_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->fail_fd < 0)
		return -errno;
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d->epfd < 0)
		return -errno;
	if (s) {
		d->rb = ring_buffer__new(xp_sampler__events_fd(s), on_bpf_event, d, NULL);
		if (!d->rb)
			return -errno ? -errno : -ENOMEM;
		ev.data.fd = ring_buffer__epoll_fd(d->rb);
		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev) < 0)
			return -errno;
	} else {
		d->track = perftrack_new();
		d->dump = dumpable_new(look_dumpable, NULL, now_ns);
		if (!d->track || !d->dump)
			return -ENOMEM;
	}
	n = sb ? sideband_fds(sb, fds, 1024) : 0;
	for (unsigned i = 0; i < n && !err; i++) {
		ev.data.fd = fds[i];
		if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, fds[i], &ev) < 0)
			err = -errno;
	}
	return err;
}

void drain_rebase_kernel(struct drain *d, uint64_t delta, bool drop)
{
	d->kernel_delta = delta;
	d->kernel_dropped = drop;
}

int drain_start(struct drain *d)
{
	int err = pthread_create(&d->thread, NULL, drain_main, d);

	if (err)
		return -err;
	d->started = 1;
	return 0;
}

void drain_stop(struct drain *d)
{
	if (!d || !d->started)
		return;
	__atomic_store_n(&d->stop, 1, __ATOMIC_RELEASE);
	pthread_join(d->thread, NULL);
	d->started = 0;
}

int drain_final(struct drain *d)
{
	struct xp_exec x;

	if (d->rb)
		ring_buffer__consume(d->rb);
	if (d->dump)
		dumpable_pass(d->dump);
	if (d->sb)
		sideband_read(d->sb, on_perf_record, d);
	pair_switches(d, true);
	while (d->track && perftrack_flush(d->track, &x))
		write_exec(d, &x, "");
	report_losses(d);
	flush(d);
	return d->write_err;
}

int drain_failed_fd(const struct drain *d)
{
	return d->fail_fd;
}

int drain_write_error(const struct drain *d)
{
	return d->write_err;
}

const struct xp_record_counts *drain_counts(const struct drain *d)
{
	return &d->counts;
}

int drain_kernel_ips(const struct drain *d, uint64_t **ips, size_t *n)
{
	return ipset_sorted(&d->kernel_ips, ips, n);
}

unsigned drain_pids(const struct drain *d, pid_t *out, unsigned max)
{
	unsigned n = d->npids < max ? d->npids : max;

	memcpy(out, d->pids, n * sizeof(*out));
	return n;
}

unsigned drain_ranks(const struct drain *d, const struct xp_gpu_rank **out)
{
	*out = d->ranked.v;
	return d->ranked.n;
}

void drain_close(struct drain *d)
{
	if (!d)
		return;
	drain_stop(d);
	ring_buffer__free(d->rb);
	perftrack_free(d->track);
	dumpable_free(d->dump);
	perfswitch_free(d->switches);
	ipset_free(&d->kernel_ips);
	if (d->epfd > 0)
		close(d->epfd);
	if (d->fail_fd > 0)
		close(d->fail_fd);
	free(d);
}
