/* report_stack.c - a launch stack as the report shows it: a few user frames
 * in a line ("train.py:42 | gemm <- forward <- ..."), the whole stack as
 * json, and a kernel's launching stacks merged and ranked (--by kernel).
 *
 *   xp_rep_format_stack(R, stack_id, buf, sizeof(buf));
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "db/db_schema.h"
#include "db/launch.h"
#include "export/names/elidename.h"
#include "export/names/launcher.h"
#include "export/names/launchsite.h"
#include "export/names/pyreach.h"
#include "export/report/report_priv.h"

/* "launch_a <- forward <- main": user frames from the leaf-most one of the
 * caller's code (kernel and CUDA-layer frames skipped), at most o->frames.
 * A Python program's launch goes through dozens of C++ frames before its
 * own code: when the leaf-most Python frame is past the limit, it leads,
 * "py::step:train.py | at::native::... <- ...", so the report names it. */
/* Where a stack with no Python frame reaches the program's own code: the
 * index of its first frame outside the CUDA layers and the libraries it
 * calls (cuBLAS, libtorch, libc...); 0 when it has a Python frame or none
 * such (then the CUDA layers alone are skipped). */
static int first_own_frame(struct rep *R, int64_t id)
{
	struct xp_frame_row fr;
	int own = -1;

	for (int i = 0; xp_stackwalk_next(R->walk, &id, &fr); i++) {
		if (xp_is_python_frame(fr.kind, fr.sym)) {
			own = -1;
			break;
		}
		if (own < 0 && fr.kind != XP_FRAME_KERNEL && fr.kind != XP_FRAME_KERNEL_UNRESOLVED &&
		    fr.kind != XP_FRAME_NOTE && !fr.host_stub && !xp_is_cuda_layer(fr.sym, fr.module) &&
		    !xp_is_library_frame(fr.sym, fr.module))
			own = i;
	}
	xp_stackwalk_done(R->walk);
	return own > 0 ? own : 0;
}

/* What leads a stack whose Python line was not cut off: a backward kernel's
 * note when its forward line is among the frames shown; with no Python on
 * the stack, the framework thread that launched it. py stays "" otherwise. */
static void lead_of(struct xp_launcher_scan *who, int shown_py, const char *op, char *py,
		    size_t len)
{
	enum xp_launcher w;

	if (shown_py) {
		if (who->backward[0])
			snprintf(py, len, "%s | ", who->backward);
		return;
	}
	w = xp_launcher_end(who);
	if (w == XP_LAUNCHER_AUTOGRAD || w == XP_LAUNCHER_NCCL || w == XP_LAUNCHER_XLA)
		snprintf(py, len, "%s%s%s%s%s | ", xp_launcher_label(w), who->what[0] ? ": " : "",
			 who->what, op[0] ? " \u203a " : "", op);
}

/* py before the used bytes of buf: the Python line leads even when the C++
 * frames filled buf; their tail goes (at a whole UTF-8 character), never
 * the line. len > 1. */
static void put_lead(char *buf, size_t len, size_t used, const char *py)
{
	size_t n = strlen(py), keep = used < len ? used : len - 1;

	if (n > len - 1)
		n = len - 1;
	if (keep > len - 1 - n) {
		keep = len - 1 - n;
		while (keep > 0 && ((unsigned char)buf[keep] & 0xc0) == 0x80)
			keep--;
	}
	memmove(buf + n, buf, keep);
	memcpy(buf, py, n);
	buf[n + keep] = '\0';
}

int xp_rep_format_stack(struct rep *R, int64_t id, char *buf, size_t len)
{
	unsigned shown = 0;
	int own;
	size_t used = 0;
	int cut = 0, shown_py = 0, walked = 0;
	char py[512] = "", op[128] = "";
	struct xp_frame_row fr;
	struct xp_launcher_scan who;

	buf[0] = '\0';
	if (id < 0) {
		snprintf(buf, len, "(no stack)");
		return 0;
	}
	if (xp_rep_frame_stmt(R) < 0)
		return -EIO;
	own = first_own_frame(R, id);
	xp_launcher_begin(&who);
	for (int i = 0; xp_stackwalk_next(R->walk, &id, &fr); i++) {
		const char *sym = fr.sym;
		int kind = fr.kind, user;

		walked = 1;
		xp_launcher_frame(&who, kind, sym, fr.module);

		user = kind != XP_FRAME_KERNEL && kind != XP_FRAME_KERNEL_UNRESOLVED &&
		       kind != XP_FRAME_NOTE;
		/* the framework's operation nearest the Python caller names the site */
		if (!shown_py)
			xp_framework_op(sym, op, sizeof(op));
		/* the CUDA layers only until the first frame of the caller's code;
		 * a native program's stack starts at its own code (below cuBLAS) */
		if (user && !shown && (xp_is_cuda_layer(sym, fr.module) || fr.host_stub || i < own))
			user = 0;
		if (user && shown < R->o->frames) {
			char brief[512];

			if (sym && xp_rep_short_names(R->o) && !xp_is_python_frame(kind, sym)) {
				xp_elide_name(sym, brief, sizeof(brief));
				sym = brief;
			}
			used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s",
						 shown ? " <- " : "", sym ? sym : "??");
			shown++;
			shown_py |= xp_is_python_frame(kind, sym);
		} else if (user) {
			if (!cut)
				used += (size_t)snprintf(buf + used, used < len ? len - used : 0, " <- ...");
			cut = 1;
			if (shown_py || xp_is_python_frame(kind, sym)) {
				if (!shown_py)
					snprintf(py, sizeof(py), "%s%s%s%s%s | ", sym,
						 op[0] ? " \u203a " : "", op,
						 who.backward[0] ? " " : "", who.backward);
				break;
			}
		}
	}
	xp_stackwalk_done(R->walk);
	if (!walked) {              /* the recorder's frames alone (ownframes.h) */
		snprintf(buf, len, "(no stack)");
		return 0;
	}
	if (!py[0])
		lead_of(&who, shown_py, op, py, sizeof(py));
	if (py[0] && len > 1)
		put_lead(buf, len, used, py);
	return 0;
}

