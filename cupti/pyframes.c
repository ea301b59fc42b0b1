/* pyframes.c - the CPython frame walker (see pyframes.h).
 *
 * Finding the interpreter: dlsym(RTLD_DEFAULT), else the main program's
 * .symtab (exesyms.c), of _PyRuntime, Py_Version
 * (3.11+) or Py_GetVersion (3.10, called once), the types PyCode_Type,
 * PyUnicode_Type, PyBytes_Type, and symbols that only debug
 * (_Py_NegativeRefcount) or free-threaded (_Py_DecRefShared) builds export.
 * Offsets come from src/pyoffsets.inc (scripts/gen-pyoffsets, from each minor's
 * headers). On 3.13 every offset the interpreter publishes in its
 * _Py_DebugOffsets (at the start of _PyRuntime) must equal the table's, or the
 * walker stays off; the table adds what 3.13 does not publish (the thread-state
 * key, _co_firsttraceable, compact strings' utf8 pointer). Anything unknown:
 * no stacks, and the reason goes into XP_REC_PYINFO.
 *
 * The calling thread's state comes from the key that PyGILState keeps in
 * _PyRuntime (pthread_getspecific, no GIL needed: PyTorch releases it before
 * launching); a thread state seen for the first time on a thread is checked
 * with process_vm_readv (its thread_id must be pthread_self()). The frame
 * chain belongs to this thread, which is inside this call and cannot pop
 * frames meanwhile, so frames are read directly, each pointer checked
 * (range, alignment, the code object's type) and the walk capped.
 *
 * Code objects get ids from a counter; a fixed open-addressing table maps
 * address -> id and keeps the filename pointer, first line and size, so an
 * address reused by another code object gets a new id. Entries are seqlocks:
 * a reader that races a writer just takes a new id (the record is written
 * twice, harmless). The first launch that meets a code object copies it
 * (process_vm_readv: strings, line table) into a byte queue that the stacks
 * writer thread drains before the launch's own record. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cupti/pyframes.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cupti/exesyms.h"
#include "src/pyobj.h"
#include "src/pyoffsets.h"
#include "src/runfile.h"


static const struct xp_py_offsets table[] = {
#include "src/pyoffsets.inc"
};

#define CODE_SLOTS 8192u                /* code objects remembered (more: written again) */
#define CODE_PROBES 8
#define QUEUE_BYTES (4u << 20)          /* code records waiting for the writer */
#define Q_READY (1ull << 63)

struct code_entry {
	uint64_t seq;                   /* even: stable (0: never used); odd: being written */
	uint64_t addr;
	uint64_t id;
	uint64_t filename;              /* co_filename pointer */
	uint32_t firstlineno;
	uint32_t size;                  /* code units (3.10: co_code bytes) */
};

static struct {
	int disabled;
	int present;                    /* an interpreter is in the process */
	int on;                         /* ... and the walker knows it */
	pid_t pid;
	uint32_t hexversion;
	char reason[192];
	struct xp_py_offsets o;
	uintptr_t runtime, code_type, unicode_type, bytes_type, frame_type;
	struct code_entry *codes;
	unsigned char *q;               /* the code record queue */
	uint64_t qhead;                 /* atomic: next byte to reserve */
	uint64_t qtail;                 /* atomic, writer: next byte to write */
	uint64_t next_id;               /* atomic */
	struct xpc_py_stats st;         /* atomic counters */
} P;

static __thread uintptr_t my_ts;        /* thread state checked for this thread */

static void count(uint64_t *c)
{
	__atomic_add_fetch(c, 1, __ATOMIC_RELAXED);
}

/* Fault-free copy of n bytes of this process's memory. */
static int peek(void *dst, uintptr_t src, size_t n)
{
	return xp_py_peek(P.pid, dst, src, n);
}

#define sane xp_py_sane

