/* stacks.c - the stack prefix tree: a raw stack (kernel and user IPs,
 * with the Python frames taken at a launch spliced in) to a node id, each
 * node inserted once by the stackwriter (loader.h). */
#include "ingest/loader.h"

#include "src/array.h"

/* Adds frame under parent in the prefix tree (the stackwriter's nodes),
 * keeping a new node's depth and symbolized frames by id. */
static int tree_add(struct loader *L, int64_t parent, int64_t frame, int64_t *node)
{
	struct node_info info = { 1, L->frame_resolved[frame] & 1 };
	int fresh, err;

	if (parent) {
		info.depth = (uint16_t)(L->nodes[parent].depth + 1);
		info.resolved = (uint16_t)(L->nodes[parent].resolved + info.resolved);
	}
	err = xp_loader_written(L, xp_stackwriter_node(L->w, parent, frame, info.depth, node, &fresh));
	if (err || !fresh)
		return err;
	if (xp_array__reserve((void **)&L->nodes, &L->node_cap, (size_t)*node + 1,
			      sizeof(*L->nodes), 4096))
		return -ENOMEM;
	L->nodes[*node] = info;
	return 0;
}

/* A user frame of a stack under construction: into the tree, or, while a
 * launch's Python stack waits to be spliced in, into L->py_native. */
static int user_add(struct loader *L, int64_t *node, int64_t frame)
{
	if (!L->collecting)
		return tree_add(L, *node, frame, node);
	if (L->py_nnative >= sizeof(L->py_role))
		return 0;       /* cannot happen: 127 frames of at most 31 each */
	L->py_native[L->py_nnative] = frame;
	L->py_role[L->py_nnative++] = L->frame_resolved[frame] >> 1;
	return 0;
}

static int py_splice(struct loader *L, const struct xp_pystack_view *py, int64_t *node, int *how);

/* How many IPs of the stack, leaf first (kernel, then user), are the
 * recorder's own frames (db/ownframes.h): *cut, or a negative errno. */
static int own_cut(struct loader *L, uint32_t pid, uint64_t ts, const uint64_t *ips, unsigned nk,
		   unsigned nu, unsigned *cut)
{
	uint8_t own[64];
	unsigned n = 0;
	int64_t frame;
	int err;

	*cut = 0;
	for (unsigned i = 0; i < nk + nu && n < sizeof(own); i++) {
		if (i < nk)
			err = xp_loader_kernel_frame(L, ips[i], &frame);
		else
			err = xp_loader_user_frame(L, pid, ts, ips[i], i != nk, &frame);
		if (err)
			return err;
		if ((uint64_t)frame & CHAIN)    /* an inline chain: its function's module */
			frame = L->chains[((uint64_t)frame & ~CHAIN) >> 5];
		own[n] = L->frame_own[frame];
		if (own[n++] == XP_OWN_NONE)
			break;
	}
	*cut = (unsigned)xp_own_cut(own, n);
	return 0;
}

/* The stack id of kernel + user IPs (each leaf first), root first in the tree:
 * outermost user caller ... user leaf, then kernel entry ... kernel leaf.
 * A launch's Python stack (py, else NULL) goes into the user part (pysplice.h). */
int xp_loader_stack_id(struct loader *L, uint32_t pid, uint64_t ts, const uint64_t *ips,
		    unsigned nk, unsigned nu, const struct xp_pystack_view *py, int64_t *id)
{
	int cacheable = !xp_mappings_time_dependent(L->maps, pid);
	uint64_t h1 = 0, h2 = 0, *slot = NULL;
	int64_t node = 0, frame;
	int fresh = 1, err, how = 0;
	unsigned cut, kcut, ucut;

	if (cacheable) {
		h1 = xp_hash64(pid ^ ((uint64_t)nk << 32) ^ ((uint64_t)nu << 48)) ^
		     (py ? xp_hash64(~(uint64_t)py->id ^ (uint64_t)py->bounded << 40 ^
				     (uint64_t)py->sampled << 41) : 0);
		h2 = xp_hash64(h1 + 0x9e3779b97f4a7c15ull);
		for (unsigned i = 0; i < nk + nu; i++) {
			h1 = xp_hash64(h1 ^ ips[i]);
			h2 = xp_hash64(h2 + ips[i] * 0x9e3779b97f4a7c15ull);
		}
		err = xp_u64map_upsert(&L->rawstacks, h1, h2, &slot, &fresh);
		if (err)
			return err;
		if (!fresh) {
			/* bit 62: a Python stack joined above a gap */
			if (*slot >> 62)
				xp_pystore_joined_gap(L->py, pid);
			*id = (int64_t)(*slot & ~(3ull << 62));
			return 0;
		}
	}
	if ((err = own_cut(L, pid, ts, ips, nk, nu, &cut)))
		return err;
	kcut = cut < nk ? cut : nk;
	ucut = cut - kcut;
	L->collecting = py != NULL;
	L->py_nnative = 0;
	for (unsigned i = nu; i-- > ucut;) {
		err = xp_loader_user_frame(L, pid, ts, ips[nk + i], i != 0, &frame);
		if (err)
			return err;
		if ((uint64_t)frame & CHAIN) {
			size_t start = ((uint64_t)frame & ~CHAIN) >> 5, n = (uint64_t)frame & 31;

			for (size_t j = 0; j < n && !err; j++)
				err = user_add(L, &node, L->chains[start + j]);
		} else {
			err = user_add(L, &node, frame);
		}
		if (err)
			return err;
	}
	L->collecting = 0;
	if (py && (err = py_splice(L, py, &node, &how)))
		return err;
	/* launches only: a CPU sample's native stack often stops short */
	if (how == XP_SPLICE_GAP && py && !py->sampled)
		xp_pystore_joined_gap(L->py, pid);
	else
		how = 0;
	for (unsigned i = nk; i-- > kcut;) {
		err = xp_loader_kernel_frame(L, ips[i], &frame);
		if (err)
			return err;
		err = tree_add(L, node, frame, &node);
		if (err)
			return err;
	}
	*id = node;
	if (cacheable)
		*xp_u64map_find(&L->rawstacks, h1, h2) = (uint64_t)node |
			(uint64_t)(how == XP_SPLICE_GAP) << 62;
	return 0;
}

