/* autograd.c - PyTorch's autograd at each launch (see autograd.h).
 *
 * The handles, from PyTorch 2.x's libtorch_cpu (their source:
 * aten/src/ATen/SequenceNumber.h, record_function.h,
 * torch/csrc/autograd/function.h):
 *   uint64_t at::sequence_number::peek()          a thread_local read
 *   uint64_t at::RecordFunction::currentThreadId() the id a Node stores as
 *       thread_id_; it gives a thread an id on its first call, so it is
 *       called only on a thread that already made a node (peek() > 0),
 *       whose id Node's constructor gave it: nothing in the program changes
 *   std::shared_ptr<Node> torch::autograd::get_current_node()
 *       the node autograd's engine evaluates on this thread (a NodeGuard
 *       holds it), returned through a hidden pointer (Itanium C++ ABI): we
 *       drop our reference again as libstdc++'s _M_release does.
 * Node's layout (function.h): the vtable pointer, enable_shared_from_this's
 * weak_ptr (object, control block), uint64_t sequence_nr_, topological_nr_,
 * bool has_parent_, uint64_t thread_id_. Each read checks that the weak_ptr
 * names the node itself and the control block we were handed, that
 * has_parent_ is a bool and thread_id_ a small non-zero id: a node that
 * fails is not used; if the first reads all fail, the layout is not this
 * one and the library stops reading nodes, saying so. The node's type name
 * comes from its vtable's type_info (the ABI's, not PyTorch's).
 *
 * The handles are looked up by a finder thread of its own, detached, that
 * nobody ever joins or waits for: dl_iterate_phdr every LOOK_EVERY_NS
 * until a libtorch_cpu.so is mapped, then dlopen(RTLD_NOLOAD) and dlsym.
 * Those take glibc's loader lock, which the dlopen that is loading
 * libtorch_cpu holds until its constructors have run: waiting for it is how
 * the finder knows the library is ready to be called (an address read
 * from the file before then could run code whose TLS is not set up yet).
 * The program may exit while the finder waits (a constructor that calls
 * exit() holds that lock for good): the finder holds nothing of ours and
 * the exit path never waits for it. The writer thread, which the exit
 * joins, only reads the state (issue 38). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cupti/autograd.h"

#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SYM_PEEK "_ZN2at15sequence_number4peekEv"
#define SYM_THREAD "_ZN2at14RecordFunction15currentThreadIdEv"
#define SYM_NODE "_ZN5torch8autograd16get_current_nodeEv"

/* Node's fields, bytes from the object's start (PyTorch 2.x, x86-64) */
#define NODE_WEAK_THIS 8
#define NODE_SEQ 24
#define NODE_HAS_PARENT 40
#define NODE_THREAD 48
/* this many rejected reads before any good one: not the layout we know */
#define REJECTS_TO_GIVE_UP 16
/* the finder looks for libtorch this often until it is there */
#define LOOK_EVERY_NS 100000000L
/* the finder's stack: dlopen and dlsym, nothing deep */
#define FINDER_STACK (256u << 10)

enum { LOOKING = 0, ON = 1, OFF = 2 };

struct shared_ptr_abi {             /* std::shared_ptr<T> in libstdc++ */
	const unsigned char *ptr;
	void *ctrl;                 /* _Sp_counted_base: vptr, int use, int weak */
};

#define GAVE_UP(n) "the engine's nodes failed the layout check " #n " times: not" \
	" PyTorch 2.x's Node, node numbers not read"
#define GAVE_UP_TEXT(n) GAVE_UP(n)

static struct {
	int state;                  /* atomic: LOOKING, ON, OFF */
	int reported;               /* the writer's: state at the last info */
	uint64_t (*peek)(void);
	uint64_t (*thread_id)(void);
	void *(*current_node)(struct shared_ptr_abi *ret);
	uint64_t nodes, rejected;   /* atomic */
	/* atomic: what was found or why not; the text it names is written
	 * before it is published and never changed after */
	const char *reason;
	char found[400];            /* the finder's text */
} A = { .reason = "no libtorch_cpu.so loaded in the process (yet)" };

static __thread uint64_t my_thread_id;