/* This process's interpreter as pyobj.h reads it. */
static struct xp_pyproc pyproc(void)
{
	struct xp_pyproc pp = { P.pid, P.hexversion, &P.o, P.code_type, P.unicode_type,
				P.bytes_type, P.frame_type };

	return pp;
}

/* Direct reads: only of the calling thread's frame chain, after sane(). */
static uintptr_t rd_ptr(uintptr_t a, uint32_t off)
{
	return *(const uintptr_t *)(a + off);
}

static int64_t rd_i64(uintptr_t a, uint32_t off)
{
	return *(const int64_t *)(a + off);
}

static int32_t rd_i32(uintptr_t a, uint32_t off)
{
	return *(const int32_t *)(a + off);
}

static uint8_t rd_u8(uintptr_t a, uint32_t off)
{
	return *(const uint8_t *)(a + off);
}

/* The symbols the walker looks up, once: the dynamic ones (libpython, or a
 * python3 built with --export-dynamic, as extension modules need), else the
 * main program's .symtab (exesyms.c). */
enum { S_RUNTIME, S_VERSION, S_GETVERSION, S_NEGREF, S_DECREFSHARED, S_CODE, S_UNICODE,
       S_BYTES, S_FRAME, S_COUNT };
static const char *const sym_names[S_COUNT] = {
	"_PyRuntime", "Py_Version", "Py_GetVersion", "_Py_NegativeRefcount",
	"_Py_DecRefShared", "PyCode_Type", "PyUnicode_Type", "PyBytes_Type", "PyFrame_Type",
};

static void find_symbols(uintptr_t *addrs)
{
	for (int i = 0; i < S_COUNT; i++)
		addrs[i] = (uintptr_t)dlsym(RTLD_DEFAULT, sym_names[i]);
	if (!addrs[S_RUNTIME]) {
		memset(addrs, 0, S_COUNT * sizeof(*addrs));
		xpc_exe_symbols(sym_names, addrs, S_COUNT);
	}
}

/* "3.10.13 (main, ..." -> 0x030a0df0 (a/b/rc levels as PY_VERSION_HEX). */
static uint32_t parse_version(const char *v)
{
	unsigned major = 0, minor = 0, micro = 0, serial = 0, level = 0xf;
	int n = 0;

	if (sscanf(v, "%u.%u.%u%n", &major, &minor, &micro, &n) < 3 || major > 255 || minor > 255 ||
	    micro > 255)
		return 0;
	if (v[n] == 'a' || v[n] == 'b')
		level = v[n] == 'a' ? 0xa : 0xb, sscanf(v + n + 1, "%u", &serial);
	else if (v[n] == 'r' && v[n + 1] == 'c')
		level = 0xc, sscanf(v + n + 2, "%u", &serial);
	return major << 24 | minor << 16 | micro << 8 | level << 4 | (serial & 0xf);
}

static void set_reason(const char *fmt, const char *a)
{
	snprintf(P.reason, sizeof(P.reason), fmt, a);
}

/* 3.13: the interpreter publishes its offsets (pyobj.h). */
static int check_debug_offsets(const char *vs)
{
	struct xp_pyproc pp = pyproc();

	return xp_py_check_debug_offsets(&pp, P.runtime, vs, P.reason, sizeof(P.reason));
}

