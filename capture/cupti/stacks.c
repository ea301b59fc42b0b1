/* stacks.c - in-process launch stacks (see stacks.h).
 *
 * Launching threads never take a lock: each record goes into a slot of a
 * bounded multi-producer ring (a slot's sequence number says whose turn it
 * is, as in D. Vyukov's bounded queue), and one writer thread drains the
 * slots in order into the run file, which compresses them in 1 MiB blocks.
 * The ring holds 8 MiB, or 256 records of larger copies; when the writer
 * falls that far behind, a record is dropped and counted, never waited for.
 *
 * The copy reads only the calling thread's own stack, from its current sp
 * up to the lesser of the requested size and the stack's top (from
 * pthread_getattr_np, once per thread), so it cannot fault. A thread
 * running on another stack (sigaltstack, a coroutine) gets its ip and sp
 * only. The words are copied by memcpy (under AddressSanitizer by a plain
 * loop left uninstrumented: the frames above belong to callers and hold
 * its redzones).
 *
 * On a thread that runs Python, the slot also holds the Python frames
 * (pyframes.c), written as an XP_REC_PYSTACK right after the launch; the
 * code objects they name are written before it (xpc_py_drain). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "stacks.h"
#include "pyframes.h"
#include "stackreuse.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "runfile.h"
#include "runfmt.h"
#include "runfmt_gpu.h"
#include "zstd_dl.h"

#if !defined(__x86_64__)
#error "register capture is written for x86-64"
#endif

/* a slot holds the Python frames, then the launch: keep it 8-byte aligned */
_Static_assert(sizeof(struct xp_pystack) % 8 == 0 && sizeof(struct xp_pyframe) % 8 == 0,
	       "Python frames keep the launch record after them aligned");

#define RING_BYTES (8u << 20)
/* copied past the innermost Python evaluation's _PyCFrame: the rest of
 * _PyEval_EvalFrameDefault's own frame, so the unwinder steps through it */
#define EVAL_MARGIN 1024u
#define MIN_SLOTS 256u                  /* 64 KiB copies: 16 MiB, room for bursts */
/* The writer naps between drains: at a steady launch rate until about a
 * sixteenth of the ring has come again (room for the rate to grow 16-fold
 * within one nap), at least NAP_MIN; when the ring stays empty, twice as
 * long each time up to NAP_MAX. Waking after every few launches cost the
 * program's CPUs ~7.7k wake-ups a second at 50k launches a second. */
#define NAP_MIN_NS 50000L
#define NAP_MAX_NS 1000000L
#define NAP_RING_SHARE 16

struct slot {
	uint64_t seq;                   /* == position: free for it; position + 1: ready */
	uint32_t len;                   /* launch payload bytes */
	uint32_t pylen;                 /* pystack payload bytes after it, 0: none */
	/* payload follows: a pystack (pylen bytes), then struct xp_launch + IPs
	 * or regs + bytes (len) */
};

/* The launching threads' fields, the ring's head and the writer's each on
 * a line of their own: the writer's stores after every record must not
 * take the line that every launch reads and swaps away from it. */
static struct {
	int on;                         /* atomic: takes go to the ring */
	pid_t pid;
	uint32_t copy;                  /* bytes per launch; 0 = fp walk */
	size_t stride;                  /* bytes per slot, header included */
	uint64_t mask;                  /* slots - 1 */
	unsigned char *ring;
	_Alignas(64) uint64_t head;     /* atomic: next position to reserve */
	_Alignas(64) uint64_t tail;     /* writer only: next position to write */
	struct xp_writer *w;
	pthread_t writer;
	int stop;                       /* atomic */
	/* atomic, but taken, py_stacks and writer_cpu_ns: the writer's */
	struct xpc_stacks_stats stats;
} S;

static __thread pid_t my_tid;
static __thread uintptr_t stack_lo, stack_hi;  /* 0, 0: unknown (or not a plain stack) */
static __thread int stack_looked;

static struct slot *slot_at(uint64_t pos)
{
	return (struct slot *)(S.ring + (pos & S.mask) * S.stride);
}

