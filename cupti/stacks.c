/* stacks.c - in-process launch stacks (see stacks.h).
 *
 * Launching threads never take a lock: each record goes into a bounded
 * multi-producer ring of variable-size records (launchring.h), and one
 * writer thread drains it in order into the run file, which compresses
 * the records in 1 MiB blocks. When the writer falls RING_BYTES behind, a
 * launch's stack copy is left out (drop_copy), and where even the rest has
 * no room the record is dropped; both counted, never waited for.
 *
 * The copy reads only the calling thread's own stack, from its current sp
 * up to the lesser of the requested size and the stack's top (from
 * pthread_getattr_np, once per thread), so it cannot fault. A thread
 * running on another stack (sigaltstack, a coroutine) gets its ip and sp
 * only. The words are copied by memcpy (under AddressSanitizer by a plain
 * loop left uninstrumented: the frames above belong to callers and hold
 * its redzones).
 *
 * On a thread that runs Python, the record also holds the Python frames
 * (pyframes.c), written as an XP_REC_PYSTACK right after the launch; the
 * code objects they name are written before it (xpc_py_drain). A launch
 * that repeats an earlier one names its copy instead (stackreuse.h). Where
 * PyTorch runs, PyTorch's autograd state at the launch (autograd.h) follows
 * as an XP_REC_AUTOGRAD.
 *
 * A process that is not dumpable (prctl PR_SET_DUMPABLE 0, or credentials
 * gained at exec) keeps its memory from its own user: the kernel's rule
 * for ptrace and /proc/PID/mem, and the BPF sampler's (man xpcap,
 * PRIVILEGED TASKS). Its stacks, Python frames, code objects' names and
 * autograd nodes are its memory too, so none of it reaches the run. The
 * writer asks the kernel (prctl PR_GET_DUMPABLE, ~1.5 us) before each pass
 * that has records, after counting the records published so far: those
 * were copied before the answer, and are written only if it said
 * dumpable; records published later wait for the next pass's answer. One
 * no sets `privileged` for good (as the sampler keeps a process out once
 * it saw it privileged): launches then copy nothing and the writer drops
 * what the ring still holds, counted as lost (reason privileged). The
 * launching threads make no system call for it; the writer makes one per
 * pass with records, ~1000 a second at most (its naps). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cupti/stacks.h"
#include "cupti/pyframes.h"
#include "cupti/autograd.h"
#include "cupti/joinwait.h"
#include "cupti/launchring.h"
#include "cupti/stackreuse.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "src/runfile.h"
#include "src/runfmt.h"
#include "src/runfmt_gpu.h"
#include "cupti/zstd_dl.h"

#if !defined(__x86_64__)
#error "register capture is written for x86-64"
#endif

/* The ring's note holds a record's Python frames' length in its low 12
 * bits and its autograd part's, in eighths, in the high 4. */
#define NOTE_PY_BITS 12
_Static_assert(XPC_PYSTACK_MAX < (1u << NOTE_PY_BITS), "a Python stack's length fits the ring's note");
_Static_assert(XPC_AUTOGRAD_MAX % 8 == 0 && XPC_AUTOGRAD_MAX / 8 < 16,
	       "an autograd record's length fits the ring's note");
/* a record holds the Python frames, then the launch: keep it 8-byte aligned */
_Static_assert(sizeof(struct xp_pystack) % 8 == 0 && sizeof(struct xp_pyframe) % 8 == 0,
	       "Python frames keep the launch record after them aligned");

/* 2 MiB: some hundred full copies or thousands of launches that name one,
 * in memory that stays in the caches (8 MiB cost a full copy 25% more) */
#define RING_BYTES (2u << 20)
/* Cells a launch with a stack copy leaves free (an eighth of the ring):
 * room for a thousand launches without one while the writer catches up */
#define SPARE_CELLS (RING_BYTES / 8 / XPC_RING_CELL)
/* copied past the innermost Python evaluation's _PyCFrame: the rest of
 * _PyEval_EvalFrameDefault's own frame, so the unwinder steps through it */
