/* records.c - one record to rows: tasks, threads, mappings, samples,
 * launches, switches, losses; pass 1 learns names and mappings, pass 2
 * writes what needs them (loader.h). */
#include "ingest/loader.h"

static int thread_seen(struct loader *L, uint32_t pid, uint32_t tid, const char *comm,
		       int override)
{
	char name[XP_COMM_LEN + 1];
	uint64_t *slot;
	int64_t id;
	int fresh, err;

	err = xp_u64map_upsert(&L->threads, pid, tid, &slot, &fresh);
	if (err || (!fresh && !override))
		return err;
	memcpy(name, comm, XP_COMM_LEN);
	name[XP_COMM_LEN] = '\0';
	err = xp_loader_intern_str(L, name, &id);
	if (err)
		return err;
	*xp_u64map_find(&L->threads, pid, tid) = (uint64_t)id;
	/* a process is named after its main thread, else its first thread */
	err = xp_u64map_upsert(&L->procs, pid, 0, &slot, &fresh);
	if (err)
		return err;
	if (fresh || tid == pid || *slot == 0)
		*slot = (uint64_t)id;
	return 0;
}

/* a record kind of the CPU streams, by the one name table (runnames.h) */
const char *xp_loader_kind_name(uint32_t type)
{
	const char *name = xp_rec_kind_name_in(type, XP_STREAM_CPU);

	return name ? name : "unknown";
}

static int task_row(struct loader *L, uint64_t ts, const char *event, uint32_t pid,
		    uint32_t tid, int64_t ppid, int64_t ptid, const char *name, int name_len)
{
	sqlite3_stmt *s = L->st[STMT_TASK];

	sqlite3_bind_int64(s, 1, (int64_t)ts);
	sqlite3_bind_text(s, 2, event, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, pid);
	sqlite3_bind_int64(s, 4, tid);
	if (ppid >= 0)
		sqlite3_bind_int64(s, 5, ppid);
	else
		sqlite3_bind_null(s, 5);
	if (ptid >= 0)
		sqlite3_bind_int64(s, 6, ptid);
	else
		sqlite3_bind_null(s, 6);
	if (name)
		sqlite3_bind_text(s, 7, name, name_len, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, 7);
	return xp_loader_step(L, STMT_TASK);
}

/* A mapping: its module (build id), the address space, the row. 1 or -errno. */
static int mmap_record(struct loader *L, const struct xp_record_header *h, const void *p,
		       uint32_t len)
{
	const struct xp_mmap *m = p;
	sqlite3_stmt *s = L->st[STMT_MAPPING];
	const char *path;
	uint32_t module;
	int64_t path_id;
	size_t bid_len;
	int err;

	if (len < sizeof(*m) || !(path = xp_record_path(h, sizeof(*m), m->path_len)))
		return -EBADMSG;
	bid_len = (m->flags & XP_MMAP_HAS_BUILD_ID) ? m->build_id_size : 0;
	if (bid_len > XP_BUILD_ID_MAX)
		return -EBADMSG;
	err = xp_symbolizer_module(L->sym, path, m->build_id, bid_len, &module);
	if (err)
		return err;
	err = xp_mappings_add(L->maps, m->pid, m->ts, m->addr, m->len, m->pgoff, module,
			      !!(m->flags & XP_MMAP_FROM_PROC));
	if (err == -EINVAL)
		return -EBADMSG;
	if (err)
		return err;
	err = xp_loader_intern_str(L, path, &path_id);
	if (err)
		return err;
	sqlite3_bind_int64(s, 1, m->pid);
	sqlite3_bind_int64(s, 2, (int64_t)m->addr);
	sqlite3_bind_int64(s, 3, (int64_t)(m->addr + m->len));
	sqlite3_bind_int64(s, 4, (int64_t)m->pgoff);
	sqlite3_bind_int64(s, 5, (int64_t)m->ts);
	sqlite3_bind_int(s, 6, !!(m->flags & XP_MMAP_FROM_PROC));
	sqlite3_bind_int64(s, 7, module + 1);
	err = xp_loader_step(L, STMT_MAPPING);
	return err ? err : 1;
}

