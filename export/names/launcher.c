/* launcher.c - who launched GPU work with no Python on its stack (launcher.h).
 * By the names the frameworks' own frames carry: the rules read symbols and
 * module paths, nothing else. */
#include "export/names/launcher.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "db/db_schema.h"
#include "export/names/pyreach.h"
#include "db/stackwalk.h"
#include "db/waitnote.h"
#include "src/satmath.h"

void xp_launcher_begin(struct xp_launcher_scan *s)
{
	memset(s, 0, sizeof(*s));
}

static int has(const char *s, const char *part)
{
	return s && strstr(s, part);
}

/* "torch::autograd::generated::AddmmBackward0::apply(...)" -> "AddmmBackward0" */
static int autograd_node(const char *sym, char *out, size_t len)
{
	const char *apply = strstr(sym, "::apply("), *start;

	if (!apply)
		return 0;
	for (start = apply; start > sym && start[-1] != ':' && start[-1] != ' '; start--)
		;
	if (apply - start < 9 || !memmem(start, (size_t)(apply - start), "Backward", 8))
		return 0;
	snprintf(out, len, "%.*s", (int)(apply - start), start);
	return 1;
}

/* The frames a thread or the program starts from (glibc, often without
 * symbols: any frame of libc itself counts). */
static int thread_start(const char *sym, const char *module)
{
	static const char *const starts[] = { "start_thread", "clone", "clone3", "_start",
		"__libc_start_main", "__libc_start_call_main" };

	for (size_t i = 0; sym && i < sizeof(starts) / sizeof(starts[0]); i++)
		if (!strcmp(sym, starts[i]))
			return 1;
	return has(module, "/libc.so") || has(module, "/libc-") || (sym && !strncmp(sym, "libc.so", 7));
}

int xp_backward_note(int kind, const char *sym, char *node, size_t len)
{
	static const char open[] = "\u2039backward: ", close[] = "\u203a";
	size_t n;

	if (kind != XP_FRAME_NOTE || !sym || strncmp(sym, open, sizeof(open) - 1))
		return 0;
	sym += sizeof(open) - 1;
	n = strlen(sym);
	if (n >= sizeof(close) - 1 && !strcmp(sym + n - (sizeof(close) - 1), close))
		n -= sizeof(close) - 1;
	if (node)
		snprintf(node, len, "%.*s", (int)n, sym);
	return 1;
}

void xp_launcher_frame(struct xp_launcher_scan *s, int kind, const char *sym, const char *module)
{
	/* notes of ingest's, not functions: DDP's bucket (ingest/ddpbuckets.h),
	 * the autograd node a backward launch ran for (ingest/backward.h) */
	if (kind == XP_FRAME_NOTE) {
		if (xp_backward_note(kind, sym, s->node, sizeof(s->node))) {
			s->autograd = 1;
			snprintf(s->backward, sizeof(s->backward), "%s", sym);
		}
		if (xp_wait_note(kind, sym))
			s->waited = 1;
		if (sym && !strncmp(sym, "[DDP bucket ", 12))
			snprintf(s->bucket, sizeof(s->bucket), "%.*s", (int)strcspn(sym + 5, "]"),
				 sym + 5);
		return;
	}
	s->frames++;
	if (xp_is_python_frame(kind, sym))
		s->python = 1;
	if (sym && (has(sym, "torch::autograd::Engine::") || has(sym, "autograd::generated::")))
		s->autograd = 1;
	if (!s->node[0] && sym)
		autograd_node(sym, s->node, sizeof(s->node));
	if (has(sym, "c10d::Reducer::")) {
		s->nccl = 2;
		snprintf(s->what, sizeof(s->what), "DDP reducer%s%s", s->bucket[0] ? ", " : "",
			 s->bucket);
	} else if (s->nccl < 2 && ((sym && !strncmp(sym, "nccl", 4)) || has(module, "libnccl") ||
				   has(sym, "c10d::ProcessGroupNCCL"))) {
		s->nccl = 1;
		/* the root-most nccl call is the API the program used (ncclAllReduce) */
		if (sym && !strncmp(sym, "nccl", 4))
			snprintf(s->what, sizeof(s->what), "%.*s", (int)strcspn(sym, "("), sym);
	}
	if (has(sym, "xla::") || has(module, "xla_extension") || has(module, "jaxlib") ||
	    has(module, "libtpu") || has(module, "_xla"))
		s->xla = 1;
	if (has(module, "libpython") || has(module, "/python3") || (sym && !strncmp(sym, "_PyEval", 7)) ||
	    (sym && !strncmp(sym, "PyObject_", 9)))
		s->interpreter = 1;
	s->rooted = thread_start(sym, module);
	/* a native thread's function: the frame its start called */
	if (!s->rooted && sym && kind != XP_FRAME_KERNEL && kind != XP_FRAME_KERNEL_UNRESOLVED)
		snprintf(s->root_fn, sizeof(s->root_fn), "%s", sym);
}