/* The whole launch stack as a json array, leaf first: every frame with its
 * kind, name and module (for a Python line, the file), for scripts. */
static int json_frames(struct rep *R, int64_t id)
{
	static const char *const kinds[] = { "native", "kernel", "jit", "unresolved",
		"kernel_unresolved", "inlined", "python_line", "gap" };
	struct xp_frame_row fr;

	if (xp_rep_frame_stmt(R) < 0)
		return -EIO;
	jsonw_arr_begin(&R->json);
	while (xp_stackwalk_next(R->walk, &id, &fr)) {
		const char *sym = fr.sym, *mod = fr.module;
		int kind = fr.kind;

		jsonw_obj_begin(&R->json);
		jsonw_key(&R->json, "kind");
		jsonw_str(&R->json, kind >= 0 && kind < 8 ? kinds[kind] : "other");
		jsonw_key(&R->json, "name");
		jsonw_str(&R->json, sym ? sym : "??");
		if (mod) {
			jsonw_key(&R->json, kind == XP_FRAME_PYTHON ? "file" : "module");
			jsonw_str(&R->json, mod);
		}
		if (fr.py) {
			jsonw_key(&R->json, "line");
			jsonw_int(&R->json, fr.py->line < 0 ? 0 : fr.py->line);   /* 0: not known */
		}
		jsonw_obj_end(&R->json);
	}
	xp_stackwalk_done(R->walk);
	jsonw_arr_end(&R->json);
	return 0;
}

#define MERGE_MAX 256             /* stacks of one kernel read to merge in text */

struct shown_stack {
	double share;               /* % of the kernel's GPU time */
	char how[16];               /* exact, inferred, ... */
	char *text;                 /* the stack as the report shows it */
};

/* Text: the stacks of one kernel, those that read the same merged. */
struct shown_list {
	struct shown_stack *v;
	size_t n, cap;
};

/* Adds share to the entry that reads the same, or a new entry. */
static int merge_shown(struct shown_list *l, double share, const char *how, const char *text)
{
	struct shown_stack *e;

	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].text, text) && !strcmp(l->v[i].how, how ? how : "")) {
			l->v[i].share += share;
			return 0;
		}
	if (xp_array__reserve((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v), 16))
		return -ENOMEM;
	e = &l->v[l->n];
	e->share = share;
	snprintf(e->how, sizeof(e->how), "%s", how ? how : "");
	e->text = strdup(text);
	if (!e->text)
		return -ENOMEM;
	l->n++;
	return 0;
}

static int cmp_shown(const void *a, const void *b)
{
	const struct shown_stack *x = a, *y = b;

	if (x->share != y->share)
		return x->share < y->share ? 1 : -1;
	return strcmp(x->text, y->text);
}

/* Text: the merged stacks, biggest share first, as many as --stacks. */
static void print_shown(struct rep *R, struct shown_list *l, int indent_text)
{
	if (l->n)       /* qsort(NULL, 0, ...) is undefined */
		qsort(l->v, l->n, sizeof(*l->v), cmp_shown);
	for (size_t i = 0; i < l->n && i < R->o->stacks; i++) {
		char line[1200];

		snprintf(line, sizeof(line), "%*s%5.1f%%  %-8s  %s", indent_text, "",
			 l->v[i].share, l->v[i].how, l->v[i].text);
		xp_rep_put_row(R, line);
	}
}

/* JSON: one launching stack of a kernel (id < 0: unattributed, why). */
static void json_stack(struct rep *R, int64_t id, int64_t ns, double share, const char *how,
		       const char *why, const char *stack)
{
	jsonw_obj_begin(&R->json);
	jsonw_key(&R->json, "share_pct");
	jsonw_fixed(&R->json, share, 1);
	jsonw_key(&R->json, "gpu_ns");
	jsonw_int(&R->json, ns);
	jsonw_key(&R->json, "how");
	jsonw_str(&R->json, how);
	if (id < 0) {
		jsonw_key(&R->json, "reason");
		jsonw_str(&R->json, why ? why : "?");
	} else {
		jsonw_key(&R->json, "stack_id");
		jsonw_int(&R->json, id);
	}
	jsonw_key(&R->json, "frames");
	jsonw_str(&R->json, stack);
	if (id > 0) {
		jsonw_key(&R->json, "frame_list");
		json_frames(R, id);
	}
	jsonw_obj_end(&R->json);
}