/* Fills P.o, P.hexversion and P.reason; 0 when the walker can run. */
static int find_interpreter(void)
{
	uintptr_t a[S_COUNT];
	const unsigned long *pv;
	const char *(*getversion)(void);
	char vs[32];
	uint64_t probe = 0x5079, copy = 0;

	find_symbols(a);
	pv = (const unsigned long *)a[S_VERSION];
	getversion = (const char *(*)(void))a[S_GETVERSION];
	P.runtime = a[S_RUNTIME];
	if (!P.runtime) {
		set_reason("no Python interpreter in the process%s", "");
		return -1;
	}
	P.present = 1;
	if (pv)
		P.hexversion = (uint32_t)*pv;
	else if (getversion)
		P.hexversion = parse_version(getversion());
	snprintf(vs, sizeof(vs), "%u.%u.%u", P.hexversion >> 24, P.hexversion >> 16 & 0xff,
		 P.hexversion >> 8 & 0xff);
	if (P.hexversion >> 24 != 3 || (P.hexversion >> 16 & 0xff) < 10 ||
	    (P.hexversion >> 16 & 0xff) > 13) {
		set_reason(P.hexversion ? "Python %s: the walker knows 3.10 to 3.13"
			   : "Python of unknown version%s", P.hexversion ? vs : "");
		return -1;
	}
	if (a[S_NEGREF]) {
		set_reason("Python %s debug build: not supported", vs);
		return -1;
	}
	if (a[S_DECREFSHARED]) {
		set_reason("Python %s free-threaded build: not supported", vs);
		return -1;
	}
	P.o = table[(P.hexversion >> 16 & 0xff) - 10];
	P.code_type = a[S_CODE];
	P.unicode_type = a[S_UNICODE];
	P.bytes_type = a[S_BYTES];
	P.frame_type = a[S_FRAME];
	if (!P.code_type || !P.unicode_type || !P.bytes_type || !P.frame_type) {
		set_reason("Python %s: type objects not found", vs);
		return -1;
	}
	if (peek(&copy, (uintptr_t)&probe, sizeof(probe)) || copy != probe) {
		snprintf(P.reason, sizeof(P.reason), "Python %s: process_vm_readv on itself: %s", vs,
			 strerror(errno));
		return -1;
	}
	if (P.o.minor == 13 && check_debug_offsets(vs))
		return -1;
	snprintf(P.reason, sizeof(P.reason), "Python %s, offsets of %s%s", vs, P.o.from,
		 P.o.minor == 13 ? " checked against _Py_DebugOffsets" : "");
	return 0;
}

void xpc_py_disable(void)
{
	P.disabled = 1;
}

void xpc_py_start(pid_t pid)
{
	P.pid = pid;
	if (P.disabled) {
		set_reason("Python frame walker off%s", "");
		return;
	}
	if (find_interpreter())
		return;
	P.codes = calloc(CODE_SLOTS, sizeof(*P.codes));
	P.q = calloc(1, QUEUE_BYTES);   /* zero pages: touched only as records come */
	if (!P.codes || !P.q) {
		free(P.codes);
		free(P.q);
		P.codes = NULL;
		P.q = NULL;
		set_reason("Python frame walker: out of memory%s", "");
		return;
	}
	__atomic_store_n(&P.on, 1, __ATOMIC_RELEASE);
}

int xpc_py_on(void)
{
	return __atomic_load_n(&P.on, __ATOMIC_RELAXED);
}

const char *xpc_py_reason(void)
{
	return P.reason;
}

size_t xpc_py_info(void *buf, size_t size, uint64_t ts)
{
	struct xp_pyinfo *pi = buf;
	size_t len = strlen(P.reason), total;

	if (len > 0xffff)
		len = 0xffff;
	total = XP_ALIGN8(sizeof(*pi) + len);
	if (total > size)
		return 0;
	memset(buf, 0, total);
	pi->ts = ts;
	pi->pid = (uint32_t)P.pid;
	pi->py_hexversion = P.hexversion;
	pi->flags = P.on ? XP_PYINFO_SUPPORTED : 0;
	pi->reason_len = (uint16_t)len;
	memcpy(pi + 1, P.reason, len);
	return total;
}

/* ---- the code record queue: many producers, the writer consumes ---- */