void xpc_autograd_disable(void)
{
	__atomic_store_n(&A.reason, "turned off (XPCAP_AUTOGRAD=0)", __ATOMIC_RELEASE);
	__atomic_store_n(&A.state, OFF, __ATOMIC_RELEASE);
}

static int find_torch(struct dl_phdr_info *info, size_t size, void *path)
{
	const char *name = info->dlpi_name, *base = name ? strrchr(name, '/') : NULL;

	(void)size;
	base = base ? base + 1 : name;
	if (!base || strncmp(base, "libtorch_cpu.so", 15))
		return 0;
	snprintf(path, PATH_MAX, "%s", name);
	return 1;
}

/* One look, on the finder thread: ON, OFF (A.found says why) or still
 * LOOKING. */
static int look(void)
{
	static char path[PATH_MAX];
	const char *missing = NULL;
	void *h;

	if (!dl_iterate_phdr(find_torch, path))
		return LOOKING;
	/* already loaded: RTLD_NOLOAD only hands us its handle */
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	if (!h) {
		snprintf(A.found, sizeof(A.found), "%.300s: no handle (dlopen RTLD_NOLOAD)", path);
		return OFF;
	}
	*(void **)&A.peek = dlsym(h, SYM_PEEK);
	*(void **)&A.thread_id = dlsym(h, SYM_THREAD);
	*(void **)&A.current_node = dlsym(h, SYM_NODE);
	missing = !A.peek ? "at::sequence_number::peek()" :
		  !A.thread_id ? "at::RecordFunction::currentThreadId()" :
		  !A.current_node ? "torch::autograd::get_current_node()" : NULL;
	if (missing) {
		snprintf(A.found, sizeof(A.found), "%.300s exports no %s: a PyTorch this"
			 " library does not know", path, missing);
		return OFF;
	}
	snprintf(A.found, sizeof(A.found), "%.300s: sequence numbers and the engine's node"
		 " (Node layout of PyTorch 2.x)", path);
	return ON;
}

/* The finder: looks until libtorch_cpu is there, publishes, ends. A
 * state already OFF (XPCAP_AUTOGRAD=0, or the writer gave up) stays. */
static void *finder_main(void *arg)
{
	int state;

	(void)arg;
	while ((state = look()) == LOOKING) {
		if (__atomic_load_n(&A.state, __ATOMIC_ACQUIRE) != LOOKING)
			return NULL;
		nanosleep(&(struct timespec){ 0, LOOK_EVERY_NS }, NULL);
	}
	__atomic_store_n(&A.reason, A.found, __ATOMIC_RELEASE);
	__atomic_compare_exchange_n(&A.state, &(int){ LOOKING }, state, 0, __ATOMIC_ACQ_REL,
				    __ATOMIC_ACQUIRE);
	return NULL;
}

int xpc_autograd_start(void)
{
	pthread_attr_t attr;
	sigset_t all, old;
	pthread_t t;
	int err;

	if (__atomic_load_n(&A.state, __ATOMIC_ACQUIRE) != LOOKING)
		return 0;
	if ((err = pthread_attr_init(&attr)))
		return -err;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, FINDER_STACK);
	/* it must never take the program's signals */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&t, &attr, finder_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		__atomic_store_n(&A.reason, "no thread to look for libtorch_cpu.so", __ATOMIC_RELEASE);
		__atomic_store_n(&A.state, OFF, __ATOMIC_RELEASE);
	}
	return -err;
}

int xpc_autograd_resolve(void)
{
	int state = __atomic_load_n(&A.state, __ATOMIC_ACQUIRE), was = A.reported;

	A.reported = state;
	return state != was;
}

/* Our reference back, as libstdc++'s _Sp_counted_base::_M_release: the
 * engine's NodeGuard holds another, so the count never reaches 0 here, but
 * if it did, the node would be disposed as the program would have. */
static void release(void *ctrl)
{
	int *use = (int *)((char *)ctrl + 8), *weak = use + 1;
	void (*const *vt)(void *) = *(void (*const *const *)(void *))ctrl;

	if (__atomic_fetch_sub(use, 1, __ATOMIC_ACQ_REL) != 1)
		return;
	vt[2](ctrl);                /* _M_dispose */
	if (__atomic_fetch_sub(weak, 1, __ATOMIC_ACQ_REL) == 1)
		vt[3](ctrl);        /* _M_destroy */
}