/* A kernel's launching stacks (bound later to :key), from the groups
 * table the correlation wrote or, without it, from the attribution. */
static int prepare_kernel_stacks(struct rep *R, unsigned limit, sqlite3_stmt **s)
{
	const struct xp_report_opts *o = R->o;
	char sql[1024], f[256];

	xp_rep_filter(o, "k.globalPid", "k.start", f, sizeof(f));
	if (R->groups)
		snprintf(sql, sizeof(sql), "SELECT stack_id, how, reason, gpu_ns FROM"
			 " xp_report_kernel_stacks WHERE mangled = %d AND key = :key"
			 " ORDER BY 4 DESC, 1, 2, 3 LIMIT %u", o->mangled ? 1 : 0, limit);
	else
		snprintf(sql, sizeof(sql), "SELECT ifnull(a.stack_id, -1), a.how, a.reason,"
			 " sum(k.end - k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN xp_attribution a"
			 " ON a.gpu_table = 'KERNEL' AND a.gpu_rowid = k.rowid WHERE k.%s = :key AND %s"
			 " GROUP BY 1, 2, 3 ORDER BY 4 DESC, 1, 2, 3 LIMIT %u",
			 o->mangled ? "mangledName" : "demangledName", f, limit);
	return xp_rep_prepare(R, sql, s);
}

/* One launching stack of a kernel: its id (< 0: unattributed, why), GPU
 * ns and share, how it was joined, and the stack in a line. */
struct kstack {
	int64_t id, ns;
	double share;
	const char *how, *why;
	const char *text;
};

/* The launching stacks of one kernel, biggest share first, at most limit:
 * fn on each. 0, fn's negative errno, -EIO or -ENOMEM. */
static int each_stack(struct rep *R, const struct group *g, unsigned limit,
		      int (*fn)(struct rep *R, const struct kstack *k, void *ctx), void *ctx)
{
	char stack[1024];
	sqlite3_stmt *s;
	int rc;

	if (prepare_kernel_stacks(R, limit, &s) < 0)
		return -EIO;
	sqlite3_bind_int64(s, sqlite3_bind_parameter_index(s, ":key"), g->key);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0), t = sqlite3_column_int64(s, 3);
		const char *how = (const char *)sqlite3_column_text(s, 1);
		const char *why = (const char *)sqlite3_column_text(s, 2);
		struct kstack k = { id, t, g->total ? 100.0 * (double)t / (double)g->total : 0, how,
				    why, stack };

		if (xp_rep_format_stack(R, id, stack, sizeof(stack)) < 0)
			break;
		if (id < 0)
			snprintf(stack, sizeof(stack), "(unattributed: %s)", why ? why : "?");
		if ((rc = fn(R, &k, ctx)) < 0)
			break;
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : rc == -ENOMEM ? -ENOMEM : -EIO;
}

static int merge_one(struct rep *R, const struct kstack *k, void *ctx)
{
	(void)R;
	return merge_shown(ctx, k->share, k->how, k->text);
}

/* Text merges the stacks that read the same (they differ only in frames
 * cut from the view): it reads more of them than it shows. */
int xp_rep_kernel_stacks_text(struct rep *R, const struct group *g, int indent_text)
{
	struct shown_list seen = { 0 };
	int rc = each_stack(R, g, MERGE_MAX, merge_one, &seen);

	if (rc == 0)
		print_shown(R, &seen, indent_text);
	for (size_t i = 0; i < seen.n; i++)
		free(seen.v[i].text);
	free(seen.v);
	return rc;
}

static int csv_one(struct rep *R, const struct kstack *k, void *ctx)
{
	int *first = ctx;
	char item[1200];

	snprintf(item, sizeof(item), "%s%.1f%% %s %s", *first ? "" : "; ", k->share, k->how, k->text);
	fputs(item, R->out);     /* inside the quoted cell opened by the table */
	*first = 0;
	return 0;
}

/* Csv: the stacks as items of the field the table opened. */
int xp_rep_kernel_stacks_csv(struct rep *R, const struct group *g)
{
	int first = 1;

	return each_stack(R, g, R->o->stacks, csv_one, &first);
}

static int json_one(struct rep *R, const struct kstack *k, void *ctx)
{
	(void)ctx;
	json_stack(R, k->id, k->ns, k->share, k->how, k->why, k->text);
	return 0;
}

/* Json: the array of stacks after the key the table wrote. */
int xp_rep_kernel_stacks_json(struct rep *R, const struct group *g)
{
	int rc;

	jsonw_arr_begin(&R->json);
	rc = each_stack(R, g, R->o->stacks, json_one, NULL);
	jsonw_arr_end(&R->json);
	return rc;
}