/* Room for need bytes (8-aligned, header word first), or NULL when full. */
static unsigned char *q_reserve(uint32_t need)
{
	uint64_t pos = __atomic_load_n(&P.qhead, __ATOMIC_RELAXED), off, pad;

	for (;;) {
		off = pos & (QUEUE_BYTES - 1);
		pad = off + need > QUEUE_BYTES ? QUEUE_BYTES - off : 0;
		if (pos + pad + need - __atomic_load_n(&P.qtail, __ATOMIC_ACQUIRE) > QUEUE_BYTES)
			return NULL;
		if (__atomic_compare_exchange_n(&P.qhead, &pos, pos + pad + need, 1,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED))
			break;
	}
	/* a skip to the end of the buffer, so the record stays contiguous */
	if (pad)
		__atomic_store_n((uint64_t *)(P.q + off), Q_READY | pad, __ATOMIC_RELEASE);
	return P.q + ((pos + pad) & (QUEUE_BYTES - 1));
}

size_t xpc_py_ready(void)
{
	uint64_t pos = P.qtail;

	if (!P.q)
		return 0;
	while (pos - P.qtail < QUEUE_BYTES) {
		uint64_t h = __atomic_load_n((uint64_t *)(P.q + (pos & (QUEUE_BYTES - 1))),
					     __ATOMIC_ACQUIRE);

		if (!(h & Q_READY))
			break;
		pos += (uint32_t)h;
	}
	return (size_t)(pos - P.qtail);
}

uint64_t xpc_py_drain(struct xp_writer *w, size_t *bytes)
{
	uint64_t n = 0;

	if (!P.q)
		return 0;
	while (*bytes) {
		uint64_t *hp = (uint64_t *)(P.q + (P.qtail & (QUEUE_BYTES - 1)));
		uint64_t h = __atomic_load_n(hp, __ATOMIC_ACQUIRE);
		uint32_t span = (uint32_t)h, len = (uint32_t)(h >> 32) & 0x7fffffffu;

		if (!(h & Q_READY) || span > *bytes)
			return n;
		if (len && w)
			xp_writer_append(w, XP_REC_PYCODE, hp + 1, len, NULL, 0);
		n += len != 0;
		/* zeroed, so that a header word is never stale for the next producer */
		memset(hp, 0, span);
		__atomic_store_n(&P.qtail, P.qtail + span, __ATOMIC_RELEASE);
		*bytes -= span;
	}
	return n;
}

/* A code object's record into the queue. 0, -ENOSPC (queue full: try again
 * later), or another -errno (never writable: do not try again). */
static int write_code(uintptr_t code, uint64_t id)
{
	struct xp_pyproc pp = pyproc();
	struct xp_pycode_src src;
	unsigned char *rec;
	uint32_t need;
	int len = xp_pycode_probe(&pp, code, &src);

	if (len)
		return len;
	need = 8 + src.need;
	rec = q_reserve(need);
	if (!rec)
		return -ENOSPC;
	len = xp_pycode_fill(&pp, &src, id, rec + 8);
	if (len < 0) {
		/* published empty: the writer skips it */
		__atomic_store_n((uint64_t *)rec, Q_READY | need, __ATOMIC_RELEASE);
		return len;
	}
	__atomic_store_n((uint64_t *)rec, Q_READY | (uint64_t)len << 32 | need, __ATOMIC_RELEASE);
	return 0;
}

/* ---- code ids ---- */

static struct code_entry *slot_of(uintptr_t code, unsigned i)
{
	uint64_t h = (code >> 4) * 0x9e3779b97f4a7c15ull;

	return &P.codes[((h >> 40) + i) & (CODE_SLOTS - 1)];
}

/* A slot's fields, read as one (a seqlock): returns its sequence, 0 for a
 * slot never used (v not filled), odd for one being written or changed
 * while read (v not to be used). */