static uint64_t load64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The node's record after the launch's (autograd.c's header says what is
 * checked); its bytes, 0 when the node failed the checks. */
static uint32_t read_node(const struct shared_ptr_abi *cur, unsigned char *dst)
{
	const unsigned char *n = cur->ptr;
	const void *const *weak = (const void *const *)(n + NODE_WEAK_THIS);
	struct xp_autograd_node *o = (struct xp_autograd_node *)dst;
	uint64_t thread = load64(n + NODE_THREAD);
	const char *name = NULL;
	const void *const *vt;

	if (weak[0] != n || weak[1] != cur->ctrl || n[NODE_HAS_PARENT] > 1 || !thread ||
	    thread >= (1ull << 32)) {
		__atomic_add_fetch(&A.rejected, 1, __ATOMIC_RELAXED);
		return 0;
	}
	vt = *(const void *const *const *)n;
	if (vt && vt[-1])
		name = *(const char *const *)((const char *)vt[-1] + 8);
	if (name && *name == '*')
		name++;
	memset(o, 0, sizeof(*o) + XP_AUTOGRAD_NODE_NAME_MAX);
	o->node_seq = load64(n + NODE_SEQ);
	o->node_thread = thread;
	o->name_len = name ? (uint16_t)strnlen(name, XP_AUTOGRAD_NODE_NAME_MAX) : 0;
	memcpy(o + 1, name ? name : "", o->name_len);
	__atomic_add_fetch(&A.nodes, 1, __ATOMIC_RELAXED);
	return (uint32_t)(sizeof(*o) + ((o->name_len + 7u) & ~7u));
}

/* Too many rejected reads and never a good one: stop, and say why. */
static void give_up_if_unknown(void)
{
	if (__atomic_load_n(&A.nodes, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&A.rejected, __ATOMIC_RELAXED) < REJECTS_TO_GIVE_UP)
		return;
	if (__atomic_compare_exchange_n(&A.state, &(int){ ON }, OFF, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		__atomic_store_n(&A.reason, GAVE_UP_TEXT(REJECTS_TO_GIVE_UP), __ATOMIC_RELEASE);
}

uint32_t xpc_autograd_take(void *dst, uint64_t correlation_id, uint32_t tid)
{
	struct xp_autograd *a = dst;
	struct shared_ptr_abi cur = { NULL, NULL };
	uint32_t len = sizeof(*a);
	uint64_t next, *mine;

	if (__atomic_load_n(&A.state, __ATOMIC_ACQUIRE) != ON)
		return 0;
	next = A.peek();
	A.current_node(&cur);
	if (!next && !cur.ctrl)
		return 0;
	mine = &my_thread_id;
	__asm__("" : "+r"(mine));       /* one __tls_get_addr, not one an access */
	if (next && !*mine)
		*mine = A.thread_id();
	a->correlation_id = correlation_id;
	a->tid = tid;
	a->flags = 0;
	a->thread_id = *mine;
	a->seq_next = next;
	if (cur.ctrl) {
		uint32_t n = cur.ptr ? read_node(&cur, (unsigned char *)(a + 1)) : 0;

		release(cur.ctrl);
		if (n) {
			a->flags |= XP_AUTOGRAD_NODE;
			len += n;
		} else {
			give_up_if_unknown();
		}
	}
	return len;
}

size_t xpc_autograd_info(void *buf, size_t size, uint64_t ts, uint32_t pid)
{
	struct xp_autograd_info *i = buf;
	const char *reason = __atomic_load_n(&A.reason, __ATOMIC_ACQUIRE);
	size_t len = strnlen(reason, sizeof(A.found) - 1), total;

	total = (sizeof(*i) + len + 7) & ~(size_t)7;
	if (total > size)
		return 0;
	memset(buf, 0, total);
	i->ts = ts;
	i->pid = pid;
	i->flags = __atomic_load_n(&A.state, __ATOMIC_ACQUIRE) == ON ? XP_AUTOGRAD_INFO_ON : 0;
	i->nodes = __atomic_load_n(&A.nodes, __ATOMIC_RELAXED);
	i->rejected = __atomic_load_n(&A.rejected, __ATOMIC_RELAXED);
	i->reason_len = (uint16_t)len;
	memcpy(i + 1, reason, len);
	return total;
}
