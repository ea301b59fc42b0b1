/* pyreader.c - Python frames of other processes at the sampling rate (see
 * pyreader.h).
 *
 * Each tick reads, per traced Python process, _PyRuntime.interpreters.head
 * (kept once made) -> threads.head -> next (at most MAX_THREADS), and per
 * thread state its native thread id (3.10: the tid glibc keeps in the
 * pthread the thread id names, checked once per pair against
 * /proc/PID/task) and the frame chain: the frames through one copy of the
 * page they lie in (3.11+ keep them side by side), each code object's head
 * from the code table while read within 100 ms; every pointer checked
 * (range, alignment, the code object's type, the instruction inside the
 * code) and the walk capped, since the target keeps running: a chain that
 * changes under the walk fails a check and is dropped, or is taken as it
 * was in between. Code objects get ids per process (an address met again
 * with another filename or first line is a new code object) and their
 * record the first time. A tick that cannot keep up is skipped, not
 * queued; while no process is Python the reader only looks, at 50 Hz. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "capture/pyreader.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "capture/pidscan.h"
#include "capture/pyfind.h"
#include "capture/pyprivs.h"
#include "capture/pywait.h"
#include "src/runfile.h"
#include "src/runfile_zstd.h"
#include "src/runfmt_py.h"

#define MAX_PROCS 256                   /* traced processes looked at */
#define MAX_THREADS 64                  /* thread states read per process and tick */
#define WALK_STEPS (2 * XP_PY_MAX_FRAMES + 2)
#define CODE_SLOTS 4096u                /* per process; more: records written again */
#define CODE_PROBES 8
#define CODE_RECHECK_NS 100000000ull    /* a code object's head is read again after */
#define SCAN_NS 250000000ull            /* new descendants looked for */
#define SCAN_MAX 4096                   /* new pids per scan */
#define PROBE_FAST_NS 20000000ull       /* a process that just exec'd: libpython comes soon */
#define PROBE_SLOW_NS 1000000000ull
#define YOUNG_NS 2000000000ull          /* after an exec: looked at, probed, each tick this long */
#define FLUSH_NS 1000000000ull
#define PYWAIT_PER_SEC 1000u          /* /proc/.../syscall reads a second at most */
#define GLIBC_PTHREAD_TID 0x2d0         /* x86-64 glibc: struct pthread's tid (3.10 only) */

struct code_slot {
	uintptr_t addr, filename;
	uint32_t first;
	int32_t firsttraceable;         /* code units (3.11+) */
	uint64_t id;
	int64_t size;                   /* code units (3.10: unused) */
	uint64_t checked;               /* when its head was last read */
};

enum proc_state { P_PROBE, P_READ, P_NONE, P_FAILED };

struct proc {
	pid_t pid;
	enum proc_state state;
	char comm[24];                  /* /proc/PID/comm as last read */
	unsigned failed_reads;          /* ticks in a row whose first read failed */
	bool pending;                   /* Python soon, probably: looked at each tick */
	uint64_t exec_ns;               /* when its executable was seen to change */
	uint64_t next_probe;
	bool seen;                      /* in the latest scan */
	struct pyfind f;
	uintptr_t interp;               /* its main interpreter, once made */
	struct code_slot *codes;
	struct code_slot spare;         /* a code object not remembered */
	uint64_t next_code;
	struct { uint64_t thread_id; uint32_t tid; } tids[MAX_THREADS];
	unsigned ntids;
};