#define EVAL_MARGIN 1024u
/* The writer naps between drains: at a steady launch rate until about a
 * sixteenth of the ring has come again (room for the rate to grow 16-fold
 * within one nap), at least NAP_MIN; when the ring stays empty, twice as
 * long each time up to NAP_MAX. Waking after every few launches cost the
 * program's CPUs ~7.7k wake-ups a second at 50k launches a second. */
#define NAP_MIN_NS 50000L
#define NAP_MAX_NS 1000000L
#define NAP_RING_SHARE 16
/* The longest the program's exit waits for the writer to write what is
 * left (some ms of compression; a 2 MiB ring under ASan well under this).
 * A writer still not done, stuck in a write() that does not return, is
 * left running with the file: its tail is lost, the exit goes on. */
#define WRITER_JOIN_MS 1000

/* A record in the ring: a pystack (its length, maybe 0, in the ring's
 * note), then struct xp_launch + IPs or regs + bytes. A launch that names
 * an earlier copy takes 112 bytes with the ring's header: two cache lines. */
_Static_assert(8 + sizeof(struct xp_pystack) + sizeof(struct xp_launch) +
	       sizeof(struct xp_user_regs_copy) <= 128, "a borrowed launch fits two lines");

/* What a launch record will hold, known before its room is taken. */
struct launch_plan {
	struct xp_launch l;
	struct xp_user_regs_copy r;     /* copy mode */
	uint64_t ips[XP_MAX_STACK_DEPTH]; /* fp mode */
	uint64_t key;                   /* stack key (stackreuse.h), 0: none */
	uint32_t len;                   /* bytes of the launch payload */
};

static struct {
	int on;                         /* atomic: takes go to the ring */
	pid_t pid;
	uint32_t copy;                  /* bytes per launch; 0 = fp walk */
	struct xpc_ring ring;
	struct xp_writer *w;
	pthread_t writer;
	int stop;                       /* atomic */
	int abandoned;                  /* the writer did not stop in time */
	int privileged;                 /* atomic: seen not dumpable, nothing more is kept */
	uint64_t priv_launches;         /* atomic: launches dropped for it */
	uint64_t priv_codes;            /* the writer's: code records dropped for it */
	/* atomic, but taken, py_stacks and writer_cpu_ns: the writer's */
	struct xpc_stacks_stats stats;
} S;

/* A thread's launch in the making, off its stack: the copy starts at our
 * own frame, which stays small this way (it was 3 KiB more a copy). With
 * the thread's own fields, in one thread-local struct whose address a take
 * looks up once (each thread-local access after a call is a call of
 * __tls_get_addr in a shared library). */
struct scratch {
	pid_t tid;
	int stack_looked;
	uintptr_t stack_lo, stack_hi;   /* 0, 0: unknown (or not a plain stack) */
	uint64_t py[XPC_PYSTACK_MAX / 8];
	uint64_t ag[XPC_AUTOGRAD_MAX / 8];
	struct launch_plan pl;
};
static __thread struct scratch scratch;

static void find_stack(struct scratch *t)
{
	pthread_attr_t a;
	void *lo;
	size_t size;

	t->stack_looked = 1;
	if (pthread_getattr_np(pthread_self(), &a))
		return;
	if (!pthread_attr_getstack(&a, &lo, &size)) {
		t->stack_lo = (uintptr_t)lo;
		t->stack_hi = (uintptr_t)lo + size;
	}
	pthread_attr_destroy(&a);
}

#if defined(__SANITIZE_ADDRESS__)
#define XPC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define XPC_ASAN 1
#endif
#endif

/* Stack words [sp, sp + n*8) into dst; the caller checked the bounds.
 * memcpy stores 32 bytes or whole lines at a time where a word loop stores
 * 8 (a launch copies some KiB); under AddressSanitizer a plain loop left
 * uninstrumented instead, as the callers' frames hold its redzones. */
#ifdef XPC_ASAN
__attribute__((no_sanitize("address")))
static void copy_words(uint64_t *dst, const uint64_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = src[i];
}
#else
static void copy_words(uint64_t *dst, const uint64_t *src, size_t n)
{
	memcpy(dst, src, n * sizeof(*src));
}
#endif

