/* pystacks.c - Python stacks, code objects and interpreter facts of a run;
 * see pystacks.h. Equal Python stacks are kept once (a program launches
 * from a few hundred places, millions of times); a launch is a map entry. */
#include "ingest/pystacks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "ingest/pylines.h"
#include "src/runfile.h"
#include "src/runfmt_py.h"
#include "src/u64map.h"

struct code {
	uint32_t first_line;
	uint16_t version;
	char *file, *qualname;      /* NUL-terminated copies */
	uint8_t *table;
	uint32_t table_len;
};

struct raw_frame {              /* as recorded: the code id is resolved at launch time */
	uint64_t code_id;
	uint32_t offset;
	uint8_t entry;
};

struct stack {
	uint32_t pid;
	uint32_t first;             /* in frames */
	uint16_t n;
	uint16_t truncated;
};

struct thread_snaps {
	uint64_t *ts;
	uint32_t *stack;            /* index + 1 into stacks */
	size_t n, cap, cap2;
	uint64_t gap;               /* median ns between reads, 0 until asked */
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median time between the thread's reads: the reader's own period,
 * longer than -F's where a loaded machine left it little CPU. */
static uint64_t median_gap(struct thread_snaps *t)
{
	uint64_t *g;

	if (t->gap || t->n < 2)
		return t->gap;
	g = malloc((t->n - 1) * sizeof(*g));
	if (!g)
		return 0;
	for (size_t i = 1; i < t->n; i++)
		g[i - 1] = t->ts[i] - t->ts[i - 1];
	qsort(g, t->n - 1, sizeof(*g), cmp_u64);
	t->gap = g[(t->n - 1) / 2];
	free(g);
	return t->gap;
}

struct xp_pystore {
	struct code *codes;
	size_t ncodes, codes_cap;
	struct xp_u64map code_ids;  /* (pid, code_id) -> index + 1 */
	struct raw_frame *frames;
	size_t nframes, frames_cap;
	struct stack *stacks;
	size_t nstacks, stacks_cap;
	struct xp_u64map distinct;  /* 128-bit hash of a stack -> index + 1 */
	struct xp_u64map launches;  /* (pid, correlation id) -> stack index + 1 */
	struct xp_u64map keyed;     /* (pid, stack key) -> its latest stack index + 1 */
	int reader_stream;          /* the records come from xpcap's frame reader */
	struct thread_snaps *threads;   /* xpcap's reads of each Python thread, in time order */
	size_t nthreads, threads_cap;
	struct xp_u64map thread_ids;    /* (pid, tid) -> index + 1 */
	struct xp_pyproc_stats *procs;
	size_t nprocs, procs_cap;
	struct xp_u64map proc_ids;  /* pid -> index + 1 */
	struct xp_pyframe_ref view[XP_PY_MAX_FRAMES];
	int any;
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	return xp_array__reserve(p, cap, need, size, 64);
}

struct xp_pystore *xp_pystore_new(void)
{
	struct xp_pystore *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	xp_u64map_init(&s->code_ids);
	xp_u64map_init(&s->distinct);
	xp_u64map_init(&s->launches);
	xp_u64map_init(&s->keyed);
	xp_u64map_init(&s->proc_ids);
	xp_u64map_init(&s->thread_ids);
	return s;
}

void xp_pystore_free(struct xp_pystore *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ncodes; i++) {
		free(s->codes[i].file);
		free(s->codes[i].qualname);
		free(s->codes[i].table);
	}
	free(s->codes);
	free(s->frames);
	free(s->stacks);
	free(s->procs);
	for (size_t i = 0; i < s->nthreads; i++) {
		free(s->threads[i].ts);
		free(s->threads[i].stack);
	}
	free(s->threads);
	xp_u64map_free(&s->thread_ids);
	xp_u64map_free(&s->code_ids);
	xp_u64map_free(&s->distinct);
	xp_u64map_free(&s->launches);
	xp_u64map_free(&s->keyed);
	xp_u64map_free(&s->proc_ids);
	free(s);
}

static struct xp_pyproc_stats *proc(struct xp_pystore *s, uint32_t pid)
{
	uint64_t *slot;
	int fresh;