struct pyreader {
	struct pyreader_config c;
	pthread_t th;
	int stop;                       /* atomic */
	int wake;                       /* eventfd: written at stop, or -1 */
	struct xp_writer *w;
	int werr;
	uint64_t period;
	char mode[96];                  /* how memory is read, for the info records */
	bool cannot_drop;               /* root could not become the user: read nothing */
	struct proc procs[MAX_PROCS];
	unsigned nprocs;
	struct pidscan *pidscan;        /* the pids of /proc the scan before saw */
	pid_t scan_pids[SCAN_MAX], scan_ppids[SCAN_MAX];
	uintptr_t page_base;            /* the page copied into page, 0: none */
	unsigned char page[4096];       /* one page of the thread being walked */
	unsigned char *scratch;         /* a code record */
	struct pywait_cache *waits;     /* with c.waits: the calls threads block in */
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void put(struct pyreader *r, uint32_t type, const void *p, size_t len, const void *tail,
		size_t tlen)
{
	int err = xp_writer_append(r->w, type, p, len, tail, tlen);

	if (err && !r->werr)
		r->werr = err;
}

static void write_info(struct pyreader *r, const struct proc *p, int supported, const char *why)
{
	char reason[400];
	struct xp_pyinfo pi = { .ts = now_ns(), .pid = (uint32_t)p->pid,
				.py_hexversion = p->f.pp.hexversion,
				.flags = XP_PYINFO_SAMPLER | (supported ? XP_PYINFO_SUPPORTED : 0) };
	/* how it read, where it did or was refused */
	int n = supported || strstr(why, "unreadable") ?
		snprintf(reason, sizeof(reason), "%s; %s", why, r->mode) :
		snprintf(reason, sizeof(reason), "%s", why);

	pi.reason_len = (uint16_t)(n < 0 ? 0 : (size_t)n < sizeof(reason) ? (size_t)n
				   : sizeof(reason) - 1);
	put(r, XP_REC_PYINFO, &pi, sizeof(pi), reason, pi.reason_len);
}

/* ---- which processes ---- */

static struct proc *proc_of(struct pyreader *r, pid_t pid)
{
	for (unsigned i = 0; i < r->nprocs; i++)
		if (r->procs[i].pid == pid)
			return &r->procs[i];
	return NULL;
}

static void proc_add(struct pyreader *r, pid_t pid)
{
	struct proc *p = proc_of(r, pid);

	if (p) {
		p->seen = true;
		return;
	}
	if (r->nprocs == MAX_PROCS)
		return;
	p = &r->procs[r->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->seen = true;
	p->state = P_PROBE;
}

static void proc_drop(struct pyreader *r, unsigned i)
{
	free(r->procs[i].codes);
	r->procs[i] = r->procs[--r->nprocs];
}

static bool is_ours(void *ctx, pid_t pid)
{
	return proc_of(ctx, pid) != NULL;
}

/* The roots and their descendants now: the parent of each pid not seen in
 * the scan before (a /proc/PID/stat each; the rest is one directory read),
 * repeated until nothing is added. */
static void scan(struct pyreader *r)
{
	pid_t *pids = r->scan_pids, *ppids = r->scan_ppids;
	unsigned n;
	bool added = true;

	for (unsigned i = 0; i < r->nprocs; i++)
		r->procs[i].seen = false;
	for (unsigned i = 0; i < r->c.nroots; i++)
		if (!kill(r->c.roots[i], 0) || errno == EPERM)
			proc_add(r, r->c.roots[i]);
	n = pidscan_next(r->pidscan, pids, ppids, SCAN_MAX, is_ours, r);
	while (added) {
		added = false;
		for (unsigned i = 0; i < n; i++) {
			struct proc *pp = proc_of(r, ppids[i]);

			if (pids[i] && pp && pp->seen && !proc_of(r, pids[i])) {
				proc_add(r, pids[i]);
				added = true;
			} else if (pids[i] && pp && pp->seen) {
				proc_of(r, pids[i])->seen = true;
			}
		}
	}
/* an orphan is reparented away from the tree, and still traced */
	for (unsigned i = r->nprocs; i-- > 0;)
		if (!r->procs[i].seen && kill(r->procs[i].pid, 0) && errno == ESRCH)
			proc_drop(r, i);
}

/* Whether pid exec'd since the last look: its name (comm) changed. Not
 * /proc/PID/exe, which asks for ptrace rights the reader may have given
 * up; an exec of a program of the same name shows as reads that fail. */
static bool exe_changed(struct proc *p)
{
	char path[64], comm[sizeof(p->comm)] = "";
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)p->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	if (n <= 0 || !memcmp(comm, p->comm, sizeof(comm)))
		return false;
	memcpy(p->comm, comm, sizeof(comm));
	return true;
}

static void probe(struct pyreader *r, struct proc *p, uint64_t now)
{
	int found;

	if (r->cannot_drop) {
		p->state = P_FAILED;
		write_info(r, p, 0, "memory unreadable (cannot take the invoking user's credentials)");
		return;
	}
	found = pyfind(p->pid, &p->f);
	/* not Python (yet: libpython is mapped after the exec; under sudo the
	 * command is root's until it takes the user's ids and execs) */
	if (found == 0 || (found < 0 && (strstr(p->f.reason, "no _PyRuntime") ||
					 strstr(p->f.reason, "cannot read its mappings")))) {
		/* at once again where libpython may come: a python3.X
		 * without the runtime, or a command not yet the user's;
		 * soon again for 2 s after any exec: the kernel renames a
		 * process before it maps the new program, and a loaded
		 * machine can stall it in between for longer than a short
		 * program lives */
		bool young = now - p->exec_ns < YOUNG_NS;

		p->state = P_NONE;
		p->pending = found && young;
		p->next_probe = now + (p->pending ? 0 : young ? PROBE_FAST_NS : PROBE_SLOW_NS);
		return;
	}
	if (found < 0) {
		p->state = P_FAILED;
		write_info(r, p, 0, p->f.reason);
		return;
	}
	free(p->codes);
	p->codes = calloc(CODE_SLOTS, sizeof(*p->codes));
	p->ntids = 0;
	p->interp = 0;
	if (!p->codes) {
		p->state = P_FAILED;
		write_info(r, p, 0, "out of memory");
		return;
	}
	if (r->c.off) {
		p->state = P_FAILED;
		write_info(r, p, 0, "mode off (--no-python-frames)");
		return;
	}
	p->state = P_READ;
	write_info(r, p, 1, p->f.reason);
}

/* ---- code ids ---- */

/* The slot of the code object at code with this filename and first line,
 * its record written the first time. */
static struct code_slot *code_slot(struct pyreader *r, struct proc *p, uintptr_t code,
				   uintptr_t fname, uint32_t first)
{
	uint64_t h = (code >> 4) * 0x9e3779b97f4a7c15ull, id;
	struct code_slot *victim = NULL;
	struct xp_pycode_src src;
	int len;

	for (unsigned i = 0; i < CODE_PROBES; i++) {
		struct code_slot *s = &p->codes[((h >> 40) + i) & (CODE_SLOTS - 1)];

		if (s->addr == code && s->filename == fname && s->first == first)
			return s;
		if (!victim && (!s->addr || s->addr == code))
			victim = s;
	}
	if (!victim)
		victim = &p->codes[(h >> 40) & (CODE_SLOTS - 1)];
	id = XP_PYCODE_ID_SAMPLER | ++p->next_code;
	len = xp_pycode_probe(&p->f.pp, code, &src);
	if (!len)
		len = xp_pycode_fill(&p->f.pp, &src, id, r->scratch);
	if (len > 0)
		put(r, XP_REC_PYCODE, r->scratch, (size_t)len, NULL, 0);
	else if (len == -EFAULT)
		victim = &p->spare;     /* changed under the read: not remembered */
	victim->addr = code;
	victim->filename = fname;
	victim->first = first;
	victim->id = id;
	return victim;
}

/* ---- the walk ---- */

static uintptr_t ptr_at(const unsigned char *b, uint32_t off)
{
	uintptr_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static int32_t i32_at(const unsigned char *b, uint32_t off)
{
	int32_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

static uint32_t span(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

/* n bytes at a of the process being walked: from one copy of the page
 * they lie in, read whole (3.11+ frames lie side by side in the thread's
 * data stack: one read for many frames, and a consistent one), else
 * directly where they cross a page. 0 or -EFAULT. */
static int frame_peek(struct pyreader *r, pid_t pid, void *dst, uintptr_t a, size_t n)
{
	uintptr_t base = a & ~(uintptr_t)(sizeof(r->page) - 1);

	if (base != ((a + n - 1) & ~(uintptr_t)(sizeof(r->page) - 1)))
		return xp_py_peek(pid, dst, a, n);
	if (r->page_base != base) {
		r->page_base = 0;
		if (xp_py_peek(pid, r->page, base, sizeof(r->page)))
			return -EFAULT;
		r->page_base = base;
	}
	memcpy(dst, r->page + (a - base), n);
	return 0;
}

/* The code object at code: its id, size and first traceable instruction,
 * from its head as read within CODE_RECHECK_NS (a tick's frames mostly run
 * the code of the tick before: one read per frame, not two), else read
 * now, its type checked. NULL when unreadable. */
static struct code_slot *code_of(struct pyreader *r, struct proc *p, uintptr_t code,
				 uint64_t now)
{
	const struct xp_py_offsets *o = p->f.pp.o;
	uint32_t n = span(span(o->ob_size, o->co_filename), span(o->co_firstlineno,
			  o->co_firsttraceable)) + 8;
	uint64_t h = (code >> 4) * 0x9e3779b97f4a7c15ull;
	unsigned char cb[256];
	struct code_slot *s;

	for (unsigned i = 0; i < CODE_PROBES; i++) {
		s = &p->codes[((h >> 40) + i) & (CODE_SLOTS - 1)];
		if (s->addr == code && now - s->checked < CODE_RECHECK_NS)
			return s;
	}
	if (!xp_py_sane(code) || n > sizeof(cb) || xp_py_peek(p->pid, cb, code, n) ||
	    ptr_at(cb, o->ob_type) != p->f.pp.code_type)
		return NULL;
	s = code_slot(r, p, code, ptr_at(cb, o->co_filename), (uint32_t)i32_at(cb, o->co_firstlineno));
	memcpy(&s->size, cb + o->ob_size, sizeof(s->size));
	s->firsttraceable = o->minor >= 11 ? i32_at(cb, o->co_firsttraceable) : 0;
	s->checked = now;
	return s;
}

/* 3.11+: _PyInterpreterFrame chain. Frames written, or -1 when unreadable. */
static int walk_311(struct pyreader *r, struct proc *p, uintptr_t f, uint64_t now,
		    struct xp_pyframe *out, uint16_t *flags)
{
	const struct xp_py_offsets *o = p->f.pp.o;
	uint32_t fn = span(span(o->fr_previous, o->fr_code), span(o->fr_instr, o->fr_owner)) + 8;
	unsigned char fb[256];
	int n = 0;

	for (int step = 0; f; step++) {
		struct code_slot *c;
		uintptr_t code, instr;
		int64_t size, off;
		uint8_t owner;

		if (step == WALK_STEPS || !xp_py_sane(f) || fn > sizeof(fb) ||
		    frame_peek(r, p->pid, fb, f, fn))
			return -1;
		owner = fb[o->fr_owner];
		if (o->minor >= 12 && owner == o->owner_cstack) {
			/* the frame before it was the first of its evaluation */
			if (n)
				out[n - 1].flags |= XP_PYFRAME_ENTRY;
			f = ptr_at(fb, o->fr_previous);
			continue;
		}
		code = ptr_at(fb, o->fr_code);
		if (!(c = code_of(r, p, code, now)))
			return -1;
		size = c->size;
		instr = ptr_at(fb, o->fr_instr);
		off = (int64_t)(instr - (code + o->co_code));
		if (size <= 0 || size > (1 << 24))
			return -1;
		if (owner != o->owner_gen && off < 2 * (int64_t)c->firsttraceable) {
			f = ptr_at(fb, o->fr_previous);
			continue;       /* not started yet */
		}
		if (off < 0 || off >= 2 * size)
			return -1;
		if (n == XP_PY_MAX_FRAMES) {
			*flags |= XP_PYSTACK_TRUNCATED;
			break;
		}
		out[n].code_id = c->id;
		out[n].instr_offset = (uint32_t)off;
		out[n].flags = o->minor == 11 && fb[o->fr_entry] ? XP_PYFRAME_ENTRY : 0;
		n++;
		f = ptr_at(fb, o->fr_previous);
	}
	return n;
}

/* 3.10: PyFrameObject chain (f_back); every frame has its own evaluation. */
static int walk_310(struct pyreader *r, struct proc *p, uintptr_t f, uint64_t now,
		    struct xp_pyframe *out, uint16_t *flags)
{
	const struct xp_py_offsets *o = p->f.pp.o;
	uint32_t fn = span(span(o->fr_previous, o->fr_code), span(o->fr_instr, o->ob_type)) + 8;
	unsigned char fb[256];
	int n = 0;

	for (int step = 0; f; step++) {
		struct code_slot *c;
		uintptr_t code;
		int32_t lasti;

		if (step == WALK_STEPS || !xp_py_sane(f) || fn > sizeof(fb) ||
		    frame_peek(r, p->pid, fb, f, fn) || ptr_at(fb, o->ob_type) != p->f.pp.frame_type)
			return -1;
		code = ptr_at(fb, o->fr_code);
		if (!(c = code_of(r, p, code, now)))
			return -1;
		lasti = i32_at(fb, o->fr_instr);
		if (lasti >= 0) {
			if (lasti >= (1 << 24))
				return -1;
			if (n == XP_PY_MAX_FRAMES) {
				*flags |= XP_PYSTACK_TRUNCATED;
				break;
			}
			out[n].code_id = c->id;
			out[n].instr_offset = (uint32_t)lasti * 2;
			out[n].flags = XP_PYFRAME_ENTRY;
			n++;
		}
		f = ptr_at(fb, o->fr_previous);
	}
	return n;
}

/* 3.10: the kernel's id of the thread whose pthread_t is thread_id (glibc
 * keeps it there; read each time, as a pthread_t is reused), checked once
 * per pair to be a thread of the process; 0 if none. */
static uint32_t tid_310(struct proc *p, uint64_t thread_id)
{
	char path[64];
	uint32_t tid = 0;

	if (xp_py_peek(p->pid, &tid, (uintptr_t)thread_id + GLIBC_PTHREAD_TID, sizeof(tid)) || !tid)
		return 0;
	for (unsigned i = 0; i < p->ntids; i++)
		if (p->tids[i].thread_id == thread_id && p->tids[i].tid == tid)
			return tid;
	snprintf(path, sizeof(path), "/proc/%d/task/%u", (int)p->pid, tid);
	if (access(path, F_OK))
		return 0;
	if (p->ntids < MAX_THREADS) {
		p->tids[p->ntids].thread_id = thread_id;
		p->tids[p->ntids++].tid = tid;
	}
	return tid;
}

/* Reading it was refused: said once, not tried again before an exec. */
static void refused(struct pyreader *r, struct proc *p)
{
	char why[96];

	snprintf(why, sizeof(why), "memory unreadable (process_vm_readv: %s)", strerror(errno));
	p->state = P_FAILED;
	write_info(r, p, 0, why);
}

/* With waits from perf's switch records (no stack): the call thread tid
 * is blocked in as its frames f were read at ts, if it is (pywait.h says
 * when it is asked). The chain of a blocked thread does not move: the two
 * belong together. */
static void blocked_in(struct pyreader *r, struct proc *p, uint32_t tid, uint64_t ts,
		       const struct xp_pyframe *f, int n)
{
	struct xp_pywait w = { .ts = ts, .pid = (uint32_t)p->pid, .tid = tid };
	uint64_t chain = (uint64_t)n;

	for (int i = 0; i < n; i++)
		chain = (chain ^ f[i].code_id ^ (uint64_t)f[i].instr_offset << 40) *
			0x9e3779b97f4a7c15ull;
	if (pywait_check(r->waits, p->pid, tid, chain, ts, &w) == 1)
		put(r, XP_REC_PYWAIT, &w, sizeof(w), NULL, 0);
}

/* One tick of one process: every thread's chain. */
static void read_proc(struct pyreader *r, struct proc *p, uint64_t ts)
{
	const struct xp_py_offsets *o = p->f.pp.o;
	uint32_t tn = span(span(o->ts_next, o->ts_frame), span(o->ts_thread_id, o->ts_native_id)) + 8;
	struct {
		struct xp_pystack h;
		struct xp_pyframe f[XP_PY_MAX_FRAMES];
	} rec;
	unsigned char tb[512];
	uintptr_t interp = p->interp, ts_addr = 0;

	/* the main interpreter stays where it is once made */
	errno = 0;
	if ((!interp && xp_py_peek(p->pid, &interp, p->f.runtime + o->rt_interp_head,
				   sizeof(interp))) || !xp_py_sane(interp) ||
	    xp_py_peek(p->pid, &ts_addr, interp + o->is_threads_head, sizeof(ts_addr))) {
		/* refused now: it became non-dumpable, or changed credentials */
		if (errno == EPERM || errno == EACCES) {
			refused(r, p);
			return;
		}
		/* not initialized yet; or another program now (an exec that
		 * kept the name): looked for again after a while */
		p->interp = 0;
		if (++p->failed_reads > 200)
			p->state = P_PROBE;
		return;
	}
	p->failed_reads = 0;
	p->interp = interp;
	for (unsigned i = 0; i < MAX_THREADS && xp_py_sane(ts_addr) && tn <= sizeof(tb); i++) {
		uintptr_t frame;
		uint16_t flags = 0;
		uint32_t tid;
		int n;

		if (xp_py_peek(p->pid, tb, ts_addr, tn))
			return;
		tid = o->minor == 10 ? tid_310(p, ptr_at(tb, o->ts_thread_id))
			: (uint32_t)ptr_at(tb, o->ts_native_id);
		frame = ptr_at(tb, o->ts_frame);
		r->page_base = 0;       /* a copy of this tick and thread only */
		if ((o->minor == 11 || o->minor == 12) && xp_py_sane(frame) &&
		    xp_py_peek(p->pid, &frame, frame + o->cf_frame, sizeof(frame)))
			frame = 0;
		n = !tid || !frame ? 0 : o->minor == 10 ? walk_310(r, p, frame, ts, rec.f, &flags)
			: walk_311(r, p, frame, ts, rec.f, &flags);
		if (n > 0) {
			memset(&rec.h, 0, sizeof(rec.h));
			rec.h.ts = ts;
			rec.h.pid = (uint32_t)p->pid;
			rec.h.tid = tid;
			rec.h.nframes = (uint16_t)n;
			rec.h.flags = flags;
			put(r, XP_REC_PYSAMPLE, &rec, sizeof(rec.h) + (size_t)n * sizeof(rec.f[0]), NULL, 0);
			if (r->waits)
				blocked_in(r, p, tid, ts, rec.f, n);
		}
		ts_addr = ptr_at(tb, o->ts_next);
	}
}

/* ---- the thread ---- */

/* One tick: new processes (each scan), execs, probes, reads. */
static void tick(struct pyreader *r, uint64_t t, uint64_t *next_scan)
{
	bool scanned = t >= *next_scan;

	if (scanned) {
		scan(r);
		*next_scan = t + SCAN_NS;
	}
	for (unsigned i = 0; i < r->nprocs; i++) {
		struct proc *p = &r->procs[i];

		/* an exec: looked for at each scan, and at each tick while a
		 * young process may yet become Python */
		if ((scanned || (p->state == P_NONE && t - p->exec_ns < YOUNG_NS) ||
		     p->state == P_PROBE) && exe_changed(p)) {
			p->exec_ns = t;
			p->state = P_PROBE;
		}
		if (p->state == P_PROBE || (p->state == P_NONE && t >= p->next_probe))
			probe(r, p, t);
		if (p->state == P_READ)
			read_proc(r, p, now_ns());
	}
}

/* The reader's rate for a sampling rate of freq Hz. */
static uint32_t read_hz(uint32_t freq)
{
	uint64_t hz = 4ull * freq;

	if (hz > 1000)
		hz = freq > 1000 ? freq : 1000;
	return (uint32_t)hz;
}

/* Sleeps until *next + period (a late tick is skipped, not made up). */
static void sleep_until(uint64_t *next, uint64_t period)
{
	uint64_t t = now_ns();
	struct timespec ts;

	*next += period;
	if (*next < t)
		*next = t + period - (t - *next) % period;
	ts.tv_sec = (time_t)(*next / 1000000000ull);
	ts.tv_nsec = (long)(*next % 1000000000ull);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* With nothing read and no process young enough to turn Python at any
 * tick, nothing is due before the next scan or slow probe: the time to
 * sleep until, else 0. A native program's recording is then woken 4
 * times a second, not 50 (each wakeup 50-100 us of CPU on a VM). */
static uint64_t quiet_until(const struct pyreader *r, uint64_t t, uint64_t next_scan)
{
	uint64_t until = next_scan;

	for (unsigned i = 0; i < r->nprocs; i++) {
		const struct proc *p = &r->procs[i];

		if (p->state == P_READ || p->state == P_PROBE ||
		    (p->state == P_NONE && (p->pending || t - p->exec_ns < YOUNG_NS)))
			return 0;
		if (p->state == P_NONE && p->next_probe < until)
			until = p->next_probe;
	}
	return until;
}

/* Sleeps until then, or until pyreader_stop. */
static void sleep_quiet(struct pyreader *r, uint64_t until)
{
	struct pollfd p = { .fd = r->wake, .events = POLLIN };
	uint64_t t = now_ns();

	if (until > t)
		poll(&p, 1, (int)((until - t + 999999) / 1000000));
}

static void *run(void *arg)
{
	struct pyreader *r = arg;
	uint64_t next = now_ns(), next_scan = 0, next_flush = next + FLUSH_NS;

	r->cannot_drop = pyreader_become_user(r->c.uid, r->c.gid, r->c.record_privileged,
						 r->mode, sizeof(r->mode)) < 0;
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		uint64_t t = now_ns(), period, quiet;
		bool reading = false;

		tick(r, t, &next_scan);
		for (unsigned i = 0; i < r->nprocs; i++)
			reading |= r->procs[i].state == P_READ ||
				   (r->procs[i].state == P_NONE && r->procs[i].pending);
		if (t >= next_flush) {
			int err = xp_writer_flush(r->w);

			if (err && !r->werr)
				r->werr = err;
			next_flush = t + FLUSH_NS;
		}
		/* -F while a Python process is read (or about to be); else only
		 * looking for one
		 * (a native program is not woken up for a thousand times a second) */
		period = reading ? r->period : r->period > PROBE_FAST_NS ? r->period : PROBE_FAST_NS;
		quiet = reading || r->wake < 0 ? 0 : quiet_until(r, t, next_scan);
		if (quiet > t + period) {
			sleep_quiet(r, quiet);
			next = now_ns();        /* the ticks go on from here */
			continue;
		}
		sleep_until(&next, period);
	}
	return NULL;
}

int pyreader_start(struct pyreader **out, const struct pyreader_config *c)
{
	struct pyreader *r = calloc(1, sizeof(*r));
	int err;

	*out = NULL;
	if (!r || !(r->scratch = malloc(XP_PYCODE_RECORD_MAX)) || pidscan_new(&r->pidscan)) {
		if (r)
			free(r->scratch);
		free(r);
		close(c->fd);
		return -ENOMEM;
	}
	r->c = *c;
	/* without it the waits only lack the call they blocked in */
	if (c->waits && !c->off)
		r->waits = pywait_cache_new(PYWAIT_PER_SEC, now_ns());
	/* four reads a sampling period, up to 1 kHz: a sample takes the
	 * nearest read, and at one read a period (10 ms at 99 Hz) a 6 ms
	 * phase of the program often got its neighbour's frames (a normal
	 * user's recording of tests/gpu/host_causes.py on the H200 named
	 * 69% of augment()'s idle time at it; root's run, 91%) */
	r->period = 1000000000ull / read_hz(c->freq ? c->freq : 99);
	if (c->off)
		r->period = SCAN_NS;    /* only finds the processes */
	/* without it the ticks go on while nothing is due */
	r->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	/* the roots, held before their exec, have no descendant yet: the
	 * first scan reads the /proc/PID/stat of the roots alone, not of
	 * every process of the machine (110 here, thousands on a server) */
	if (c->roots_held)
		pidscan_mark_all(r->pidscan);
	err = xp_writer_open_fd(&r->w, c->fd, XP_STREAM_CPU, 0);
	if (!err && c->compress)
		err = xp_writer_set_codec(r->w, &xp_zstd_codec);
	if (!err)
		err = xp_writer_flush(r->w);
	if (!err)
		err = -pthread_create(&r->th, NULL, run, r);
	if (err) {
		xp_writer_close(r->w);
		if (r->wake >= 0)
			close(r->wake);
		pywait_cache_free(r->waits);
		pidscan_free(r->pidscan);
		free(r->scratch);
		free(r);
		return err;
	}
	*out = r;
	return 0;
}

int pyreader_stop(struct pyreader *r)
{
	int err;

	if (!r)
		return 0;
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELEASE);
	if (r->wake >= 0)
		(void)!eventfd_write(r->wake, 1);      /* fails only when already woken */
	pthread_join(r->th, NULL);
	if (r->wake >= 0)
		close(r->wake);
	err = xp_writer_close(r->w);
	if (!err)
		err = r->werr;
	for (unsigned i = 0; i < r->nprocs; i++)
		free(r->procs[i].codes);
	pywait_cache_free(r->waits);
	pidscan_free(r->pidscan);
	free(r->scratch);
	free(r);
	return err;
}