/* Pass 1: tasks and mappings. 1 handled, 0 not this pass, -EBADMSG malformed. */
int xp_loader_pass1_record(struct loader *L, const struct xp_record_header *h)
{
	const void *p = xp_record_payload(h);
	uint32_t len = xp_record_payload_len(h);

	switch (h->type) {
	case XP_REC_FORK:
	case XP_REC_EXIT: {
		const struct xp_task *t = p;
		int err;

		if (len < sizeof(*t))
			return -EBADMSG;
		err = task_row(L, t->ts, h->type == XP_REC_FORK ? "fork" : "exit", t->pid,
			       t->tid, t->ppid, t->ptid, NULL, 0);
		if (!err && h->type == XP_REC_FORK)
			err = xp_mappings_fork(L->maps, t->pid, t->ppid, t->ts);
		return err ? err : 1;
	}
	case XP_REC_COMM: {
		const struct xp_comm *c = p;
		int err;

		if (len < sizeof(*c))
			return -EBADMSG;
		err = task_row(L, c->ts, "comm", c->pid, c->tid, -1, -1, c->comm,
			       (int)strnlen(c->comm, XP_COMM_LEN));
		if (!err)
			err = thread_seen(L, c->pid, c->tid, c->comm, 1);
		if (!err && (c->flags & XP_COMM_EXEC))
			err = xp_mappings_comm_exec(L->maps, c->pid, c->ts);
		return err ? err : 1;
	}
	case XP_REC_EXEC: {
		const struct xp_exec *e = p;
		const char *path;
		int err;

		if (len < sizeof(*e) || !(path = xp_record_path(h, sizeof(*e), e->path_len)))
			return -EBADMSG;
		err = task_row(L, e->ts, "exec", e->pid, e->tid, -1, e->old_tid, path, -1);
		if (!err)
			err = xp_mappings_exec(L->maps, e->pid, e->ts);
		return err ? err : 1;
	}
	case XP_REC_MMAP:
		return mmap_record(L, h, p, len);
	case XP_REC_AUTOGRAD:
	case XP_REC_AUTOGRAD_INFO:
		/* PyTorch's autograd at launches, joined after the load */
		return xp_agstore_record(L->ag, L->stream_pid, h);
	case XP_REC_PYWAIT:
		/* where a normal user's waits blocked, for their intervals */
		return xp_pywaits_record(L->pyw, h);
	default:
		/* Python stacks, code objects and facts, for the launches of pass 2 */
		return xp_pystore_record(L->py, L->stream_pid, h);
	}
}

/* Pass 2: samples and losses. 1 handled, 0 not this pass, -EBADMSG malformed. */
/* A stack's IPs (kernel, then user), with the user part walked offline from
 * its dwarf-mode copy when that reaches further than the frame pointers
 * did: code built without them loses callers in a frame-pointer walk. */
static const uint64_t *stack_ips(struct loader *L, const struct xp_record_header *h,
				 size_t fixed, const struct xp_stack *st, uint32_t pid,
				 uint64_t ts, unsigned *nu)
{
	const uint64_t *ips = xp_record_stack_ips(h, fixed, st);
	struct xp_user_regs_copy regs;
	const uint8_t *bytes;
	unsigned nk = st->kernel_depth;
	uint64_t t0;
	int n;

	*nu = st->user_depth;
	if (!ips || !(st->flags & XP_STACK_HAS_USER_COPY) ||
	    xp_record_user_copy(h, fixed, st, &regs, &bytes))
		return ips;
	t0 = xp_loader_mono_ns();
	n = xp_unwind(L->uw, pid, ts, &regs, bytes, L->walked + nk, XP_MAX_STACK_DEPTH);
	L->res->unwind_ns += xp_loader_mono_ns() - t0;
	if (n <= (int)*nu)
		return ips;
	memcpy(L->walked, ips, nk * sizeof(*ips));
	*nu = (unsigned)n;
	L->res->stacks_unwound++;
	return L->walked;
}

#define PY_WINDOW_DEFAULT_NS 10000000ull    /* 99 Hz, when no sample said its period */

/* The Python chain xpcap read of the thread nearest to ts, within one
 * sampling period: 1 and *py, 0 none, -errno. */
static int sampled_py(struct loader *L, uint32_t pid, uint32_t tid, uint64_t ts,
		      uint64_t off_until, struct xp_pystack_view *py)
{
	return xp_pystore_sampled(L->py, pid, tid, ts, off_until, L->py_window ? L->py_window
				  : PY_WINDOW_DEFAULT_NS, py);
}