	if (xp_u64map_upsert(&s->proc_ids, pid, 0, &slot, &fresh))
		return NULL;
	if (!fresh)
		return &s->procs[*slot - 1];
	if (grow((void **)&s->procs, &s->procs_cap, s->nprocs + 1, sizeof(*s->procs))) {
		*slot = 0;      /* never left dangling: the next call retries */
		return NULL;
	}
	memset(&s->procs[s->nprocs], 0, sizeof(s->procs[0]));
	s->procs[s->nprocs].pid = pid;
	*xp_u64map_find(&s->proc_ids, pid, 0) = ++s->nprocs;
	return &s->procs[s->nprocs - 1];
}

/* A copy with NUL bytes made visible: a name goes into SQL text and lines. */
static char *copy_str(const char *p, size_t n)
{
	char *s = malloc(n + 1);

	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++)
		s[i] = p[i] ? p[i] : '?';
	s[n] = '\0';
	return s;
}

static int add_code(struct xp_pystore *s, const struct xp_record_header *h)
{
	const struct xp_pycode *c = xp_record_payload(h);
	uint32_t len = xp_record_payload_len(h);
	const char *p = (const char *)(c + 1);
	struct xp_pyproc_stats *ps;
	struct code *k;
	uint64_t *slot;
	int fresh;

	if (len < sizeof(*c) ||
	    (uint64_t)c->filename_len + c->qualname_len + c->linetable_len > len - sizeof(*c))
		return -EBADMSG;
	if (!(ps = proc(s, c->pid)))
		return -ENOMEM;
	/* the library's code objects, not xpcap's frame reader's (pyframes.xpr),
	 * whatever their ids */
	ps->codes += !s->reader_stream;
	if (xp_u64map_upsert(&s->code_ids, c->pid, c->code_id, &slot, &fresh))
		return -ENOMEM;
	if (!fresh)
		return 1;           /* written once per process; a repeat changes nothing */
	*slot = 0;
	if (grow((void **)&s->codes, &s->codes_cap, s->ncodes + 1, sizeof(*s->codes)))
		return -ENOMEM;
	k = memset(&s->codes[s->ncodes], 0, sizeof(*k));
	k->first_line = c->first_line;
	k->version = c->py_version;
	k->table_len = c->linetable_len;
	k->file = copy_str(p, c->filename_len);
	k->qualname = copy_str(p + c->filename_len, c->qualname_len);
	k->table = malloc(c->linetable_len ? c->linetable_len : 1);
	if (!k->file || !k->qualname || !k->table) {
		free(k->file);
		free(k->qualname);
		free(k->table);
		return -ENOMEM;
	}
	memcpy(k->table, p + c->filename_len + c->qualname_len, c->linetable_len);
	*xp_u64map_find(&s->code_ids, c->pid, c->code_id) = ++s->ncodes;
	return 1;
}

/* The launch (pid, corr) has the stack at index + 1 idx (0: none). */
static int join_launch(struct xp_pystore *s, const struct xp_pystack *ps, uint64_t idx)
{
	uint64_t *slot;
	int fresh;

	if (!idx)
		return 1;
	if (xp_u64map_upsert(&s->launches, ps->pid, ps->correlation_id, &slot, &fresh))
		return -ENOMEM;
	*slot = idx;            /* a repeated id: the later stack wins */
	return 1;
}

/* A launch that named an earlier copy: the frames of its key's latest
 * stack, which came before it in the stream (none if that was lost). */
static int add_borrowed(struct xp_pystore *s, const struct xp_pystack *ps)
{
	const uint64_t *idx = ps->key ? xp_u64map_find(&s->keyed, ps->pid, ps->key) : NULL;

	return join_launch(s, ps, idx ? *idx : 0);
}

/* The index + 1 of the distinct stack of these frames (kept once), or
 * -errno. */