static inline uint64_t entry_read(struct code_entry *e, struct code_entry *v)
{
	uint64_t s1 = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);

	if (s1 == 0 || (s1 & 1))
		return s1;
	v->addr = __atomic_load_n(&e->addr, __ATOMIC_RELAXED);
	v->id = __atomic_load_n(&e->id, __ATOMIC_RELAXED);
	v->filename = __atomic_load_n(&e->filename, __ATOMIC_RELAXED);
	v->firstlineno = __atomic_load_n(&e->firstlineno, __ATOMIC_RELAXED);
	v->size = __atomic_load_n(&e->size, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&e->seq, __ATOMIC_RELAXED) == s1 ? s1 : 1;
}

/* The id of the code object at code, writing its record the first time. */
__attribute__((noinline))
static uint64_t code_id_slow(uintptr_t code, uintptr_t fname, uint32_t first, uint32_t size)
{
	struct code_entry *victim = NULL;
	uint64_t vseq = 0, id;
	int err;

	for (unsigned i = 0; i < CODE_PROBES; i++) {
		struct code_entry *e = slot_of(code, i), v;
		uint64_t s1 = entry_read(e, &v);

		if (s1 & 1)
			continue;
		if (s1 == 0) {
			if (!victim)
				victim = e, vseq = 0;
			break;
		}
		if (v.addr == code) {
			if (v.filename == fname && v.firstlineno == first && v.size == size)
				return v.id;
			victim = e, vseq = s1;      /* the address was reused */
			break;
		}
		if (i == 0)
			victim = e, vseq = s1;      /* all full: the first probe goes */
	}
	id = __atomic_add_fetch(&P.next_id, 1, __ATOMIC_RELAXED);
	err = write_code(code, id);
	if (err) {
		count(&P.st.codes_lost);
		if (err == -ENOSPC)
			return id;              /* not remembered: the next launch tries again */
	} else {
		count(&P.st.codes);
	}
	if (victim && __atomic_compare_exchange_n(&victim->seq, &vseq, vseq + 1, 0,
						  __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		__atomic_store_n(&victim->addr, code, __ATOMIC_RELAXED);
		__atomic_store_n(&victim->id, id, __ATOMIC_RELAXED);
		__atomic_store_n(&victim->filename, fname, __ATOMIC_RELAXED);
		__atomic_store_n(&victim->firstlineno, first, __ATOMIC_RELAXED);
		__atomic_store_n(&victim->size, size, __ATOMIC_RELAXED);
		__atomic_store_n(&victim->seq, vseq + 2, __ATOMIC_RELEASE);
	}
	return id;
}

/* code_id_slow's first probe, inlined into the walk: a code object met
 * before usually sits in its first slot, and a call per frame (its saved
 * registers) was a third of code_id's instructions. */
static inline uint64_t code_id(uintptr_t code, uintptr_t fname, uint32_t first, uint32_t size)
{
	struct code_entry v;
	uint64_t s1 = entry_read(slot_of(code, 0), &v);

	if (s1 && !(s1 & 1) && v.addr == code && v.filename == fname && v.firstlineno == first &&
	    v.size == size)
		return v.id;
	return code_id_slow(code, fname, first, size);
}

/* ---- the walk ---- */

/* The thread state PyGILState bound to this thread, checked once. */
static uintptr_t thread_state(void)
{
	const struct xp_py_offsets *o = &P.o;
	uintptr_t tss = P.runtime + o->rt_tss, ts, tid = 0;

	if (!*(const volatile int *)(tss + o->tss_init))
		return 0;
	ts = (uintptr_t)pthread_getspecific(*(const volatile pthread_key_t *)(tss + o->tss_key));
	if (!ts || ts == my_ts)
		return ts;
	if (!sane(ts) || peek(&tid, ts + o->ts_thread_id, sizeof(tid)) || tid != (uintptr_t)pthread_self())
		return 1;                       /* not a thread state of this thread: wrong offsets */
	my_ts = ts;
	return ts;
}

#define WALK_STEPS (2 * XP_PY_MAX_FRAMES + 2)   /* Python frames and C-stack shims */

/* 3.11+: _PyInterpreterFrame chain with o's offsets. Frames written, or
 * -1 when unreadable; 3.12+: *entry, the first frame the C stack owns
 * (xpc_py_take's eval). */
static inline __attribute__((always_inline))
int walk_3x(const struct xp_py_offsets *o, uintptr_t f, struct xp_pyframe *out, uint16_t *flags,
	    uintptr_t *entry)
{
	int n = 0;

	for (int step = 0; f; step++) {
		uintptr_t code, prev, instr;
		int64_t size, off;
		uint8_t owner;
		uint32_t fl = 0;

		if (step == WALK_STEPS || !sane(f))
			return -1;
		owner = rd_u8(f, o->fr_owner);
		prev = rd_ptr(f, o->fr_previous);
		if (o->minor >= 12 && owner == o->owner_cstack) {
			if (!*entry)
				*entry = f;
			f = prev;
			continue;
		}
		code = rd_ptr(f, o->fr_code);
		if (!sane(code) || rd_ptr(code, o->ob_type) != P.code_type)
			return -1;
		size = rd_i64(code, o->ob_size);
		instr = rd_ptr(f, o->fr_instr);
		off = (int64_t)(instr - (code + o->co_code));
		if (size <= 0 || size > (1 << 24))
			return -1;
		/* not started yet (_PyFrame_IsIncomplete): not on the stack for Python either */
		if (owner != o->owner_gen && off < 2 * (int64_t)rd_i32(code, o->co_firsttraceable)) {
			f = prev;
			continue;
		}
		if (off < 0 || off >= 2 * size)
			return -1;
		if (o->minor == 11)
			fl = rd_u8(f, o->fr_entry) ? XP_PYFRAME_ENTRY : 0;
		else
			fl = prev && sane(prev) && rd_u8(prev, o->fr_owner) == o->owner_cstack ?
				XP_PYFRAME_ENTRY : 0;
		if (n == XP_PY_MAX_FRAMES) {
			*flags |= XP_PYSTACK_TRUNCATED;
			/* the frames stop here; the entry frame may be further up */
			for (; step < WALK_STEPS && !*entry && o->minor >= 12 && f && sane(f); step++) {
				if (rd_u8(f, o->fr_owner) == o->owner_cstack)
					*entry = f;
				f = rd_ptr(f, o->fr_previous);
			}
			break;
		}
		out[n].code_id = code_id(code, rd_ptr(code, o->co_filename),
					 (uint32_t)rd_i32(code, o->co_firstlineno), (uint32_t)size);
		out[n].instr_offset = (uint32_t)off;
		out[n].flags = fl;
		n++;
		f = prev;
	}
	return n;
}

/* The walk with one minor's offsets known when it is compiled (P.o is
 * table[minor - 10], checked against _Py_DebugOffsets on 3.13): fixed
 * displacements and no tests of the minor a frame, where loading each
 * offset from P.o and testing the minor made the walk some 15 ns a
 * frame with the caches warm. */
static int walk_311(uintptr_t f, struct xp_pyframe *out, uint16_t *flags, uintptr_t *entry)
{
	switch (P.o.minor) {
	case 11:
		return walk_3x(&table[1], f, out, flags, entry);
	case 12:
		return walk_3x(&table[2], f, out, flags, entry);
	default:
		return walk_3x(&table[3], f, out, flags, entry);
	}
}

/* 3.10: PyFrameObject chain (f_back), f_lasti in code units. */
static int walk_310(uintptr_t f, struct xp_pyframe *out, uint16_t *flags)
{
	const struct xp_py_offsets *o = &P.o;
	int n = 0;

	for (int step = 0; f; step++) {
		uintptr_t code, bytes;
		int64_t size;
		int32_t lasti;

		if (step == WALK_STEPS || !sane(f) || rd_ptr(f, o->ob_type) != P.frame_type)
			return -1;
		code = rd_ptr(f, o->fr_code);
		if (!sane(code) || rd_ptr(code, o->ob_type) != P.code_type)
			return -1;
		bytes = rd_ptr(code, o->co_code);
		if (!sane(bytes) || rd_ptr(bytes, o->ob_type) != P.bytes_type)
			return -1;
		size = rd_i64(bytes, o->ob_size);
		lasti = rd_i32(f, o->fr_instr);
		if (lasti >= 0) {
			if (size <= 0 || size > (1 << 25) || 2 * (int64_t)lasti >= size)
				return -1;
			if (n == XP_PY_MAX_FRAMES) {
				*flags |= XP_PYSTACK_TRUNCATED;
				break;
			}
			out[n].code_id = code_id(code, rd_ptr(code, o->co_filename),
						 (uint32_t)rd_i32(code, o->co_firstlineno), (uint32_t)size);
			out[n].instr_offset = (uint32_t)lasti * 2;
			out[n].flags = XP_PYFRAME_ENTRY;
			n++;
		}
		f = rd_ptr(f, o->fr_previous);
	}
	return n;
}

uint32_t xpc_py_take(void *dst, uint64_t ts, uint64_t correlation_id, uint32_t tid,
		     uintptr_t *eval)
{
	const struct xp_py_offsets *o = &P.o;
	struct xp_pystack *ps = dst;
	struct xp_pyframe *frames = (struct xp_pyframe *)(ps + 1);
	uintptr_t tstate, f;
	uint16_t flags = 0;
	size_t len;
	int n;

	*eval = 0;
	if (!__atomic_load_n(&P.on, __ATOMIC_ACQUIRE)) {
		if (P.present && !P.disabled)
			count(&P.st.unsupported);
		return 0;
	}
	tstate = thread_state();
	if (!tstate) {
		count(&P.st.no_thread);
		return 0;
	}
	if (tstate == 1) {
		count(&P.st.unreadable);
		return 0;
	}
	/* where the innermost evaluation runs on the C stack: 3.11, the
	 * _PyCFrame that tstate->cframe names (its root one lives in the
	 * thread state: the caller keeps only addresses inside its stack);
	 * 3.12+, the innermost entry frame, found by the walk; 3.10: none */
	f = rd_ptr(tstate, o->ts_frame);
	if (o->minor == 11)
		*eval = f;
	if (o->minor == 11 || o->minor == 12)
		f = sane(f) ? rd_ptr(f, o->cf_frame) : 0;
	n = o->minor == 10 ? walk_310(f, frames, &flags) : walk_311(f, frames, &flags, eval);
	if (n < 0) {
		count(&P.st.unreadable);
		return 0;
	}
	if (n == 0) {
		count(&P.st.no_thread);
		return 0;
	}
	if (flags & XP_PYSTACK_TRUNCATED)
		count(&P.st.truncated);
	ps->ts = ts;
	ps->correlation_id = correlation_id;
	ps->pid = (uint32_t)P.pid;
	ps->tid = tid;
	ps->nframes = (uint16_t)n;
	ps->flags = flags;
	ps->key = 0;
	len = sizeof(*ps) + (size_t)n * sizeof(struct xp_pyframe);
	return (uint32_t)len;
}

void xpc_py_stats(struct xpc_py_stats *out)
{
	out->no_thread = __atomic_load_n(&P.st.no_thread, __ATOMIC_RELAXED);
	out->unsupported = __atomic_load_n(&P.st.unsupported, __ATOMIC_RELAXED);
	out->unreadable = __atomic_load_n(&P.st.unreadable, __ATOMIC_RELAXED);
	out->truncated = __atomic_load_n(&P.st.truncated, __ATOMIC_RELAXED);
	out->codes = __atomic_load_n(&P.st.codes, __ATOMIC_RELAXED);
	out->codes_lost = __atomic_load_n(&P.st.codes_lost, __ATOMIC_RELAXED);
}