/* A CPU sample: its thread, its stack (with its thread's Python frames), a row. */
static int sample_row(struct loader *L, const struct xp_record_header *h, const struct xp_sample *s,
		      uint32_t len)
{
	sqlite3_stmt *st = L->st[STMT_SAMPLE];
	struct xp_pystack_view py;
	const uint64_t *ips;
	unsigned nu;
	int64_t stack;
	int err, has_py;

	if (len < sizeof(*s) || !(ips = stack_ips(L, h, sizeof(*s), &s->stack, s->pid, s->ts, &nu)))
		return -EBADMSG;
	err = thread_seen(L, s->pid, s->tid, s->comm, 0);
	if (err)
		return err;
	if (s->period_ns)
		L->py_window = s->period_ns;
	has_py = sampled_py(L, s->pid, s->tid, s->ts, 0, &py);
	if (has_py < 0)
		return has_py;
	err = xp_loader_stack_id(L, s->pid, s->ts, ips, s->stack.kernel_depth, nu,
				 has_py ? &py : NULL, &stack);
	if (err)
		return err;
	if (stack) {
		L->res->sample_frames += L->nodes[stack].depth;
		L->res->sample_frames_resolved += L->nodes[stack].resolved;
	}
	sqlite3_bind_int64(st, 1, (int64_t)s->ts);
	sqlite3_bind_int64(st, 2, s->pid);
	sqlite3_bind_int64(st, 3, s->tid);
	sqlite3_bind_int64(st, 4, s->cpu);
	sqlite3_bind_int64(st, 5, stack);
	sqlite3_bind_int64(st, 6, s->period_ns);
	err = xp_loader_step(L, STMT_SAMPLE);
	L->res->samples++;
	return err ? err : 1;
}

/* A launch's native IPs: unwound from its copy, or, when it named an
 * earlier copy instead (XP_STACK_BORROWED), its key's; *key: the key a
 * copy stands for (XP_STACK_KEYED), else 0. NULL: malformed. */
static const uint64_t *launch_ips(struct loader *L, const struct xp_record_header *h,
				  const struct xp_launch *l, unsigned *nu, uint32_t *key)
{
	struct xp_user_regs_copy regs;
	const uint64_t *ips, *kept;
	const uint8_t *bytes;

	*key = 0;
	if (!(l->stack.flags & (XP_STACK_BORROWED | XP_STACK_KEYED)))
		return stack_ips(L, h, sizeof(*l), &l->stack, l->pid, l->ts, nu);
	if (xp_record_user_copy(h, sizeof(*l), &l->stack, &regs, &bytes))
		return NULL;
	if (l->stack.flags & XP_STACK_KEYED) {
		*key = regs.key;
		return stack_ips(L, h, sizeof(*l), &l->stack, l->pid, l->ts, nu);
	}
	L->res->launches_borrowed++;
	ips = xp_record_stack_ips(h, sizeof(*l), &l->stack);
	if (!(kept = xp_borrowed_get(L->borrowed, l->pid, regs.key, nu))) {
		L->res->borrowed_missing++;     /* its copy was lost: no native frames */
		*nu = l->stack.user_depth;
		return ips;
	}
	memcpy(L->walked, ips, l->stack.kernel_depth * sizeof(*ips));
	memcpy(L->walked + l->stack.kernel_depth, kept, *nu * sizeof(*kept));
	return L->walked;
}

/* A CUDA API entry with its stack, for the correlate stage, with the
 * Python frames the library took at the same call. A copy that stands for
 * a key gives the key its frames, and checks those it had by the stack
 * they made (the same functions, not the same return addresses). */