/* Frame-pointer walk from bp, kept inside [sp, stack_hi): IPs, leaf first. */
static uint16_t walk_fp(uint64_t *ips, uint64_t ip, uint64_t sp, uint64_t bp, uintptr_t stack_hi)
{
	uint16_t n = 0;

	ips[n++] = ip;
	while (n < XP_MAX_STACK_DEPTH && bp >= sp && bp % 8 == 0 && bp + 16 <= stack_hi) {
		const uint64_t *frame = (const uint64_t *)bp;
		uint64_t next = frame[0];

		if (!frame[1])
			break;
		ips[n++] = frame[1];
		if (next <= bp)
			break;
		bp = next;
	}
	return n;
}

/* The launch record of this call, all but the stack bytes a copy reads
 * straight into the ring (plan->r.size of them from sp). */
static void plan(struct scratch *t, struct launch_plan *pl, uint64_t ts, uint64_t corr, uint32_t cbid,
		 const char *symbol, const unsigned char *py, uint32_t pylen, uint64_t eval,
		 uint64_t ip, uint64_t sp, uint64_t bp)
{
	struct xp_launch *l = &pl->l;
	struct xp_user_regs_copy *r = &pl->r;
	uint64_t avail;
	uintptr_t stack_hi;
	uint32_t id = 0;
	enum xpc_reuse_what reuse = XPC_REUSE_OFF;

	memset(l, 0, sizeof(*l));
	l->ts = ts;
	l->correlation_id = corr;
	l->pid = (uint32_t)S.pid;
	l->tid = (uint32_t)t->tid;
	l->cpu = (uint32_t)sched_getcpu();
	l->cbid = cbid;
	pl->key = 0;
	if (!t->stack_looked)
		find_stack(t);
	stack_hi = t->stack_hi;
	avail = sp >= t->stack_lo && sp < stack_hi ? (stack_hi - sp) & ~7ull : 0;
	if (!avail)
		__atomic_add_fetch(&S.stats.no_copy, 1, __ATOMIC_RELAXED);
	if (!S.copy) {
		l->stack.user_depth = avail ? walk_fp(pl->ips, ip, sp, bp, stack_hi) : 1;
		pl->ips[0] = ip;
		pl->len = (uint32_t)(sizeof(*l) + l->stack.user_depth * sizeof(uint64_t));
		return;
	}
	l->stack.flags = XP_STACK_HAS_USER_COPY;
	r->ip = ip;
	r->sp = sp;
	r->bp = bp;
	r->size = avail < S.copy ? (uint32_t)avail : S.copy;
	/* Python calls CUDA: copy up to its innermost evaluation (and a little
	 * past, for that frame itself), not the interpreter's frames above,
	 * which the Python stack says; a launch copies some KiB, not 64 */
	if (eval > sp && eval < stack_hi && eval - sp + EVAL_MARGIN < r->size) {
		r->size = (uint32_t)((eval - sp + EVAL_MARGIN) & ~7ull);
		l->stack.flags |= XP_STACK_COPY_TO_PYTHON;
	}
	if (avail && pylen > sizeof(struct xp_pystack)) {
		/* the frames and the header's flags: all a borrowed launch's
		 * Python stack then leaves out (name_earlier_python) */
		uint64_t depth = (stack_hi - sp) | (uint64_t)((const struct xp_pystack *)py)->flags << 48;

		pl->key = xpc_reuse_key(cbid, symbol, depth, py + sizeof(struct xp_pystack),
					pylen - (uint32_t)sizeof(struct xp_pystack));
		reuse = xpc_reuse_decide(pl->key, &id);
	}
	r->key = id;
	if (reuse == XPC_REUSE_BORROW) {
		l->stack.flags |= XP_STACK_BORROWED;
		r->size = 0;
	} else if (reuse == XPC_REUSE_COPY) {
		l->stack.flags |= XP_STACK_KEYED;
	}
	pl->len = (uint32_t)(sizeof(*l) + sizeof(*r) + r->size);
}

