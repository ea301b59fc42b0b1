/* fake-torch.c - libtorch_cpu.so for tests: the three functions the
 * injection library takes from PyTorch (cupti/autograd.c), under
 * their C++ names, over a Node laid out as PyTorch 2.x's (vtable pointer,
 * enable_shared_from_this's weak_ptr, sequence_nr_, topological_nr_,
 * has_parent_, thread_id_), so the library's reading and its checks run
 * without PyTorch. The caller sets what the "engine" runs:
 *   fake_torch_make_node(seq, thread, good)   // a node made, its number
 *   fake_torch_run(node)                      // this thread evaluates it (NULL: none) */
#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

struct type_info_abi {              /* std::type_info: vptr, mangled name */
	const void *vptr;
	const char *name;
};

struct ctrl {                       /* _Sp_counted_base: vptr, use, weak */
	const void *vptr;
	int use, weak;
};

struct node {
	const void *vptr;
	const void *weak_ptr, *weak_ctrl;   /* enable_shared_from_this */
	uint64_t sequence_nr, topological_nr;
	uint8_t has_parent, pad[7];
	uint64_t thread_id;
	struct ctrl ctrl;                   /* its control block, here for brevity */
};

static const struct type_info_abi addmm_type = { NULL, "N5torch8autograd9generated14AddmmBackward0E" };
/* a vtable: [-1] the type_info, then (unused) virtual functions */
static const void *const addmm_vtable[2] = { &addmm_type, NULL };
static const void *const ctrl_vtable[5] = { NULL, NULL, NULL, NULL, NULL };

static __thread uint64_t next_seq;  /* at::sequence_number's counter */
static __thread uint64_t my_id;     /* RecordFunction's thread id */
static uint64_t ids;
static __thread struct node *running;
static struct node nodes[64];
static unsigned nnodes;

/* at::sequence_number::peek() */
EXPORT uint64_t _ZN2at15sequence_number4peekEv(void)
{
	return next_seq;
}

/* at::RecordFunction::currentThreadId() */
EXPORT uint64_t _ZN2at14RecordFunction15currentThreadIdEv(void)
{
	if (!my_id)
		my_id = __atomic_add_fetch(&ids, 1, __ATOMIC_RELAXED);
	return my_id;
}

/* std::shared_ptr<Node> torch::autograd::get_current_node(): returned through
 * the hidden pointer, one more reference taken */
EXPORT void *_ZN5torch8autograd16get_current_nodeEv(void **ret)
{
	ret[0] = running;
	ret[1] = running ? &running->ctrl : NULL;
	if (running)
		__atomic_add_fetch(&running->ctrl.use, 1, __ATOMIC_ACQ_REL);
	return ret;
}

/* A node made on this thread (its number the thread's next); good = 0
 * makes one whose weak_ptr does not name it (another layout). */
EXPORT void *fake_torch_make_node(int good)
{
	struct node *n = &nodes[nnodes++ % 64];

	n->vptr = &addmm_vtable[1];
	n->weak_ptr = good ? n : NULL;
	n->weak_ctrl = &n->ctrl;
	n->sequence_nr = next_seq++;
	n->thread_id = _ZN2at14RecordFunction15currentThreadIdEv();
	n->ctrl.vptr = &ctrl_vtable[0];
	n->ctrl.use = 2;            /* the graph's and the engine's */
	n->ctrl.weak = 1;
	return n;
}

EXPORT void fake_torch_run(void *node)
{
	running = node;
}

EXPORT int fake_torch_refs(void *node)
{
	return __atomic_load_n(&((struct node *)node)->ctrl.use, __ATOMIC_ACQUIRE);
}