static int launch_row(struct loader *L, const struct xp_record_header *h, const struct xp_launch *l,
		      uint32_t len)
{
	struct xp_pystack_view py;
	const uint64_t *ips;
	uint32_t key;
	unsigned nu;
	int64_t stack;
	int err, has_py, how;

	if (len < sizeof(*l) || !(ips = launch_ips(L, h, l, &nu, &key)))
		return -EBADMSG;
	has_py = xp_pystore_launch(L->py, l->pid, l->correlation_id, &py);
	if (has_py < 0)
		return has_py;
	py.bounded = !!(l->stack.flags & XP_STACK_COPY_TO_PYTHON);
	err = xp_loader_stack_id(L, l->pid, l->ts, ips, l->stack.kernel_depth, nu, has_py ? &py : NULL,
			  &stack);
	if (err)
		return err;
	/* out of memory: this launch is whole; those that borrow it count as missing */
	how = key ? xp_borrowed_put(L->borrowed, l->pid, key, ips + l->stack.kernel_depth, nu,
				    stack) : XP_BORROWED_NEW;
	L->res->stack_checks += how == XP_BORROWED_SAME || how == XP_BORROWED_DIFFERED;
	L->res->stack_checks_differed += how == XP_BORROWED_DIFFERED;
	xp_launch_bind(L->st[STMT_LAUNCH], l, stack);
	return xp_loader_step(L, STMT_LAUNCH) ?: 1;
}

/* An off-CPU interval with the stack that went to sleep. Without one (a
 * normal user's, from perf's switch records), the call the frame reader
 * saw the thread blocked in during the interval is its innermost frame. */
static int switch_row(struct loader *L, const struct xp_record_header *h, const struct xp_switch *w,
		      uint32_t len)
{
	sqlite3_stmt *st = L->st[STMT_SWITCH];
	struct xp_pystack_view py;
	const uint64_t *ips;
	uint64_t pc;
	unsigned nu;
	int64_t stack;
	int err, has_py, call = 0;

	if (len < sizeof(*w) || !(ips = stack_ips(L, h, sizeof(*w), &w->stack, w->pid, w->ts, &nu)))
		return -EBADMSG;
	/* the thread's Python frames as it went off CPU */
	has_py = sampled_py(L, w->pid, w->tid, w->ts, w->ts + w->duration_ns, &py);
	if (has_py < 0)
		return has_py;
	if (!nu && !w->stack.kernel_depth &&
	    (call = xp_pywaits_in(L->pyw, w->pid, w->tid, w->ts, w->ts + w->duration_ns, &pc))) {
		ips = &pc;
		nu = 1;
	}
	xp_pywaits_count(L->pyw, w->prev_state != 0, w->stack.kernel_depth || (nu && !call), has_py,
			 call);
	err = xp_loader_stack_id(L, w->pid, w->ts, ips, call ? 0 : w->stack.kernel_depth, nu,
				 has_py ? &py : NULL, &stack);
	if (err)
		return err;
	sqlite3_bind_int64(st, 1, (int64_t)w->ts);
	sqlite3_bind_int64(st, 2, (int64_t)w->duration_ns);
	sqlite3_bind_int64(st, 3, w->pid);
	sqlite3_bind_int64(st, 4, w->tid);
	sqlite3_bind_int64(st, 5, w->cpu);
	sqlite3_bind_int64(st, 6, w->prev_state);
	sqlite3_bind_int64(st, 7, stack);
	return xp_loader_step(L, STMT_SWITCH) ?: 1;
}

static int loss_row(struct loader *L, const struct xp_lost *l, uint32_t len)
{
	sqlite3_stmt *st = L->st[STMT_LOSS];

	if (len < sizeof(*l))
		return -EBADMSG;
	sqlite3_bind_int64(st, 1, (int64_t)l->ts);
	sqlite3_bind_text(st, 2, xp_loader_kind_name(l->kind), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, xp_loss_reason_name(l->reason), -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, (int64_t)l->count);
	sqlite3_bind_text(st, 5, "record", -1, SQLITE_STATIC);
	return xp_loader_step(L, STMT_LOSS) ?: 1;
}

int xp_loader_pass2_record(struct loader *L, const struct xp_record_header *h)
{
	const void *p = xp_record_payload(h);
	uint32_t len = xp_record_payload_len(h);

	switch (h->type) {
	case XP_REC_SAMPLE: return sample_row(L, h, p, len);
	case XP_REC_LAUNCH: return launch_row(L, h, p, len);
	case XP_REC_SWITCH: return switch_row(L, h, p, len);
	case XP_REC_LOST: return loss_row(L, p, len);
	case XP_REC_EXIT: {
		const struct xp_task *t = p;

		/* the process is gone: its unwinding session is no longer needed */
		if (len >= sizeof(*t) && t->tid == t->pid && L->uw)
			xp_unwinder_exited(L->uw, t->pid);
		return 0;
	}
	default: return 0;
	}
}