/* The Python stack of a launch that has a key names it; one that names
 * an earlier copy of its native stack names that launch's Python frames
 * too (the key covers them) and keeps only the header: a launch then puts
 * some hundred bytes fewer into the ring and the file. Its new length. */
static uint32_t name_earlier_python(struct xp_pystack *ps, uint32_t pylen,
				    const struct launch_plan *pl)
{
	if (!pylen || !(pl->l.stack.flags & (XP_STACK_KEYED | XP_STACK_BORROWED)))
		return pylen;
	ps->key = pl->r.key;
	if (!(pl->l.stack.flags & XP_STACK_BORROWED))
		return pylen;
	ps->flags |= XP_PYSTACK_BORROWED;
	ps->nframes = 0;
	return (uint32_t)sizeof(*ps);
}

/* The ring has no room for a launch with its stack copy and the spare
 * cells it leaves (SPARE_CELLS): the launch without it (ip and sp only,
 * as off the thread's stack), which is what joins its GPU work and, on
 * autograd's engine threads, its node to the forward line. A transformers step's backward launched every 25 us with
 * copies of some KiB each, more than the writer compressed: 58 of its 342
 * backward launches were dropped whole. A copy a key was to name is
 * forgotten (xpc_reuse_dropped); a launch that borrows has no copy to
 * leave out. 1 when there was a copy to leave out. */
static int has_copy(const struct launch_plan *pl)
{
	return S.copy && !(pl->l.stack.flags & XP_STACK_BORROWED) && pl->r.size;
}

static int drop_copy(struct launch_plan *pl, struct xp_pystack *ps, uint32_t pylen)
{
	uint32_t flags = pl->l.stack.flags;

	if (!has_copy(pl))
		return 0;
	if (flags & XP_STACK_KEYED)
		xpc_reuse_dropped(pl->key);
	if (pylen)
		ps->key = 0;
	pl->l.stack.flags = XP_STACK_HAS_USER_COPY;
	pl->r.key = 0;
	pl->r.size = 0;
	pl->len = (uint32_t)(sizeof(pl->l) + sizeof(pl->r));
	return 1;
}

__attribute__((noinline))
void xpc_stack_take(uint64_t ts, uint64_t correlation_id, uint32_t cbid, const char *symbol)
{
	struct scratch *t;
	struct launch_plan *pl;
	uint64_t ip, sp, bp, pos, *py;
	unsigned char *p;
	uintptr_t eval;
	uint32_t pylen, aglen;

	if (!__atomic_load_n(&S.on, __ATOMIC_ACQUIRE))
		return;
	if (__atomic_load_n(&S.privileged, __ATOMIC_RELAXED)) {
		__atomic_add_fetch(&S.priv_launches, 1, __ATOMIC_RELAXED);
		return;
	}
	/* the registers at one instruction of this function, whose CFI tells
	 * the unwinder where our caller's frame is */
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	t = &scratch;
	__asm__("" : "+r"(t));          /* kept, not looked up again after each call */
	pl = &t->pl;
	py = t->py;
	if (!t->tid)
		t->tid = (pid_t)syscall(SYS_gettid);
	/* the Python frames first: they are part of the launch's key, which
	 * decides its size (xpc_py_take counts a launch without them) */
	pylen = xpc_py_take(py, ts, correlation_id, (uint32_t)t->tid, &eval);
	plan(t, pl, ts, correlation_id, cbid, symbol, (const unsigned char *)py, pylen, eval,
	     ip, sp, bp);
	pylen = name_earlier_python((struct xp_pystack *)py, pylen, pl);
	aglen = xpc_autograd_take(t->ag, correlation_id, (uint32_t)t->tid);
	/* a copy leaves room for launches without one (drop_copy) */
	p = xpc_ring_reserve_spare(&S.ring, pylen + aglen + pl->len,
				   (uint16_t)(pylen | aglen / 8 << NOTE_PY_BITS),
				   has_copy(pl) ? SPARE_CELLS : 0, &pos);
	if (!p && drop_copy(pl, (struct xp_pystack *)py, pylen)) {
		p = xpc_ring_reserve(&S.ring, pylen + aglen + pl->len,
				     (uint16_t)(pylen | aglen / 8 << NOTE_PY_BITS), &pos);
		__atomic_add_fetch(p ? &S.stats.copy_dropped : &S.stats.lost, 1, __ATOMIC_RELAXED);
		if (!p)
			return;
	} else if (!p) {
		__atomic_add_fetch(&S.stats.lost, 1, __ATOMIC_RELAXED);
		return;
	}
	memcpy(p, py, pylen);
	p += pylen;
	memcpy(p, t->ag, aglen);
	p += aglen;
	memcpy(p, &pl->l, sizeof(pl->l));
	if (!S.copy) {
		memcpy(p + sizeof(pl->l), pl->ips, pl->l.stack.user_depth * sizeof(uint64_t));
	} else {
		memcpy(p + sizeof(pl->l), &pl->r, sizeof(pl->r));
		copy_words((uint64_t *)(p + sizeof(pl->l) + sizeof(pl->r)), (const uint64_t *)sp,
			   pl->r.size / 8);
	}
	/* no locked instruction after the copy: it would wait for the copy's
	 * stores to reach the cache (the writer counts what it takes) */
	xpc_ring_publish(&S.ring, pos);
}