enum xp_launcher xp_launcher_end(struct xp_launcher_scan *s)
{
	if (!s->frames)
		return XP_LAUNCHER_NONE;
	if (s->python)
		return s->waited ? XP_LAUNCHER_WAITED : XP_LAUNCHER_PYTHON;
	/* NCCL work launched from the autograd thread (DDP's bucket hooks) is NCCL's */
	if (s->nccl)
		return XP_LAUNCHER_NCCL;
	if (s->autograd) {
		snprintf(s->what, sizeof(s->what), "%s", s->node);
		return XP_LAUNCHER_AUTOGRAD;
	}
	if (s->xla)
		return XP_LAUNCHER_XLA;
	if (s->interpreter || !s->rooted)
		return XP_LAUNCHER_TRUNCATED;
	snprintf(s->what, sizeof(s->what), "%s", s->root_fn);
	return XP_LAUNCHER_NATIVE;
}

const char *xp_launcher_label(enum xp_launcher who)
{
	switch (who) {
	case XP_LAUNCHER_PYTHON: return "Python";
	case XP_LAUNCHER_AUTOGRAD: return "autograd backward";
	case XP_LAUNCHER_NCCL: return "NCCL";
	case XP_LAUNCHER_XLA: return "XLA runtime";
	case XP_LAUNCHER_TRUNCATED: return "stack cut short";
	case XP_LAUNCHER_NATIVE: return "native thread";
	case XP_LAUNCHER_WAITED: return "waiting line";
	default: return "no stack";
	}
}

const char *xp_launcher_key(enum xp_launcher who)
{
	static const char *const keys[] = { "python", "autograd", "nccl", "xla", "truncated",
					    "native", "no_stack", "waited" };

	return who < XP_LAUNCHER_KINDS ? keys[who] : "?";
}

void xp_launcher_why(enum xp_launcher who, int inproc, char *buf, size_t len)
{
	switch (who) {
	case XP_LAUNCHER_AUTOGRAD:
		snprintf(buf, len, "launched by autograd's backward threads for nodes whose forward"
			 " launch is not known (xpcorr info says why), or in a run without"
			 " autograd records: sites are named 'autograd backward: NODE'");
		break;
	case XP_LAUNCHER_NCCL:
		snprintf(buf, len, "launched by NCCL/c10d threads (DDP's reducer, the process"
			 " group's own threads): sites are named 'NCCL: CALL', DDP's gradient"
			 " all-reduces 'NCCL: DDP reducer, bucket K'");
		break;
	case XP_LAUNCHER_XLA:
		snprintf(buf, len, "launched by XLA's runtime threads: the jitted function is not"
			 " on these stacks (name regions with NVTX or jax.named_scope)");
		break;
	case XP_LAUNCHER_TRUNCATED:
		snprintf(buf, len, inproc ?
			 "the stack ends in native code before Python although the library's 64"
			 " KiB copy was used: frames deeper than the copy, or unwinding stopped in"
			 " code without unwind tables" :
			 "the launch stack ends in native code before Python (C++ frames larger"
			 " than the stack copy): record with --launch-stacks inproc, whose copies"
			 " are 64 KiB");
		break;
	case XP_LAUNCHER_NATIVE:
		snprintf(buf, len, "launched from native threads of the program, with no Python"
			 " on them: sites are named by their C/C++ function");
		break;
	case XP_LAUNCHER_WAITED:
		snprintf(buf, len, "at the line its Python thread waited in (launched by a runtime"
			 " thread)");
		break;
	default:
		snprintf(buf, len, "no launch stack");
	}
}

int xp_launcher_shares(sqlite3 *db, sqlite3_stmt *rows, int64_t *ns)
{
	struct xp_stackwalk *walk;
	int step, rc, k;

	for (int i = 0; i < XP_LAUNCHER_KINDS; i++)
		ns[i] = 0;
	if ((rc = xp_stackwalk_open(db, &walk)) < 0)
		return rc;
	while ((step = sqlite3_step(rows)) == SQLITE_ROW) {
		int64_t node = sqlite3_column_int64(rows, 0);
		struct xp_launcher_scan sc;
		struct xp_frame_row f;

		xp_launcher_begin(&sc);
		while (xp_stackwalk_next(walk, &node, &f))
			xp_launcher_frame(&sc, f.kind, f.sym, f.module);
		xp_stackwalk_done(walk);
		k = xp_launcher_end(&sc);
		ns[k] = xp_sat_add(ns[k], sqlite3_column_int64(rows, 1));
	}
	xp_stackwalk_close(walk);
	return step == SQLITE_DONE ? 0 : -EIO;
}

int xp_launcher_inproc(sqlite3 *db)
{
	sqlite3_stmt *s;
	int yes;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM META_DATA_EXPORT WHERE name ="
			       " 'meta.call_graph.launch_stacks' AND value = 'inproc'", -1, &s,
			       NULL) != SQLITE_OK)
		return 0;
	yes = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	return yes;
}