static int64_t intern_stack(struct xp_pystore *s, const struct xp_pystack *ps,
			    const struct xp_pyframe *f)
{
	uint64_t h1, h2, *slot;
	int fresh;

	h1 = xp_hash64(ps->pid ^ (uint64_t)ps->nframes << 32 ^ (uint64_t)(ps->flags & 1) << 48);
	h2 = xp_hash64(h1 + 0x9e3779b97f4a7c15ull);
	for (unsigned i = 0; i < ps->nframes; i++) {
		uint64_t v = f[i].code_id ^ ((uint64_t)f[i].instr_offset << 1 | (f[i].flags & 1)) *
			     0xff51afd7ed558ccdull;

		h1 = xp_hash64(h1 ^ v);
		h2 = xp_hash64(h2 + v * 0x9e3779b97f4a7c15ull);
	}
	if (xp_u64map_upsert(&s->distinct, h1, h2, &slot, &fresh))
		return -ENOMEM;
	if (fresh) {
		struct stack *st;

		*slot = 0;
		if (grow((void **)&s->stacks, &s->stacks_cap, s->nstacks + 1, sizeof(*s->stacks)) ||
		    grow((void **)&s->frames, &s->frames_cap, s->nframes + ps->nframes,
			 sizeof(*s->frames)))
			return -ENOMEM;
		if (s->nframes + ps->nframes > UINT32_MAX)
			return -E2BIG;
		st = &s->stacks[s->nstacks];
		st->pid = ps->pid;
		st->first = (uint32_t)s->nframes;
		st->n = ps->nframes;
		st->truncated = ps->flags & XP_PYSTACK_TRUNCATED;
		for (unsigned i = 0; i < ps->nframes; i++) {
			struct raw_frame *r = &s->frames[s->nframes++];

			r->code_id = f[i].code_id;
			r->offset = f[i].instr_offset;
			r->entry = !!(f[i].flags & XP_PYFRAME_ENTRY);
		}
		*xp_u64map_find(&s->distinct, h1, h2) = ++s->nstacks;
	}
	return (int64_t)*xp_u64map_find(&s->distinct, h1, h2);
}

/* A record's pystack and frames, checked: NULL when malformed. */
static const struct xp_pystack *pystack_of(const struct xp_record_header *h)
{
	const struct xp_pystack *ps = xp_record_payload(h);
	uint32_t len = xp_record_payload_len(h);

	if (len < sizeof(*ps) || ps->nframes > XP_PY_MAX_FRAMES ||
	    (uint64_t)ps->nframes * sizeof(struct xp_pyframe) > len - sizeof(*ps))
		return NULL;
	return ps;
}

static int add_stack(struct xp_pystore *s, const struct xp_record_header *h)
{
	const struct xp_pystack *ps = pystack_of(h);
	struct xp_pyproc_stats *pp;
	uint64_t *slot;
	int64_t idx;
	int fresh;

	if (!ps)
		return -EBADMSG;
	if (!(pp = proc(s, ps->pid)))
		return -ENOMEM;
	pp->stacks++;
	if (ps->flags & XP_PYSTACK_BORROWED)
		return add_borrowed(s, ps);
	if (!ps->nframes)
		return 1;           /* nothing to join */
	idx = intern_stack(s, ps, (const void *)(ps + 1));
	if (idx < 0)
		return (int)idx;
	if (ps->key) {
		if (xp_u64map_upsert(&s->keyed, ps->pid, ps->key, &slot, &fresh))
			return -ENOMEM;
		*slot = (uint64_t)idx;
	}
	return join_launch(s, ps, (uint64_t)idx);
}

/* One of xpcap's reads of a thread's chain, after the thread's others. */
static int add_snapshot(struct xp_pystore *s, const struct xp_record_header *h)
{
	const struct xp_pystack *ps = pystack_of(h);
	struct xp_pyproc_stats *pp;
	struct thread_snaps *t;
	uint64_t *slot;
	int64_t idx;
	int fresh;

	if (!ps)
		return -EBADMSG;
	if (!(pp = proc(s, ps->pid)))
		return -ENOMEM;
	pp->snapshots++;
	if (!ps->nframes)
		return 1;
	idx = intern_stack(s, ps, (const void *)(ps + 1));
	if (idx < 0)
		return (int)idx;
	if (xp_u64map_upsert(&s->thread_ids, ps->pid, ps->tid, &slot, &fresh))
		return -ENOMEM;
	if (fresh) {
		*slot = 0;
		if (grow((void **)&s->threads, &s->threads_cap, s->nthreads + 1, sizeof(*s->threads)))
			return -ENOMEM;
		memset(&s->threads[s->nthreads], 0, sizeof(*s->threads));
		*xp_u64map_find(&s->thread_ids, ps->pid, ps->tid) = ++s->nthreads;
	}
	t = &s->threads[*xp_u64map_find(&s->thread_ids, ps->pid, ps->tid) - 1];
	if (t->n && ps->ts < t->ts[t->n - 1])
		return -EBADMSG;    /* one reader writes each thread's in time order */
	if (grow((void **)&t->ts, &t->cap, t->n + 1, sizeof(*t->ts)) ||
	    grow((void **)&t->stack, &t->cap2, t->n + 1, sizeof(*t->stack)))
		return -ENOMEM;
	t->ts[t->n] = ps->ts;
	t->stack[t->n++] = (uint32_t)idx;
	t->gap = 0;
	return 1;
}