/* Whether what was copied until now may go into the run: the process was
 * dumpable as its user at this call (the header says why). */
static int still_dumpable(void)
{
	if (__atomic_load_n(&S.privileged, __ATOMIC_RELAXED))
		return 0;
	if (prctl(PR_GET_DUMPABLE) == 1)        /* SUID_DUMP_USER */
		return 1;
	__atomic_store_n(&S.privileged, 1, __ATOMIC_RELAXED);
	return 0;
}

/* Writes the records published before this pass's dumpable check in
 * order (or drops them, counted, once not dumpable); the ring bytes they
 * took (and one a code record), 0 when there was none. */
static uint64_t drain_ready(void)
{
	uint64_t records = xpc_ring_ready(&S.ring), n = 0, codes;
	size_t code_bytes = xpc_py_ready();
	struct xp_writer *w;
	const unsigned char *p;
	uint16_t note;
	size_t len;

	if (!records && !code_bytes)
		return 0;
	w = still_dumpable() ? S.w : NULL;
	while (records-- && (p = xpc_ring_next(&S.ring, &len, &note))) {
		uint32_t pylen = note & ((1u << NOTE_PY_BITS) - 1), aglen = note >> NOTE_PY_BITS << 3;
		const struct xp_launch *l = (const void *)(p + pylen + aglen);

		/* the code objects this launch names were queued before it was */
		codes = xpc_py_drain(w, &code_bytes);
		S.priv_codes += w ? 0 : codes;
		if (w) {
			xp_writer_append(w, XP_REC_LAUNCH, l, (uint32_t)(len - pylen - aglen), NULL, 0);
			S.stats.taken++;
			S.stats.borrowed += !!(l->stack.flags & XP_STACK_BORROWED);
			if (pylen) {
				xp_writer_append(w, XP_REC_PYSTACK, p, pylen, NULL, 0);
				S.stats.py_stacks++;
			}
			if (aglen)
				xp_writer_append(w, XP_REC_AUTOGRAD, p + pylen, aglen, NULL, 0);
		} else {
			__atomic_add_fetch(&S.priv_launches, 1, __ATOMIC_RELAXED);
		}
		xpc_ring_release(&S.ring);
		n += len + XPC_RING_CELL;
	}
	codes = xpc_py_drain(w, &code_bytes);
	S.priv_codes += w ? 0 : codes;
	return n + codes;
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* How long to nap after records of bytes came in the since_ns before
 * this drain (a launch that names an earlier copy takes less room than one
 * that copies: the ring's bytes, not its records, say when it fills). */
static long next_nap(uint64_t bytes, uint64_t since_ns, long nap)
{
	uint64_t want;

	if (!bytes)
		return nap * 2 < NAP_MAX_NS ? nap * 2 : NAP_MAX_NS;
	want = since_ns * (RING_BYTES / NAP_RING_SHARE) / bytes;
	return want < NAP_MIN_NS ? NAP_MIN_NS : want > NAP_MAX_NS ? NAP_MAX_NS : (long)want;
}

/* What autograd.h found, as a record. */
static void write_autograd_info(void)
{
	uint64_t buf[(sizeof(struct xp_autograd_info) + 512) / 8];
	size_t n = xpc_autograd_info(buf, sizeof(buf), mono_ns(), (uint32_t)S.pid);

	if (n)
		xp_writer_append(S.w, XP_REC_AUTOGRAD_INFO, buf, (uint32_t)n, NULL, 0);
}

/* Drains, naps (next_nap), and flushes the file at the GPU stream's period
 * so that a killed program loses as little; writes what autograd.c found
 * when the finder thread publishes it (the writer never waits for it). */
static void *writer_main(void *arg)
{
	uint64_t flushed = mono_ns(), last = flushed;
	long nap = NAP_MIN_NS;
	struct timespec cpu;

	(void)arg;
	for (;;) {
		int stop = __atomic_load_n(&S.stop, __ATOMIC_ACQUIRE);
		uint64_t n, now;

		if (xpc_autograd_resolve())
			write_autograd_info();
		n = drain_ready();
		now = mono_ns();
		if (stop) {
			if (!n)
				break;
			continue;       /* the last records: no nap */
		}
		nap = next_nap(n, now - last, nap);
		if (n)
			last = now;
		nanosleep(&(struct timespec){ 0, nap }, NULL);
		if (mono_ns() - flushed >= XP_GPU_FLUSH_PERIOD_MS * 1000000ull) {
			xp_writer_flush(S.w);
			flushed = mono_ns();
		}
	}
	/* its CPU is the program's now, not xpcap's: say how much */
	if (!clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu))
		S.stats.writer_cpu_ns = (uint64_t)cpu.tv_sec * 1000000000ull + (uint64_t)cpu.tv_nsec;
	return NULL;
}

int xpc_stacks_start(int fd, pid_t pid, uint32_t copy_bytes)
{
	const struct xp_block_codec *codec = xpc_zstd_codec_dl();
	size_t largest = sizeof(struct xp_launch) +
		(copy_bytes ? sizeof(struct xp_user_regs_copy) + copy_bytes
			    : XP_MAX_STACK_DEPTH * sizeof(uint64_t));
	unsigned char info[512];
	sigset_t all, old;
	size_t info_len;
	int err;

	if (copy_bytes > XP_USER_COPY_MAX || copy_bytes % 8) {
		close(fd);
		return -EINVAL;
	}
	S.pid = pid;
	S.copy = copy_bytes;
	xpc_py_start(pid);
	xpc_reuse_start();
	info_len = xpc_py_info(info, sizeof(info), mono_ns());
	largest += (xpc_py_on() ? XPC_PYSTACK_MAX : 0) + XPC_AUTOGRAD_MAX;
	if (getenv("XPCAP_AUTOGRAD") && !strcmp(getenv("XPCAP_AUTOGRAD"), "0"))
		xpc_autograd_disable();
	if (xpc_ring_init(&S.ring, RING_BYTES, largest)) {
		close(fd);
		return -ENOMEM;
	}
	err = xp_writer_open_fd(&S.w, fd, XP_STREAM_CPU, (uint32_t)pid);
	/* without libzstd the stream is plain: larger, still whole */
	if (!err && codec)
		err = xp_writer_set_codec(S.w, codec);
	if (!err && info_len)
		err = xp_writer_append(S.w, XP_REC_PYINFO, info, info_len, NULL, 0);
	if (!err)
		err = xp_writer_flush(S.w);
	if (err)
		goto fail;
	/* the writer must never take the program's signals */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = -pthread_create(&S.writer, NULL, writer_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		goto fail;
	xpc_autograd_start();
	__atomic_store_n(&S.on, 1, __ATOMIC_RELEASE);
	return 0;
fail:
	if (S.w)
		xp_writer_close(S.w);
	else
		close(fd);
	S.w = NULL;
	xpc_ring_free(&S.ring);
	return err;
}

int xpc_stacks_on(void)
{
	return __atomic_load_n(&S.on, __ATOMIC_RELAXED);
}

/* Launches without a Python stack, by reason, and code objects not written
 * (queue full, or unreadable: counted as ring-buffer losses of XP_REC_PYCODE). */
static void write_py_losses(uint64_t ts)
{
	struct xpc_py_stats st;

	xpc_py_stats(&st);
	const struct xp_lost l[] = {
		{ ts, XP_REC_PYSTACK, XP_LOST_PY_UNSUPPORTED, st.unsupported },
		{ ts, XP_REC_PYSTACK, XP_LOST_PY_NO_THREAD, st.no_thread },
		{ ts, XP_REC_PYSTACK, XP_LOST_PY_UNREADABLE, st.unreadable },
		{ ts, XP_REC_PYCODE, XP_LOST_RINGBUF_FULL, st.codes_lost },
	};

	for (size_t i = 0; i < sizeof(l) / sizeof(l[0]); i++)
		if (l[i].count)
			xp_writer_append(S.w, XP_REC_LOST, &l[i], sizeof(l[i]), NULL, 0);
}

int xpc_stacks_finish(void)
{
	struct xp_lost lost;

	if (!__atomic_exchange_n(&S.on, 0, __ATOMIC_ACQ_REL))
		return 0;
	__atomic_store_n(&S.stop, 1, __ATOMIC_RELEASE);
	/* the program's exit never waits on us for long: a writer that does
	 * not stop keeps the file (and its last records) */
	if (xpc_join_bounded(S.writer, WRITER_JOIN_MS)) {
		S.abandoned = 1;
		return -ETIMEDOUT;
	}
	/* a take that began before `on` fell may still fill its record: the
	 * ring is never freed, so it writes into memory nobody reads */
	lost.ts = mono_ns();
	lost.kind = XP_REC_LAUNCH;
	lost.reason = XP_LOST_RINGBUF_FULL;
	lost.count = __atomic_load_n(&S.stats.lost, __ATOMIC_RELAXED);
	if (lost.count)
		xp_writer_append(S.w, XP_REC_LOST, &lost, sizeof(lost), NULL, 0);
	/* launches kept without their stack copy (drop_copy) */
	lost.reason = XP_LOST_STACK;
	lost.count = __atomic_load_n(&S.stats.copy_dropped, __ATOMIC_RELAXED);
	if (lost.count)
		xp_writer_append(S.w, XP_REC_LOST, &lost, sizeof(lost), NULL, 0);
	/* launches and code records of a process no longer dumpable */
	lost.reason = XP_LOST_PRIVILEGED;
	lost.count = __atomic_load_n(&S.priv_launches, __ATOMIC_RELAXED);
	if (lost.count)
		xp_writer_append(S.w, XP_REC_LOST, &lost, sizeof(lost), NULL, 0);
	lost.kind = XP_REC_PYCODE;
	lost.count = S.priv_codes;
	if (lost.count)
		xp_writer_append(S.w, XP_REC_LOST, &lost, sizeof(lost), NULL, 0);
	write_py_losses(lost.ts);
	write_autograd_info();
	xp_writer_close(S.w);
	S.w = NULL;
	return 0;
}

void xpc_stacks_stats(struct xpc_stacks_stats *out)
{
	/* the writer's own counts are its until it ended */
	int mine = !S.abandoned;

	out->taken = mine ? S.stats.taken : 0;        /* the writer's, read after the join */
	out->lost = __atomic_load_n(&S.stats.lost, __ATOMIC_RELAXED);
	out->copy_dropped = __atomic_load_n(&S.stats.copy_dropped, __ATOMIC_RELAXED);
	out->no_copy = __atomic_load_n(&S.stats.no_copy, __ATOMIC_RELAXED);
	out->writer_cpu_ns = mine ? S.stats.writer_cpu_ns : 0;  /* set before the join */
	out->py_stacks = mine ? S.stats.py_stacks : 0;          /* the writer's, after the join */
	out->borrowed = mine ? S.stats.borrowed : 0;
}