static void find_stack(void)
{
	pthread_attr_t a;
	void *lo;
	size_t size;

	stack_looked = 1;
	if (pthread_getattr_np(pthread_self(), &a))
		return;
	if (!pthread_attr_getstack(&a, &lo, &size)) {
		stack_lo = (uintptr_t)lo;
		stack_hi = (uintptr_t)lo + size;
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
static uint16_t walk_fp(uint64_t *ips, uint64_t ip, uint64_t sp, uint64_t bp)
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

/* Fills a slot's launch payload after its Python frames (py, pylen);
 * returns its length. */
static uint32_t fill(unsigned char *p, uint64_t ts, uint64_t corr, uint32_t cbid,
		     const char *symbol, const unsigned char *py, uint32_t pylen, uint64_t eval,
		     uint64_t ip, uint64_t sp, uint64_t bp)
{
	struct xp_launch *l = (struct xp_launch *)p;
	uint64_t avail;

	memset(l, 0, sizeof(*l));
	l->ts = ts;
	l->correlation_id = corr;
	l->pid = (uint32_t)S.pid;
	l->tid = (uint32_t)my_tid;
	l->cpu = (uint32_t)sched_getcpu();
	l->cbid = cbid;
	if (!stack_looked)
		find_stack();
	avail = sp >= stack_lo && sp < stack_hi ? (stack_hi - sp) & ~7ull : 0;
	if (!avail)
		__atomic_add_fetch(&S.stats.no_copy, 1, __ATOMIC_RELAXED);
	if (!S.copy) {
		uint64_t *ips = (uint64_t *)(l + 1);

		l->stack.user_depth = avail ? walk_fp(ips, ip, sp, bp) : 1;
		ips[0] = ip;
		return (uint32_t)(sizeof(*l) + l->stack.user_depth * sizeof(uint64_t));
	} else {
		struct xp_user_regs_copy *r = (struct xp_user_regs_copy *)(l + 1);
		uint32_t size = avail < S.copy ? (uint32_t)avail : S.copy, id = 0;
		enum xpc_reuse_what reuse = XPC_REUSE_OFF;

		l->stack.flags = XP_STACK_HAS_USER_COPY;
		if (avail && pylen > sizeof(struct xp_pystack))
			reuse = xpc_reuse_decide(xpc_reuse_key(cbid, symbol, stack_hi - sp,
							       py + sizeof(struct xp_pystack),
							       pylen - (uint32_t)sizeof(struct xp_pystack)),
						 &id);
		/* Python calls CUDA: copy up to its innermost evaluation (and a
		 * little past, for that frame itself), not the interpreter's
		 * frames above, which the Python stack says; a launch copies
		 * some KiB instead of up to 64 */
		if (eval > sp && eval < stack_hi && eval - sp + EVAL_MARGIN < size) {
			size = (uint32_t)((eval - sp + EVAL_MARGIN) & ~7ull);
			l->stack.flags |= XP_STACK_COPY_TO_PYTHON;
		}
		r->ip = ip;
		r->sp = sp;
		r->bp = bp;
		r->key = id;
		if (reuse == XPC_REUSE_BORROW) {
			l->stack.flags |= XP_STACK_BORROWED;
			r->size = 0;
			return (uint32_t)(sizeof(*l) + sizeof(*r));
		}
		if (reuse == XPC_REUSE_COPY)
			l->stack.flags |= XP_STACK_KEYED;
		r->size = size;
		copy_words((uint64_t *)(r + 1), (const uint64_t *)sp, size / 8);
		return (uint32_t)(sizeof(*l) + sizeof(*r) + size);
	}
}

__attribute__((noinline))
void xpc_stack_take(uint64_t ts, uint64_t correlation_id, uint32_t cbid, const char *symbol)
{
	uint64_t ip, sp, bp, pos;
	uintptr_t eval;
	unsigned char *p;
	struct slot *s;

	if (!__atomic_load_n(&S.on, __ATOMIC_ACQUIRE))
		return;
	/* the registers at one instruction of this function, whose CFI tells
	 * the unwinder where our caller's frame is */
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	if (!my_tid)
		my_tid = (pid_t)syscall(SYS_gettid);
	pos = __atomic_load_n(&S.head, __ATOMIC_RELAXED);
	for (;;) {
		int64_t dif;

		s = slot_at(pos);
		dif = (int64_t)(__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) - pos);
		if (dif == 0 && __atomic_compare_exchange_n(&S.head, &pos, pos + 1, 1,
							    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			break;
		if (dif < 0) {
			__atomic_add_fetch(&S.stats.lost, 1, __ATOMIC_RELAXED);
			return;
		}
		if (dif > 0)
			pos = __atomic_load_n(&S.head, __ATOMIC_RELAXED);
	}
	/* the Python frames first (they are part of the launch's key), then
	 * the launch; xpc_py_take writes only when the walker is on (then the
	 * slot has room), and counts either way */
	p = (unsigned char *)(s + 1);
	s->pylen = xpc_py_take(p, ts, correlation_id, (uint32_t)my_tid, &eval);
	s->len = fill(p + s->pylen, ts, correlation_id, cbid, symbol, p, s->pylen, eval, ip, sp, bp);
	/* no locked instruction after the copy: it would wait for the copy's
	 * stores to reach the cache (the writer counts what it takes) */
	__atomic_store_n(&s->seq, pos + 1, __ATOMIC_RELEASE);
	/* the next launch's slot header and Python frames: the writer had
	 * them last, and the lines come while the program works meanwhile */
	for (int i = 0; i < 4; i++)
		__builtin_prefetch((const char *)slot_at(pos + 1) + 64 * i, 1, 3);
}

/* Writes every ready slot in order; how many. */
static uint64_t drain_ready(void)
{
	uint64_t n = 0;

	for (;;) {
		struct slot *s = slot_at(S.tail);

		if (__atomic_load_n(&s->seq, __ATOMIC_ACQUIRE) != S.tail + 1)
			return n + xpc_py_drain(S.w);
		/* the code objects this launch names were queued before it was */
		xpc_py_drain(S.w);
		const unsigned char *p = (const unsigned char *)(s + 1);
		const struct xp_launch *l = (const void *)(p + s->pylen);

		xp_writer_append(S.w, XP_REC_LAUNCH, l, s->len, NULL, 0);
		S.stats.taken++;
		S.stats.borrowed += !!(l->stack.flags & XP_STACK_BORROWED);
		if (s->pylen) {
			xp_writer_append(S.w, XP_REC_PYSTACK, p, s->pylen, NULL, 0);
			S.stats.py_stacks++;
		}
		__atomic_store_n(&s->seq, S.tail + S.mask + 1, __ATOMIC_RELEASE);
		S.tail++;
		n++;
	}
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* How long to nap after n records came in the since_ns before this drain. */
static long next_nap(uint64_t n, uint64_t since_ns, long nap)
{
	uint64_t want;

	if (!n)
		return nap * 2 < NAP_MAX_NS ? nap * 2 : NAP_MAX_NS;
	want = since_ns * ((S.mask + 1) / NAP_RING_SHARE) / n;
	return want < NAP_MIN_NS ? NAP_MIN_NS : want > NAP_MAX_NS ? NAP_MAX_NS : (long)want;
}

/* Drains, naps (next_nap), and flushes the file at the GPU stream's period
 * so that a killed program loses as little. */
static void *writer_main(void *arg)
{
	uint64_t flushed = mono_ns(), last = flushed;
	long nap = NAP_MIN_NS;
	struct timespec cpu;

	(void)arg;
	for (;;) {
		int stop = __atomic_load_n(&S.stop, __ATOMIC_ACQUIRE);
		uint64_t n = drain_ready(), now = mono_ns();

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
	size_t payload = sizeof(struct xp_launch) +
		(copy_bytes ? sizeof(struct xp_user_regs_copy) + copy_bytes
			    : XP_MAX_STACK_DEPTH * sizeof(uint64_t));
	uint64_t slots = MIN_SLOTS;
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
	payload += xpc_py_on() ? XPC_PYSTACK_MAX : 0;
	S.stride = (sizeof(struct slot) + payload + 63) & ~(size_t)63;
	while (slots * 2 * S.stride <= RING_BYTES)
		slots *= 2;
	S.mask = slots - 1;
	S.ring = aligned_alloc(64, slots * S.stride);
	if (!S.ring) {
		close(fd);
		return -ENOMEM;
	}
	for (uint64_t i = 0; i < slots; i++)
		slot_at(i)->seq = i;
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
	__atomic_store_n(&S.on, 1, __ATOMIC_RELEASE);
	return 0;
fail:
	if (S.w)
		xp_writer_close(S.w);
	else
		close(fd);
	S.w = NULL;
	free(S.ring);
	S.ring = NULL;
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

void xpc_stacks_finish(void)
{
	struct xp_lost lost;

	if (!__atomic_exchange_n(&S.on, 0, __ATOMIC_ACQ_REL))
		return;
	__atomic_store_n(&S.stop, 1, __ATOMIC_RELEASE);
	pthread_join(S.writer, NULL);
	/* a take that began before `on` fell may still fill its slot: the
	 * ring is never freed, so it writes into memory nobody reads */
	lost.ts = mono_ns();
	lost.kind = XP_REC_LAUNCH;
	lost.reason = XP_LOST_RINGBUF_FULL;
	lost.count = __atomic_load_n(&S.stats.lost, __ATOMIC_RELAXED);
	if (lost.count)
		xp_writer_append(S.w, XP_REC_LOST, &lost, sizeof(lost), NULL, 0);
	write_py_losses(lost.ts);
	xp_writer_close(S.w);
	S.w = NULL;
}

void xpc_stacks_stats(struct xpc_stacks_stats *out)
{
	out->taken = S.stats.taken;                   /* the writer's, read after the join */
	out->lost = __atomic_load_n(&S.stats.lost, __ATOMIC_RELAXED);
	out->no_copy = __atomic_load_n(&S.stats.no_copy, __ATOMIC_RELAXED);
	out->writer_cpu_ns = S.stats.writer_cpu_ns;   /* set before the join */
	out->py_stacks = S.stats.py_stacks;           /* the writer's, read after the join */
	out->borrowed = S.stats.borrowed;
}