static int add_info(struct xp_pystore *s, const struct xp_record_header *h)
{
	const struct xp_pyinfo *in = xp_record_payload(h);
	uint32_t len = xp_record_payload_len(h);
	struct xp_pyproc_stats *p;

	if (len < sizeof(*in) || in->reason_len > len - sizeof(*in))
		return -EBADMSG;
	if (!(p = proc(s, in->pid)))
		return -ENOMEM;
	if (in->flags & XP_PYINFO_SAMPLER) {
		p->sampler_info = 1;
		p->sampler_supported = !!(in->flags & XP_PYINFO_SUPPORTED);
		if (in->py_hexversion)
			p->hexversion = in->py_hexversion;
		snprintf(p->sampler_reason, sizeof(p->sampler_reason), "%.*s", (int)in->reason_len,
			 (const char *)(in + 1));
		for (char *c = p->sampler_reason; *c; c++)
			if ((unsigned char)*c < 0x20)
				*c = ' ';
		return 1;
	}
	p->has_info = 1;
	p->hexversion = in->py_hexversion;
	p->supported = !!(in->flags & XP_PYINFO_SUPPORTED);
	snprintf(p->reason, sizeof(p->reason), "%.*s", (int)in->reason_len, (const char *)(in + 1));
	for (char *c = p->reason; *c; c++)
		if ((unsigned char)*c < 0x20)
			*c = ' ';
	return 1;
}

static int count_lost(struct xp_pystore *s, uint32_t stream_pid, const struct xp_record_header *h)
{
	const struct xp_lost *l = xp_record_payload(h);
	struct xp_pyproc_stats *p;

	if (xp_record_payload_len(h) < sizeof(*l) || l->kind != XP_REC_PYSTACK)
		return 0;           /* load.c checks and keeps every loss */
	if (!(p = proc(s, stream_pid)))
		return -ENOMEM;
	switch (l->reason) {
	case XP_LOST_PY_UNSUPPORTED: p->lost_unsupported += l->count; break;
	case XP_LOST_PY_NO_THREAD: p->lost_no_thread += l->count; break;
	case XP_LOST_PY_UNREADABLE: p->lost_unreadable += l->count; break;
	default: p->lost_other += l->count; break;
	}
	s->any = 1;
	return 0;
}

int xp_pystore_record(struct xp_pystore *s, uint32_t stream_pid, const struct xp_record_header *h)
{
	int r;

	switch (h->type) {
	case XP_REC_PYSTACK: r = add_stack(s, h); break;
	case XP_REC_PYCODE: r = add_code(s, h); break;
	case XP_REC_PYINFO: r = add_info(s, h); break;
	case XP_REC_PYSAMPLE: r = add_snapshot(s, h); break;
	case XP_REC_LOST: return count_lost(s, stream_pid, h);
	default: return 0;
	}
	s->any |= r == 1;
	return r;
}

void xp_pystore_stream(struct xp_pystore *s, int from_reader)
{
	s->reader_stream = from_reader;
}

int xp_pystore_any(const struct xp_pystore *s)
{
	return s->any;
}

static int stack_view(struct xp_pystore *s, uint32_t pid, uint64_t idx,
		      struct xp_pystack_view *v);

/* Stacks a and b (index + 1) run the same code objects, called from the
 * same instructions: they differ at most in the innermost frame's offset. */
static int same_calls(const struct xp_pystore *s, uint32_t a, uint32_t b)
{
	const struct stack *x = &s->stacks[a - 1], *y = &s->stacks[b - 1];

	if (a == b)
		return 1;
	if (x->n != y->n || !x->n)
		return 0;
	for (unsigned i = 0; i < x->n; i++) {
		const struct raw_frame *f = &s->frames[x->first + i], *g = &s->frames[y->first + i];

		if (f->code_id != g->code_id || (i && f->offset != g->offset))
			return 0;
	}
	return 1;
}

