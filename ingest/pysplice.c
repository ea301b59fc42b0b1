/* pysplice.c - Python frames into native launch stacks; see pysplice.h. */
#include "ingest/pysplice.h"

#include <string.h>

#include "db/db_schema.h"
#include "src/runfmt_py.h"

enum xp_pyrole xp_pyrole_of(int kind, const char *symbol)
{
	static const char eval[] = "_PyEval_EvalFrameDefault";

	if (kind == XP_FRAME_INLINED)
		return XP_PYROLE_INLINED;
	if (!symbol)
		return XP_PYROLE_NATIVE;
	if (kind == XP_FRAME_USER && !strncmp(symbol, eval, sizeof(eval) - 1) &&
	    (symbol[sizeof(eval) - 1] == '\0' || symbol[sizeof(eval) - 1] == '.'))
		return XP_PYROLE_EVAL;
	if (kind == XP_FRAME_JIT && !strncmp(symbol, "py::", 4))
		return XP_PYROLE_TRAMPOLINE;
	return XP_PYROLE_NATIVE;
}

/* Group g's frames (innermost first: py[first..last]), appended root first. */
static unsigned put_group(const struct xp_splice_in *in, const unsigned *gstart, unsigned g,
			  int64_t *out, unsigned n)
{
	for (unsigned i = gstart[g + 1]; i-- > gstart[g];)
		out[n++] = in->py[i];
	return n;
}

/* The end (exclusive) of the native unit starting at i: the frame and what
 * was inlined into it. */
static unsigned unit_end(const struct xp_splice_in *in, unsigned i)
{
	while (++i < in->nnative && in->role[i] == XP_PYROLE_INLINED)
		;
	return i;
}

unsigned xp_pysplice(const struct xp_splice_in *in, int64_t *out, int *how)
{
	/* group g is py[gstart[g] .. gstart[g + 1]), innermost group first; at
	 * most one group per Python frame (records hold at most 128) */
	unsigned gstart[XP_PY_MAX_FRAMES + 1];
	unsigned ng = 0, ne = 0, m, k, n = 0, npy = in->npy < XP_PY_MAX_FRAMES ? in->npy : XP_PY_MAX_FRAMES;
	int gap;

	for (unsigned i = 0; i < npy; i++) {
		if (i == 0 || in->entry[i - 1])
			gstart[ng++] = i;
	}
	gstart[ng] = npy;
	for (unsigned i = 0; i < in->nnative; i = unit_end(in, i))
		ne += in->role[i] == XP_PYROLE_EVAL;
	if (ne == ng || (ne > ng && in->truncated)) {
		m = ng;
		gap = 0;
	} else {
		m = ne < ng ? ne : 0;
		gap = 1;
	}
	/* what the native unwind did not reach: the outer groups, on top; above
	 * a gap frame unless the copy ended at an evaluation the unwind found */
	if (gap) {
		for (unsigned g = ng; g-- > m;)
			n = put_group(in, gstart, g, out, n);
		if (in->bounded && m > 0)
			gap = 0;
		else
			out[n++] = in->gap;
	}
	/* k: the activation's index from the leaf end */
	k = ne;
	for (unsigned i = 0, end; i < in->nnative; i = end) {
		end = unit_end(in, i);
		if (in->role[i] == XP_PYROLE_EVAL && --k < m) {
			n = put_group(in, gstart, k, out, n);
			continue;
		}
		/* a trampoline calls the activation right after it */
		if (in->role[i] == XP_PYROLE_TRAMPOLINE && end < in->nnative &&
		    in->role[end] == XP_PYROLE_EVAL && k > 0 && k - 1 < m)
			continue;
		for (unsigned j = i; j < end; j++)
			out[n++] = in->native[j];
	}
	*how = gap ? XP_SPLICE_GAP : XP_SPLICE_MATCHED;
	return n;
}