/* The frame of a Python line (its code's qualified name, file as recorded
 * and line: db/pyframe.h), cached per code and offset; a code object that
 * was not recorded has a placeholder frame without a line. */
static int py_frame(struct loader *L, const struct xp_pyframe_ref *f, int64_t *id)
{
	uint64_t k1 = TAG_PYTHON | f->code, k2 = f->code == XP_PYCODE_NONE ? 0 : f->offset, *slot;
	const char *file, *qualname;
	int64_t module;
	int line, fresh, err = xp_u64map_upsert(&L->ipcache, k1, k2, &slot, &fresh);

	if (err)
		return err;
	if (!fresh) {
		*id = (int64_t)*slot;
		return 0;
	}
	if (xp_pystore_frame(L->py, f->code, f->offset, &file, &qualname, &line) < 0) {
		err = xp_loader_intern_str(L, "[python]", &module);
		if (!err)
			err = xp_loader_frame_id(L, "[python code not recorded]", module,
						 XP_FRAME_PYTHON, id);
	} else {
		err = xp_loader_intern_str(L, file, &module);
		if (!err)
			err = xp_loader_pyline_id(L, qualname, module, line, id);
	}
	if (err)
		return err;
	*xp_u64map_find(&L->ipcache, k1, k2) = (uint64_t)*id;
	return 0;
}

/* A CPU sample's native stack through code without frame pointers (a
 * distribution's python3) is garbage beyond the interpreter's frames: an
 * unresolved frame rootward of the outermost evaluation. Then the stack
 * starts at that evaluation (returned: how many frames to skip), and the
 * Python frames above it say what called it. */
static unsigned broken_root(const struct loader *L)
{
	unsigned first_eval = L->py_nnative, i;

	for (i = 0; i < L->py_nnative; i++)
		if (L->py_role[i] == XP_PYROLE_EVAL) {
			first_eval = i;
			break;
		}
	for (i = 0; i < first_eval && first_eval < L->py_nnative; i++)
		if (!(L->frame_resolved[L->py_native[i]] & 1))
			return first_eval;
	return 0;
}

/* The user frames collected in L->py_native with the Python stack spliced
 * in (pysplice.h), into the tree under *node. */
static int py_splice(struct loader *L, const struct xp_pystack_view *py, int64_t *node, int *how)
{
	int64_t frames[XP_PY_MAX_FRAMES];
	uint8_t entry[XP_PY_MAX_FRAMES];
	struct xp_splice_in in = { L->py_native, L->py_role, L->py_nnative, frames, entry,
				   py->n < XP_PY_MAX_FRAMES ? py->n : XP_PY_MAX_FRAMES,
				   py->truncated, py->bounded, 0 };
	unsigned n;
	int err = 0;

	for (unsigned i = 0; i < in.npy && !err; i++) {
		err = py_frame(L, &py->frames[i], &frames[i]);
		entry[i] = py->frames[i].entry;
	}
	if (!err && !L->gap_frame)
		err = xp_loader_frame_id(L, "[native frames not unwound]", L->unknown_module, XP_FRAME_GAP,
			       &L->gap_frame);
	in.gap = L->gap_frame;
	if (py->sampled) {
		unsigned skip = broken_root(L);

		in.native += skip;
		in.role += skip;
		in.nnative -= skip;
		/* cut at an evaluation on purpose: outer groups go on top of it */
		in.bounded = in.bounded || skip;
	}
	n = err ? 0 : xp_pysplice(&in, L->py_out, how);
	for (unsigned i = 0; i < n && !err; i++)
		err = tree_add(L, *node, L->py_out[i], node);
	return err;
}