int xp_pystore_launch(struct xp_pystore *s, uint32_t pid, uint64_t corr,
		      struct xp_pystack_view *v)
{
	struct xp_pyproc_stats *p;
	uint64_t *idx;

	if (!s->any)
		return 0;
	if (!(p = proc(s, pid)))
		return -ENOMEM;
	p->launches++;
	idx = xp_u64map_find(&s->launches, pid, corr);
	if (!idx || !*idx)
		return 0;
	p->with_python++;
	return stack_view(s, pid, *idx, v);
}

/* The view of stack index + 1 idx of pid's. */
static int stack_view(struct xp_pystore *s, uint32_t pid, uint64_t idx, struct xp_pystack_view *v)
{
	const struct stack *st = &s->stacks[idx - 1];

	for (unsigned i = 0; i < st->n; i++) {
		const struct raw_frame *r = &s->frames[st->first + i];
		uint64_t *c = xp_u64map_find(&s->code_ids, pid, r->code_id);

		s->view[i].code = c && *c ? (uint32_t)(*c - 1) : XP_PYCODE_NONE;
		s->view[i].offset = r->offset;
		s->view[i].entry = r->entry;
	}
	v->frames = s->view;
	v->n = st->n;
	v->truncated = st->truncated;
	v->bounded = 0;
	v->sampled = 0;
	v->id = (uint32_t)(idx - 1);
	return 1;
}

int xp_pystore_sampled(struct xp_pystore *s, uint32_t pid, uint32_t tid, uint64_t ts,
		       uint64_t off_until, uint64_t window, struct xp_pystack_view *v)
{
	struct xp_pyproc_stats *p;
	struct thread_snaps *t;
	const uint64_t *slot;
	size_t lo = 0, hi, best;

	if (!s->any || !xp_u64map_find(&s->proc_ids, pid, 0))
		return 0;
	if (!(p = proc(s, pid)))
		return -ENOMEM;
	/* an off-CPU interval is no CPU sample: waits are counted apart
	 * (pywaits.h) */
	p->samples += !off_until;
	slot = xp_u64map_find(&s->thread_ids, pid, tid);
	if (!slot || !*slot)
		return 0;
	p->python_samples += !off_until;
	t = &s->threads[*slot - 1];
	if (median_gap(t) > window)
		window = t->gap;
	/* the first read at or after ts, and the one before it */
	hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->ts[mid] < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	best = lo;
	/* off CPU until off_until: a read in between is exact, nothing ran */
	if (lo < t->n && t->ts[lo] <= off_until)
		goto found;
	if (lo == t->n || (lo > 0 && ts - t->ts[lo - 1] < t->ts[lo] - ts))
		best = lo - 1;
	if (best >= t->n)
		return 0;
	/* within one period (the sampler's, or the reader's where it fell
	 * behind); or between two reads of the same calls (only the innermost
	 * line moved in between) */
	if ((t->ts[best] > ts ? t->ts[best] - ts : ts - t->ts[best]) > window &&
	    !(lo > 0 && lo < t->n && same_calls(s, t->stack[lo - 1], t->stack[lo])))
		return 0;
found:
	p->sampled_with += !off_until;
	stack_view(s, pid, t->stack[best], v);
	v->sampled = 1;
	return 1;
}

void xp_pystore_joined_gap(struct xp_pystore *s, uint32_t pid)
{
	struct xp_pyproc_stats *p = proc(s, pid);

	if (p)
		p->joined_gap++;
}

int xp_pystore_frame(const struct xp_pystore *s, uint32_t code, uint32_t offset,
		     const char **file, const char **qualname, int *line)
{
	const struct code *c;

	if (code >= s->ncodes)
		return -ENOENT;
	c = &s->codes[code];
	*file = c->file;
	*qualname = c->qualname;
	*line = xp_pylines_line(c->version, c->table, c->table_len, c->first_line, offset);
	if (*line < 0)
		*line = -1;
	return 0;
}

size_t xp_pystore_nprocs(const struct xp_pystore *s)
{
	return s->nprocs;
}

const struct xp_pyproc_stats *xp_pystore_proc(const struct xp_pystore *s, size_t i)
{
	return i < s->nprocs ? &s->procs[i] : NULL;
}
