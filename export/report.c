/* report.c - GPU time summaries with their launching CPU stacks.
 *
 *   struct xp_report_opts o = XP_REPORT_DEFAULTS;      // --by kernel --top 30
 *   xp_report(db, &o, stdout, NULL);
 *
 * One SQL query per view yields (name, key, duration) in (key, duration)
 * order; one pass makes the per-group statistics (median from the sorted
 * durations of one group at a time), the same columns as nsys'
 * cuda_gpu_kern_sum: StdDev is the sample standard deviation, Med the
 * middle value (mean of the two middle ones for an even count).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "db/db_schema.h"
#include "db/dbtask.h"
#include "export/jsonw.h"
#include "db/groups.h"
#include "src/gtid.h"
#include "export/report.h"
#include "export/report_priv.h"
#include "db/stats.h"
#include "export/elidename.h"
#include "src/utf8.h"
#include "db/launch.h"
#include "export/pyreach.h"
#include "export/launcher.h"
#include "export/launchsite.h"
#include "src/textesc.h"
#include "export/table.h"
#include "export/views.h"
#include "src/satmath.h"

/* The GPU rows of every kind, each with its attribution (or NULLs). */
#define GPU_ROWS XP_GPU_ROWS        /* launch.h: shared with export --weight gpu */

void xp_rep_filter(const struct xp_report_opts *o, const char *gp, const char *start, char *buf,
		   size_t len)
{
	int n = snprintf(buf, len, "1");

	/* in a merged job, --pid 4242 is that pid on every host (their run is
	 * in the high bits), --rank the one process */
	if (o->pid)
		n += snprintf(buf + n, len - (size_t)n, " AND (" XP_SQL_GTID_PID("%s") " = :pid OR "
			      XP_SQL_PID_LOCAL(XP_SQL_GTID_PID("%s")) " = :pid)", gp, gp);
	if (o->since)
		n += snprintf(buf + n, len - (size_t)n, " AND %s >= :since", start);
	if (o->until)
		snprintf(buf + n, len - (size_t)n, " AND %s < :until", start);
}

int xp_rep_prepare(struct rep *R, const char *sql, sqlite3_stmt **s)
{
	int i;

	if (sqlite3_prepare_v2(R->db, sql, -1, s, NULL) != SQLITE_OK)
		return -EIO;
	if ((i = sqlite3_bind_parameter_index(*s, ":pid")))
		sqlite3_bind_int64(*s, i, R->o->pid);
	if ((i = sqlite3_bind_parameter_index(*s, ":since")))
		sqlite3_bind_int64(*s, i, R->o->since);
	if ((i = sqlite3_bind_parameter_index(*s, ":until")))
		sqlite3_bind_int64(*s, i, R->o->until);
	return 0;
}

/* The correlation's per-group statistics (xp_report_groups and friends)
 * describe the whole run: usable when nothing is filtered out and they
 * were computed from the rows the database holds now (databases of older
 * builds have none; rows deleted by hand make them stale). */
static int filtered(const struct xp_report_opts *o)
{
	return o->pid || o->since || o->until;
}

static int use_groups(struct rep *R)
{
	return !filtered(R->o) && xp_groups_fresh(R->db);
}

/* xp_groups_fresh as a task (dbtask.h): a view needs the answer only for
 * its footers, and finding it counts every kernel and call (~0.1 s at 1M). */
static int groups_fresh_task(sqlite3 *db, void *arg)
{
	struct rep *R = arg;

	R->groups = xp_groups_fresh(db);
	return 0;
}

/* The view's name in xp_report_groups, or NULL when it has none. */
static const char *groups_view(const struct xp_report_opts *o)
{
	switch (o->by) {
	case XP_BY_KERNEL: return o->mangled ? "kernel_mangled" : "kernel";
	case XP_BY_STACK: return "stack";
	case XP_BY_API: return "api";
	default: return NULL;
	}
}

static int add_group(struct rep *R, struct group **g)
{
	if (xp_array__reserve((void **)&R->g, &R->cap, R->n + 1, sizeof(*R->g), 64))
		return -ENOMEM;
	*g = &R->g[R->n++];
	**g = (struct group){ 0 };
	return 0;
}

/* Reads the precomputed groups of one view, in key order as collect() makes them. */
static int collect_groups(struct rep *R, const char *view)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(R->db, strcmp(view, "stack") ?
			       "SELECT s.value, g.key, instances, total_ns, min_ns, max_ns, avg_ns,"
			       " med_ns, stddev_ns FROM xp_report_groups g JOIN StringIds s"
			       " ON s.id = g.key WHERE g.view = ?1 ORDER BY g.key" :
			       "SELECT NULL, key, instances, total_ns, min_ns, max_ns, avg_ns,"
			       " med_ns, stddev_ns FROM xp_report_groups WHERE view = ?1 ORDER BY key",
			       -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_text(s, 1, view, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(s, 0);
		struct group *g;

		if (add_group(R, &g) < 0 || !(g->name = strdup(name ? name : ""))) {
			sqlite3_finalize(s);
			return -ENOMEM;
		}
		g->key = sqlite3_column_int64(s, 1);
		g->n = (uint64_t)sqlite3_column_int64(s, 2);
		g->total = sqlite3_column_int64(s, 3);
		g->min = sqlite3_column_int64(s, 4);
		g->max = sqlite3_column_int64(s, 5);
		g->avg = sqlite3_column_double(s, 6);
		g->med = sqlite3_column_double(s, 7);
		g->sd = sqlite3_column_double(s, 8);
		R->all_total = xp_sat_add(R->all_total, g->total);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

static void group_finish(struct group *g, int64_t *d)
{
	struct xp_stats st;

	xp_stats__of_sorted(d, g->n, sizeof(*d), g->total, &st);
	g->avg = st.avg;
	g->med = st.med;
	g->sd = st.sd;
}

/* Runs a (name, key, duration) query ordered by key, duration. */
static int collect(struct rep *R, const char *sql)
{
	sqlite3_stmt *s;
	int64_t *d = NULL;
	size_t dcap = 0;
	struct group *cur = NULL;
	int rc;

	if (xp_rep_prepare(R, sql, &s) < 0)
		return -EIO;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t key = sqlite3_column_int64(s, 1), dur = sqlite3_column_int64(s, 2);
		const char *name = (const char *)sqlite3_column_text(s, 0);

		if (!cur || cur->key != key) {
			if (cur)
				group_finish(cur, d);
			if (add_group(R, &cur) < 0)
				goto oom;
			*cur = (struct group){ .key = key, .min = dur, .max = dur,
					       .name = strdup(name ? name : "") };
			if (!cur->name)
				goto oom;
		}
		if (xp_array__reserve((void **)&d, &dcap, cur->n + 1, sizeof(*d), 1024))
			goto oom;
		d[cur->n++] = dur;
		cur->total = xp_sat_add(cur->total, dur);
		cur->min = dur < cur->min ? dur : cur->min;
		cur->max = dur > cur->max ? dur : cur->max;
		R->all_total = xp_sat_add(R->all_total, dur);
	}
	if (cur)
		group_finish(cur, d);
	free(d);
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : -EIO;
oom:
	free(d);
	sqlite3_finalize(s);
	return -ENOMEM;
}

static enum xp_report_sort sort_by;

static int cmp_group(const void *pa, const void *pb)
{
	const struct group *a = pa, *b = pb;
	int c = 0;

	switch (sort_by) {
	case XP_SORT_TOTAL: c = (b->total > a->total) - (b->total < a->total); break;
	case XP_SORT_AVG: c = (b->avg > a->avg) - (b->avg < a->avg); break;
	case XP_SORT_INSTANCES: c = (b->n > a->n) - (b->n < a->n); break;
	case XP_SORT_NAME: break;
	}
	if (!c)
		c = strcmp(a->name, b->name);
	return c ? c : (a->key > b->key) - (a->key < b->key);
}

/* Text reports name C++ functions and kernels short (elidename.h);
 * csv and json keep the names whole for scripts. */
static int short_names(const struct xp_report_opts *o)
{
	return o->format == XP_FMT_TEXT && !o->full_names;
}

/* Bytes of line that fit in width columns (UTF-8: a character is a column). */
size_t xp_rep_fit_bytes(const char *line, unsigned width, int *cut)
{
	unsigned cols = 0;
	size_t i = 0;

	*cut = 0;
	while (line[i]) {
		size_t next = i + 1;

		while (((unsigned char)line[next] & 0xc0) == 0x80)
			next++;
		if (++cols > width) {
			*cut = 1;
			return i;
		}
		i = next;
	}
	return i;
}

void xp_rep_put_line(FILE *out, const char *line, unsigned width)
{
	int cut = 0;
	size_t n;

	line = xp_esc(line);        /* a run's names: no control character reaches the terminal */
	n = strlen(line);

	if (width > 1 && (xp_rep_fit_bytes(line, width, &cut), cut)) {
		char fit[4096];

		if (xp_rep_fit_last_field(line, width, fit, sizeof(fit))) {
			fprintf(out, "%s\n", fit);
			return;
		}
		n = xp_rep_fit_bytes(line, width - 1, &cut);
	}
	fwrite(line, 1, n, out);
	fputs(cut ? "\u2026\n" : "\n", out);
}

/* One text line, cut to o->width columns with an ellipsis (0: whole): a
 * table row or a stack must not wrap into the next in a terminal. */
void xp_rep_put_row(struct rep *R, const char *line)
{
	xp_rep_put_line(R->out, line, R->o->width);
}

void xp_rep_put_title(struct rep *R)
{
	char head[256];

	snprintf(head, sizeof(head), "** %s:", xp_rep_title(R->o->by));
	xp_rep_put_row(R, head);
}

/* Prose (the footer) wrapped at o->width columns on spaces, the following
 * lines indented under the first's text. */
static void put_wrapped(struct rep *R, FILE *to, const char *text)
{
	unsigned width = R->o->width, indent = (unsigned)strspn(text, " ") + 4;
	const char *p = text;
	int first = 1, cut;

	while (width > indent + 20) {
		size_t room = first ? width : width - indent, n = xp_rep_fit_bytes(p, (unsigned)room, &cut);
		size_t brk = n;

		if (!cut)
			break;
		while (brk > 0 && p[brk] != ' ')
			brk--;
		if (brk == 0)
			brk = n;        /* one long word: cut it */
		fprintf(to, "%*s%.*s\n", first ? 0 : (int)indent, "", (int)brk, p);
		p += brk;
		p += strspn(p, " ");
		first = 0;
	}
	fprintf(to, "%*s%s\n", first ? 0 : (int)indent, "", p);
}

/* "launch_a <- forward <- main": user frames from the leaf-most one of the
 * caller's code (kernel and CUDA-layer frames skipped), at most o->frames.
 * A Python program's launch goes through dozens of C++ frames before its
 * own code: when the leaf-most Python frame is past the limit, it leads,
 * "py::step:train.py | at::native::... <- ...", so the report names it. */
int xp_rep_frame_stmt(struct rep *R)
{
	return R->walk ? 0 : xp_stackwalk_open(R->db, &R->walk);
}



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

static int format_stack(struct rep *R, int64_t id, char *buf, size_t len)
{
	unsigned shown = 0;
	int own;
	size_t used = 0;
	int cut = 0, shown_py = 0;
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

			if (sym && short_names(R->o) && !xp_is_python_frame(kind, sym)) {
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
	if (!py[0])
		lead_of(&who, shown_py, op, py, sizeof(py));
	if (py[0] && len > 1)
		put_lead(buf, len, used, py);
	return 0;
}

const char *xp_rep_title(enum xp_report_by by)
{
	return by < XP_BY_COUNT ? xp_views[by].title : "?";
}

static int build_query(struct rep *R, char *sql, size_t len)
{
	const struct xp_report_opts *o = R->o;
	const char *col = o->mangled ? "mangledName" : "demangledName";
	char f[256], f2[256];
	int peer;

	switch (o->by) {
	case XP_BY_KERNEL:
		xp_rep_filter(o, "k.globalPid", "k.start", f, sizeof(f));
		snprintf(sql, len, "SELECT s.value, k.%s, k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k"
			 " JOIN StringIds s ON s.id = k.%s WHERE %s ORDER BY 2, 3", col, col, f);
		break;
	case XP_BY_STACK:
		xp_rep_filter(o, "g.gp", "g.start", f, sizeof(f));
		snprintf(sql, len, "SELECT NULL, ifnull(a.stack_id, -1), g.end - g.start FROM " GPU_ROWS
			 " WHERE %s ORDER BY 2, 3", f);
		break;
	case XP_BY_API:
		xp_rep_filter(o, "r.globalTid", "r.start", f, sizeof(f));
		snprintf(sql, len, "SELECT s.value, r.nameId, r.end - r.start FROM CUPTI_ACTIVITY_KIND_RUNTIME r"
			 " JOIN StringIds s ON s.id = r.nameId WHERE %s ORDER BY 2, 3", f);
		break;
	case XP_BY_MEMOP:
		peer = xp_db_has_column(R->db, "CUPTI_ACTIVITY_KIND_MEMCPY", "srcDeviceId");
		xp_rep_filter(o, "m.globalPid", "m.start", f, sizeof(f));
		xp_rep_filter(o, "globalPid", "start", f2, sizeof(f2));
		/* copies between GPUs are grouped by their two devices: "[CUDA memcpy
		 * Peer-to-Peer 0 -> 1]"; the group key keeps each pair apart */
		snprintf(sql, len, "SELECT '[CUDA memcpy ' || ifnull(e.label, m.copyKind) || %s ']',"
			 " m.copyKind + %s, m.end - m.start FROM CUPTI_ACTIVITY_KIND_MEMCPY m"
			 " LEFT JOIN ENUM_CUDA_MEMCPY_OPER e ON e.id = m.copyKind WHERE %s UNION ALL"
			 " SELECT '[CUDA memset]', 1000, end - start FROM CUPTI_ACTIVITY_KIND_MEMSET"
			 " WHERE %s ORDER BY 2, 3", peer ? "ifnull(' ' || m.srcDeviceId || ' -> ' ||"
			 " m.dstDeviceId, '') ||" : "", peer ? "ifnull((m.srcDeviceId * 256 + m.dstDeviceId"
			 " + 1) * 65536, 0)" : "0", f, f2);
		break;
	case XP_BY_THREAD:
		xp_rep_filter(o, "g.gp", "g.start", f, sizeof(f));
		/* the thread's name where the run has it: "pt_autograd_0 754/785"; a
		 * rank of a distributed job names its process: "rank 1: python3
		 * 754/785"; in a merged job without ranks, its host: "node-b: ..." */
		snprintf(sql, len, "SELECT CASE WHEN r.globalTid IS NULL THEN '(no API call)' ELSE"
			 " %s%sifnull(tname.value || ' ', '') || "
			 XP_SQL_PID_LOCAL(XP_SQL_GTID_PID("r.globalTid")) " || '/' || "
			 XP_SQL_GTID_TID("r.globalTid") " END, ifnull(r.globalTid, -1),"
			 " g.end - g.start FROM " GPU_ROWS " LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r"
			 " ON r.rowid = a.api_rowid LEFT JOIN (SELECT globalTid, min(nameId) AS nameId FROM"
			 " ThreadNames GROUP BY globalTid) tn ON tn.globalTid = r.globalTid"
			 " LEFT JOIN StringIds tname ON tname.id = tn.nameId AND tname.value != ''"
			 " WHERE %s ORDER BY 2, 3",
			 xp_db_has_table(R->db, "xp_ranks") ? "ifnull((SELECT 'rank ' || k.rank || ': ' FROM"
			 " xp_ranks k WHERE k.pid = " XP_SQL_GTID_PID("r.globalTid") " LIMIT 1), '') || " : "",
			 xp_db_job_runs(R->db) > 1 ? "CASE WHEN (SELECT count(*) FROM xp_ranks k WHERE"
			 " k.pid = " XP_SQL_GTID_PID("r.globalTid") ") THEN '' ELSE ifnull((SELECT j.host || ': '"
			 " FROM xp_job_runs j WHERE j.run = " XP_SQL_GTID_PID("r.globalTid") " >> 22), '')"
			 " END || " : "", f);
		break;
	case XP_BY_NVTX:
		/* a GPU row counts in every start/end range open on the calling
		 * thread when its API call began (nested ranges each count it) */
		xp_rep_filter(o, "g.gp", "g.start", f, sizeof(f));
		snprintf(sql, len, "SELECT s.value, n.textId, g.end - g.start FROM " GPU_ROWS
			 " JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.rowid = a.api_rowid"
			 " JOIN NVTX_EVENTS n ON n.globalTid = r.globalTid AND n.eventType = 60"
			 " AND n.start <= r.start AND n.end >= r.start"
			 " JOIN StringIds s ON s.id = n.textId WHERE %s ORDER BY 2, 3", f);
		break;
	default:                   /* views with a file of their own (views.c) */
		break;
	}
	return 0;
}

void xp_rep_csv_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if ((unsigned char)*s >= 0x80) {
			/* as JSON and SVG: invalid UTF-8 is U+FFFD */
			s = xp_utf8_fput(out, s) - 1;
			continue;
		}
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
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

/* The launching stacks of one kernel, biggest share first. */
static int kernel_stacks(struct rep *R, const struct group *g, int indent_text, int *first_csv)
{
	const struct xp_report_opts *o = R->o;
	char stack[1024];
	struct shown_list seen = { 0 };
	unsigned limit;
	sqlite3_stmt *s;
	int rc;

	/* text merges the stacks that read the same (they differ only in frames
	 * cut from the view): take more of them than are shown */
	limit = o->format == XP_FMT_TEXT ? MERGE_MAX : o->stacks;
	if (prepare_kernel_stacks(R, limit, &s) < 0)
		return -EIO;
	sqlite3_bind_int64(s, sqlite3_bind_parameter_index(s, ":key"), g->key);
	if (o->format == XP_FMT_JSON)        /* the table wrote its key */
		jsonw_arr_begin(&R->json);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0), t = sqlite3_column_int64(s, 3);
		const char *how = (const char *)sqlite3_column_text(s, 1);
		const char *why = (const char *)sqlite3_column_text(s, 2);
		double share = g->total ? 100.0 * (double)t / (double)g->total : 0;

		if (format_stack(R, id, stack, sizeof(stack)) < 0)
			break;
		if (id < 0)
			snprintf(stack, sizeof(stack), "(unattributed: %s)", why ? why : "?");
		if (o->format == XP_FMT_TEXT) {
			if ((rc = merge_shown(&seen, share, how, stack)) < 0)
				break;
		} else if (o->format == XP_FMT_CSV) {
			char item[1200];

			snprintf(item, sizeof(item), "%s%.1f%% %s %s", *first_csv ? "" : "; ", share,
				 how, stack);
			fputs(item, R->out);     /* inside the quoted cell opened by the caller */
			*first_csv = 0;
		} else {
			json_stack(R, id, t, share, how, why, stack);
		}
	}
	if (o->format == XP_FMT_JSON)
		jsonw_arr_end(&R->json);
	sqlite3_finalize(s);
	if (rc == SQLITE_DONE && o->format == XP_FMT_TEXT)
		print_shown(R, &seen, indent_text);
	for (size_t i = 0; i < seen.n; i++)
		free(seen.v[i].text);
	free(seen.v);
	return rc == SQLITE_DONE ? 0 : rc == -ENOMEM ? -ENOMEM : -EIO;
}

/* The kernel's launching stacks as a column of its row (table.h). */
static int stacks_cell(struct xp_table *t, const struct xp_cell *c)
{
	int first = 1;

	return kernel_stacks(t->ctx, c->p, 12, t->fmt == XP_FMT_CSV ? &first : NULL);
}

/* nsys' columns, then the view's name; --by kernel adds the stacks, --by
 * stack the stack's id for scripts. */
#define GROUP_COLS \
	{ .head = "Time (%)", .json = "time_pct", .kind = XP_COL_FIXED, .width = 8, .rule = 8, .prec = 1 }, \
	{ .head = "Total Time (ns)", .json = "total_ns", .kind = XP_COL_INT, .width = 15, .rule = 15 }, \
	{ .head = "Instances", .json = "instances", .kind = XP_COL_UINT, .width = 9, .rule = 9 }, \
	{ .head = "Avg (ns)", .json = "avg_ns", .kind = XP_COL_FIXED, .width = 12, .rule = 8, .prec = 1 }, \
	{ .head = "Med (ns)", .json = "med_ns", .kind = XP_COL_FIXED, .width = 12, .rule = 8, .prec = 1 }, \
	{ .head = "Min (ns)", .json = "min_ns", .kind = XP_COL_INT, .width = 10, .rule = 8 }, \
	{ .head = "Max (ns)", .json = "max_ns", .kind = XP_COL_INT, .width = 10, .rule = 8 }, \
	{ .head = "StdDev (ns)", .json = "stddev_ns", .kind = XP_COL_FIXED, .width = 12, .rule = 11, .prec = 1 }, \
	{ .head = "Name", .json = "name", .kind = XP_COL_TEXT, .width = 0, .rule = 4 }

static const struct xp_col group_cols[] = { GROUP_COLS };
static const struct xp_col kernel_cols[] = {
	GROUP_COLS, { .head = "Launching CPU Stacks", .json = "stacks", .kind = XP_COL_CALL,
			.call = stacks_cell },
};
static const struct xp_col stack_cols[] = {
	GROUP_COLS, { .head = "Stack Id", .json = "stack_id", .kind = XP_COL_INT,
			.json_only = 1 },
};

/* One group's row in R's format (a kernel's with its launching stacks). */
static int print_row(struct rep *R, struct xp_table *t, struct group *g)
{
	const struct xp_report_opts *o = R->o;
	int rc = 0;
	double pct = R->all_total ? 100.0 * (double)g->total / (double)R->all_total : 0;
	char name[1024], brief[512];
	struct xp_cell c[10] = {
		{ .d = pct }, { .i = g->total }, { .u = g->n }, { .d = g->avg }, { .d = g->med },
		{ .i = g->min }, { .i = g->max }, { .d = g->sd }, { .s = g->name },
	};

	if (t->n > 9)       /* the view's own column: a kernel's stacks, a stack's id */
		c[9] = t->cols[9].kind == XP_COL_CALL ? (struct xp_cell){ .p = g, .absent = !o->stacks } :
			(struct xp_cell){ .i = g->key, .absent = g->key < 0 };

	if (o->by == XP_BY_STACK) {
		if ((rc = format_stack(R, g->key, name, sizeof(name))) < 0)
			return rc;
		if (g->key < 0)
			snprintf(name, sizeof(name), "(unattributed)");
		free(g->name);
		g->name = strdup(name);
		if (!g->name)
			return -ENOMEM;
		c[8].s = g->name;
	}
	if (o->by == XP_BY_KERNEL && short_names(o) && g->name) {
		xp_elide_name(g->name, brief, sizeof(brief));
		c[8].s = brief;
	}
	return xp_table_row(t, c);
}

static int print_table(struct rep *R, size_t shown)
{
	const struct xp_report_opts *o = R->o;
	struct xp_table t = { group_cols, 9, o->format, R->out, &R->json, o->width, R };
	char title[256];
	int rc = 0;

	if (o->by == XP_BY_KERNEL)
		t.cols = kernel_cols, t.n = 10;
	else if (o->by == XP_BY_STACK)
		t.cols = stack_cols, t.n = 10;
	snprintf(title, sizeof(title), "** %s:", xp_rep_title(o->by));
	xp_table_begin(&t, title);
	for (size_t i = 0; i < shown && rc == 0; i++)
		rc = print_row(R, &t, &R->g[i]);
	xp_table_end(&t, shown, R->n);
	return rc;
}

/* ---- footer: coverage, rejected evidence, losses, clock skew, warnings ---- */

void xp_rep_foot_line(struct rep *R, const char *fmt, ...)
{
	FILE *to = R->o->format == XP_FMT_CSV ? R->o->notes : R->out;
	char text[2048];
	va_list ap;

	if (R->o->format == XP_FMT_JSON || !to)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (R->o->format == XP_FMT_TEXT && R->o->width)
		put_wrapped(R, to, xp_esc(text));
	else
		fprintf(to, "%s\n", xp_esc(text));
}

/* A loss's reason as a person reads it: the GPU loader stores CUPTI's
 * numbers, the CPU loader the names of src/runnames.c. */
static const char *loss_reason(const char *r)
{
	static const struct { const char *key, *text; } names[] = {
		{ "1", "BPF ring buffer full" },
		{ "2", "perf side-band buffer overflowed" },
		{ "3", "stacks unreadable, or left out for a full ring (records kept)" },
		{ "4", "disk write failed" },
		{ "16", "CUPTI dropped records (no host buffer)" },
		{ "17", "GPU records without timestamps (device buffer full)" },
		{ "ringbuf_full", "BPF ring buffer full" },
		{ "perf_lost", "perf side-band buffer overflowed" },
		{ "stack_unreadable", "stacks unreadable, or left out for a full ring (records kept)" },
		{ "write_failed", "disk write failed" },
		{ "no_memory", "out of memory while recording" },
		{ "privileged", "setuid/setgid or non-dumpable tasks, not recorded (counted only)" },
		{ "python_unsupported", "Python lines: interpreter version not supported" },
		{ "python_unreadable", "Python lines: frames unreadable" },
	};

	for (size_t i = 0; r && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(r, names[i].key))
			return names[i].text;
	return r && *r ? r : "other";
}

struct cov {
	char how[16];
	char why[160];
	int64_t n, t;
};

/* One pass over the GPU rows (the query costs seconds on big runs); the
 * (how, reason) groups are few. */
static int footer_coverage(struct rep *R)
{
	char sql[1400], f[256];
	sqlite3_stmt *s;
	struct cov *c = NULL;
	size_t nc = 0, cap = 0;
	int64_t total = 0, rows = 0;
	int rc;
	struct jsonw *w = &R->json;

	xp_rep_filter(R->o, "g.gp", "g.start", f, sizeof(f));
	if (R->groups)
		snprintf(sql, sizeof(sql), "SELECT how, reason, records, gpu_ns FROM xp_report_coverage"
			 " ORDER BY CASE 1 WHEN 'exact' THEN 0 WHEN 'inferred' THEN 1 ELSE 2 END, 4 DESC, 2");
	else
		snprintf(sql, sizeof(sql), "SELECT ifnull(a.how, 'none'), ifnull(a.reason, 'not"
			 " correlated yet (run the correlation)'), count(*), sum(g.end - g.start) FROM "
			 GPU_ROWS " WHERE %s GROUP BY 1, 2 ORDER BY CASE 1 WHEN 'exact' THEN 0"
			 " WHEN 'inferred' THEN 1 ELSE 2 END, 4 DESC, 2", f);
	if (xp_rep_prepare(R, sql, &s) < 0)
		return -EIO;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *how = (const char *)sqlite3_column_text(s, 0);
		const char *why = (const char *)sqlite3_column_text(s, 1);

		if (xp_array__reserve((void **)&c, &cap, nc + 1, sizeof(*c), 8)) {
			free(c);
			sqlite3_finalize(s);
			return -ENOMEM;
		}
		snprintf(c[nc].how, sizeof(c[nc].how), "%s", how ? how : "none");
		snprintf(c[nc].why, sizeof(c[nc].why), "%s", why ? why : "?");
		c[nc].n = sqlite3_column_int64(s, 2);
		c[nc].t = sqlite3_column_int64(s, 3);
		total = xp_sat_add(total, c[nc].t);
		rows += c[nc].n;
		nc++;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		free(c);
		return -EIO;
	}
	xp_rep_foot_line(R, "%s", "");
	xp_rep_foot_line(R, "GPU time attribution: %lld ns in %lld records (kernels, memcpy, memset)",
		  (long long)total, (long long)rows);
	if (R->o->format == XP_FMT_JSON) {
		jsonw_key(w, "coverage");
		jsonw_obj_begin(w);
		jsonw_key(w, "gpu_ns"); jsonw_int(w, total);
		jsonw_key(w, "records"); jsonw_int(w, rows);
		jsonw_key(w, "by_how");
		jsonw_arr_begin(w);
	}
	for (size_t i = 0; i < nc; i++) {
		double pct = total ? 100.0 * (double)c[i].t / (double)total : 0;

		if (R->o->format == XP_FMT_JSON) {
			jsonw_obj_begin(w);
			jsonw_key(w, "how"); jsonw_str(w, c[i].how);
			jsonw_key(w, "reason"); jsonw_str(w, c[i].why);
			jsonw_key(w, "records"); jsonw_int(w, c[i].n);
			jsonw_key(w, "gpu_ns"); jsonw_int(w, c[i].t);
			jsonw_key(w, "pct"); jsonw_fixed(w, pct, 1);
			jsonw_obj_end(w);
		} else {
			xp_rep_foot_line(R, "  %-13s %5.1f%%  %12lld ns  %6lld records  %s",
				  !strcmp(c[i].how, "none") ? "unattributed" : c[i].how, pct,
				  (long long)c[i].t, (long long)c[i].n,
				  strcmp(c[i].how, "exact") ? c[i].why : "launch record of the call");
		}
	}
	free(c);
	if (R->o->format == XP_FMT_JSON) {
		jsonw_arr_end(w);
		jsonw_obj_end(w);
	}
	return 0;
}

/* For Python programs: how much of the exactly attributed GPU time has a
 * launch stack that reaches the Python code, and what to do when some stops
 * short (the C++ frames below it outgrew the stack copy). */
/* Why the rest of the GPU time has no Python frame, by who launched it
 * (launcher.h), each with what to do about it. */
static int footer_not_python(struct rep *R, const char *sql, int64_t exact_ns)
{
	int64_t ns[XP_LAUNCHER_KINDS];
	int inproc = xp_launcher_inproc(R->db), rc;
	sqlite3_stmt *s;

	if (xp_rep_prepare(R, sql, &s) < 0)
		return -EIO;
	rc = xp_launcher_shares(R->db, s, ns);
	sqlite3_finalize(s);
	if (rc)
		return rc;
	if (R->o->format == XP_FMT_JSON) {
		jsonw_key(&R->json, "not_python");
		jsonw_arr_begin(&R->json);
	}
	for (int w = XP_LAUNCHER_AUTOGRAD; w < XP_LAUNCHER_KINDS; w++) {
		double pct = exact_ns ? 100.0 * (double)ns[w] / (double)exact_ns : 0;
		char why[400];

		if (!ns[w])
			continue;
		xp_launcher_why(w, inproc, why, sizeof(why));
		if (R->o->format == XP_FMT_JSON) {
			jsonw_obj_begin(&R->json);
			jsonw_key(&R->json, "reason"); jsonw_str(&R->json, xp_launcher_key(w));
			jsonw_key(&R->json, "gpu_ns"); jsonw_int(&R->json, ns[w]);
			jsonw_key(&R->json, "pct"); jsonw_fixed(&R->json, pct, 1);
			jsonw_key(&R->json, "why"); jsonw_str(&R->json, why);
			jsonw_obj_end(&R->json);
		} else {
			xp_rep_foot_line(R, "  %.1f%%: %s", pct, why);
		}
	}
	if (R->o->format == XP_FMT_JSON)
		jsonw_arr_end(&R->json);
	return 0;
}

static int footer_python(struct rep *R)
{
	char sql[1400], f[256];
	struct xp_python_reach r;
	sqlite3_stmt *s;
	double pct, line_pct;
	int rc;

	xp_rep_filter(R->o, "g.gp", "g.start", f, sizeof(f));
	snprintf(sql, sizeof(sql), "SELECT a.stack_id, sum(g.end - g.start) FROM " GPU_ROWS
		 " WHERE a.how = 'exact' AND %s GROUP BY a.stack_id", f);
	if (xp_rep_prepare(R, sql, &s) < 0)
		return -EIO;
	rc = xp_python_reach(R->db, s, &r);
	sqlite3_finalize(s);
	if (rc)
		return rc > 0 ? 0 : rc;
	pct = r.gpu_ns ? 100.0 * (double)r.python_ns / (double)r.gpu_ns : 0;
	line_pct = r.gpu_ns ? 100.0 * (double)r.line_ns / (double)r.gpu_ns : 0;
	if (R->o->format == XP_FMT_JSON) {
		jsonw_key(&R->json, "python");
		jsonw_obj_begin(&R->json);
		jsonw_key(&R->json, "exact_gpu_ns"); jsonw_int(&R->json, r.gpu_ns);
		jsonw_key(&R->json, "python_gpu_ns"); jsonw_int(&R->json, r.python_ns);
		jsonw_key(&R->json, "pct"); jsonw_fixed(&R->json, pct, 1);
		if (r.has_lines) {
			jsonw_key(&R->json, "python_line_gpu_ns"); jsonw_int(&R->json, r.line_ns);
			jsonw_key(&R->json, "line_pct"); jsonw_fixed(&R->json, line_pct, 1);
		}
		jsonw_obj_end(&R->json);
	} else if (r.gpu_ns) {
		xp_rep_foot_line(R, "Python: %.1f%% of the exactly attributed GPU time was launched from a"
			  " Python function", pct);
		if (r.has_lines)
			xp_rep_foot_line(R, "  %.1f%% with its Python line (Python stacks taken at the launch)",
				  line_pct);
	}
	if (r.python_ns < r.gpu_ns)
		return footer_not_python(R, sql, r.gpu_ns);
	return 0;
}

static int is_filtered(const struct xp_report_opts *o)
{
	return o->pid || o->since || o->until;
}

/* Evidence the join threw away. Filtered: the refused launch records of the
 * view's processes and times (xp_launch_rejects); samples out of order are
 * only counted, so that line stays about the whole run and says so. */
static int footer_rejected(struct rep *R)
{
	const struct xp_report_opts *o = R->o;
	struct jsonw *w = &R->json;
	int json = o->format == XP_FMT_JSON, per_view = is_filtered(o) &&
		xp_db_has_table(R->db, "xp_launch_rejects");
	char sql[700], f[256];
	sqlite3_stmt *s;

	xp_rep_filter(o, XP_SQL_GPID("l.pid"), "l.ts", f, sizeof(f));
	if (per_view)
		snprintf(sql, sizeof(sql), "SELECT j.reason, count(*), 0 FROM xp_launch_rejects j"
			 " JOIN xp_launches l ON l.rowid = j.launch_rowid WHERE %s GROUP BY 1"
			 " UNION ALL SELECT reason, count, 1 FROM xp_correlation_counts WHERE count > 0"
			 " AND reason LIKE 'samples out%%' ORDER BY 1", f);
	else
		snprintf(sql, sizeof(sql), "SELECT reason, count, %d FROM xp_correlation_counts"
			 " WHERE count > 0 AND (reason LIKE 'launch%%' OR reason LIKE 'second%%'"
			 " OR reason LIKE 'samples out%%') ORDER BY reason", is_filtered(o));
	if (xp_rep_prepare(R, sql, &s) < 0)
		return -EIO;
	if (json) {
		jsonw_key(w, "rejected");
		jsonw_arr_begin(w);
	}
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *why = (const char *)sqlite3_column_text(s, 0);
		int64_t n = sqlite3_column_int64(s, 1);
		int whole = sqlite3_column_int(s, 2);

		if (json) {
			jsonw_obj_begin(w);
			jsonw_key(w, "reason"); jsonw_str(w, why);
			jsonw_key(w, "count"); jsonw_int(w, n);
			if (whole) {
				jsonw_key(w, "whole_run"); jsonw_bool(w, 1);
			}
			jsonw_obj_end(w);
		} else {
			xp_rep_foot_line(R, "Rejected evidence: %s: %lld%s", why, (long long)n,
				  whole ? " (whole run, not filtered)" : "");
		}
	}
	sqlite3_finalize(s);
	if (json)
		jsonw_arr_end(w);
	return 0;
}

/* Losses carry a time (when known) but no process: a time filter applies to
 * those with a time; under --pid every line is about the whole run. */
static int footer_losses(struct rep *R)
{
	const struct xp_report_opts *o = R->o;
	struct jsonw *w = &R->json;
	int json = o->format == XP_FMT_JSON, any = 0;
	char sql[600], f[256];
	sqlite3_stmt *s;

	/* the scope column: 0 in the view, 1 untimed (whole run), 2 not per process */
	xp_rep_filter(&(struct xp_report_opts){ .since = o->since, .until = o->until }, "0", "ts", f,
	       sizeof(f));
	if (o->pid)
		snprintf(sql, sizeof(sql), "SELECT reason, kind, sum(count), ifnull(source, ''), 2"
			 " FROM xp_losses GROUP BY 1, 2, 4 ORDER BY 4, 1, 2");
	else
		snprintf(sql, sizeof(sql), "SELECT reason, kind, sum(count), ifnull(source, ''),"
			 " %s FROM xp_losses WHERE ts IS NULL OR (%s) GROUP BY 1, 2, 4, 5"
			 " ORDER BY 4, 1, 2, 5", o->since || o->until ? "ts IS NULL" : "0", f);
	if (xp_rep_prepare(R, sql, &s) < 0)
		return -EIO;
	if (json) {
		jsonw_key(w, "losses");
		jsonw_arr_begin(w);
	}
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *reason = (const char *)sqlite3_column_text(s, 0);
		const char *kind = (const char *)sqlite3_column_text(s, 1);
		int64_t n = sqlite3_column_int64(s, 2);
		const char *src = (const char *)sqlite3_column_text(s, 3);
		int whole = sqlite3_column_int(s, 4);   /* 1 untimed, 2 not per process */
		int known = kind && *kind && strcmp(kind, "0");

		/* a launch from a thread with no Python lost nothing: there was none
		 * (the Python footer gives who launched it) */
		if (reason && !strcmp(reason, "python_no_thread"))
			continue;
		any = 1;
		if (json) {
			jsonw_obj_begin(w);
			jsonw_key(w, "reason"); jsonw_str(w, loss_reason(reason));
			jsonw_key(w, "record_type"); jsonw_str(w, kind ? kind : "");
			jsonw_key(w, "count"); jsonw_int(w, n);
			jsonw_key(w, "source"); jsonw_str(w, src);
			if (whole) {
				jsonw_key(w, "whole_run"); jsonw_bool(w, 1);
			}
			jsonw_obj_end(w);
		} else {
			xp_rep_foot_line(R, "Losses: %s: %lld %s%s%s%s%s", loss_reason(reason), (long long)n,
				  known ? kind : "", known ? " records" : "records", *src ? " in " : "", src,
				  whole == 2 ? " (whole run: losses are not recorded per process)" :
				  whole ? " (whole run: no time recorded)" : "");
		}
	}
	sqlite3_finalize(s);
	if (json)
		jsonw_arr_end(w);
	else if (!any)
		xp_rep_foot_line(R, is_filtered(o) ? "Losses: none recorded in this time range" :
			  "Losses: none recorded");
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Kernel start - API call start over the kernels of the filtered view, as
 * the correlation measures it over the whole run. */
static int skew_of_view(struct rep *R, int64_t v[4])
{
	char sql[800], f[256];
	sqlite3_stmt *s;
	int64_t *d = NULL;
	size_t n = 0, cap = 0;
	int rc;

	xp_rep_filter(R->o, "k.globalPid", "k.start", f, sizeof(f));
	snprintf(sql, sizeof(sql), "SELECT k.start - r.start FROM CUPTI_ACTIVITY_KIND_KERNEL k"
		 " JOIN xp_attribution a ON a.gpu_table = 'KERNEL' AND a.gpu_rowid = k.rowid"
		 " JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.rowid = a.api_rowid"
		 " WHERE k.start > 0 AND %s", f);
	if (xp_rep_prepare(R, sql, &s) < 0)
		return -EIO;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (xp_array__reserve((void **)&d, &cap, n + 1, sizeof(*d), 1024)) {
			free(d);
			sqlite3_finalize(s);
			return -ENOMEM;
		}
		d[n++] = sqlite3_column_int64(s, 0);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		free(d);
		return -EIO;
	}
	memset(v, 0, 4 * sizeof(*v));
	if (n) {
		qsort(d, n, sizeof(*d), cmp_i64);
		v[0] = (int64_t)n;
		v[1] = d[0];
		v[2] = n % 2 ? d[n / 2] : (d[n / 2 - 1] + d[n / 2]) / 2;
		for (size_t i = 0; i < n && d[i] < 0; i++)
			v[3]++;
	}
	free(d);
	return 0;
}

static int footer_skew(struct rep *R)
{
	struct jsonw *w = &R->json;
	int json = R->o->format == XP_FMT_JSON, rc;
	int64_t v[4] = { 0 };          /* kernels, min, median, negative */
	sqlite3_stmt *s;

	if (is_filtered(R->o)) {
		if ((rc = skew_of_view(R, v)) < 0)
			return rc;
	} else {
		if (xp_rep_prepare(R, "SELECT (SELECT value FROM META_DATA_EXPORT WHERE name = 'xp_clock_skew_kernels'),"
			    " (SELECT value FROM META_DATA_EXPORT WHERE name = 'xp_clock_skew_min_ns'),"
			    " (SELECT value FROM META_DATA_EXPORT WHERE name = 'xp_clock_skew_median_ns'),"
			    " (SELECT value FROM META_DATA_EXPORT WHERE name = 'xp_clock_skew_negative')",
			    &s) < 0)
			return -EIO;
		if (sqlite3_step(s) == SQLITE_ROW)
			for (int i = 0; i < 4; i++)
				v[i] = sqlite3_column_int64(s, i);
		sqlite3_finalize(s);
	}
	if (json) {
		jsonw_key(w, "clock_skew");
		jsonw_obj_begin(w);
		jsonw_key(w, "kernels"); jsonw_int(w, v[0]);
		jsonw_key(w, "min_ns"); jsonw_int(w, v[1]);
		jsonw_key(w, "median_ns"); jsonw_int(w, v[2]);
		jsonw_key(w, "negative"); jsonw_int(w, v[3]);
		jsonw_obj_end(w);
	} else if (v[0] == 0) {
		xp_rep_foot_line(R, "Clock skew: not measured (no kernel with its API call%s)",
			  is_filtered(R->o) ? " in this view" : "");
	} else {
		xp_rep_foot_line(R, "Clock skew (kernel start - API call start, >= 0 when clocks agree):"
			  " min %lld ns, median %lld ns over %lld kernels%s", (long long)v[1],
			  (long long)v[2], (long long)v[0], v[3] ? "; NEGATIVE: clocks disagree" : "");
	}
	return 0;
}

static int footer_rest(struct rep *R)
{
	int rc;

	if ((rc = footer_rejected(R)) < 0 || (rc = footer_losses(R)) < 0 ||
	    (rc = footer_skew(R)) < 0)
		return rc;
	return xp_rep_recording_cost(R);
}

/* What xpcap wrote in meta.json about why GPU capture was off or failed
 * (gpu_problem, gpu_not_armed, cuda_library), with the remedy. */
static void why_from_meta(struct rep *R, char *why, size_t len)
{
	sqlite3_stmt *s;

	if (xp_rep_prepare(R, "SELECT (SELECT value FROM META_DATA_EXPORT WHERE name ="
		    " 'meta.gpu_problem.text'), (SELECT value FROM META_DATA_EXPORT WHERE name ="
		    " 'meta.gpu_not_armed'), (SELECT value FROM META_DATA_EXPORT WHERE name ="
		    " 'meta.cuda_library.path'), (SELECT value FROM META_DATA_EXPORT WHERE name ="
		    " 'meta.capture_window.range')", &s) < 0)
		return;
	if (sqlite3_step(s) == SQLITE_ROW) {
		const char *problem = (const char *)sqlite3_column_text(s, 0);
		const char *not_armed = (const char *)sqlite3_column_text(s, 1);
		const char *cuda = (const char *)sqlite3_column_text(s, 2);
		const char *range = (const char *)sqlite3_column_text(s, 3);

		if (problem)
			snprintf(why, len, "the injection library could not trace: %s", problem);
		else if (not_armed && cuda)
			snprintf(why, len, "the program loaded %s, but GPU capture was not armed: %s",
				 cuda, not_armed);
		else if (not_armed)
			snprintf(why, len, "GPU capture was not armed: %s", not_armed);
		else if (range)
			snprintf(why, len, "--capture-range %s: no GPU work inside the range (did the"
				 " program reach it? %s)", range, strncmp(range, "nvtx:", 5) ?
				 "cudaProfilerStart, torch.cuda.profiler.start()" :
				 "an NVTX range of exactly that name, pushed or started");
	}
	sqlite3_finalize(s);
}

/* A fatal status of the injection library (runs of an older xpcap say
 * it only there). */
static int status_why(struct rep *R, char *why, size_t len)
{
	sqlite3_stmt *s;

	if (xp_rep_prepare(R, "SELECT code, severity, ifnull(text, '') FROM xp_gpu_status"
		    " WHERE code = 2 OR severity = 2 ORDER BY code = 2 DESC, ts LIMIT 1", &s) < 0)
		return -EIO;
	if (sqlite3_step(s) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(s, 2);

		if (sqlite3_column_int64(s, 0) == 2)
			snprintf(why, len, "another CUPTI subscriber held the subscription"
				 " (%s): close torch.profiler/nsys/other tools and run again", t);
		else
			snprintf(why, len, "GPU tracing stopped: %s", t);
	}
	sqlite3_finalize(s);
	return 0;
}

/* Why a run has no GPU rows at all, from what xpcap and the injection
 * library said, after lead ("WARNING: no GPU activity in this run"). */
static int no_activity_note(struct rep *R, const char *lead)
{
	sqlite3_stmt *s;
	char why[1024] = "";
	int64_t gpu = 0, procs = 0;

	/* whether there are rows, not how many: count(*) reads every row */
	if (xp_rep_prepare(R, "SELECT EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_KERNEL) OR"
		    " EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_MEMCPY) OR"
		    " EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_MEMSET),"
		    " EXISTS (SELECT 1 FROM xp_gpu_processes)", &s) < 0)
		return -EIO;
	if (sqlite3_step(s) == SQLITE_ROW) {
		gpu = sqlite3_column_int64(s, 0);
		procs = sqlite3_column_int64(s, 1);
	}
	sqlite3_finalize(s);
	if (gpu)
		return 0;
	why_from_meta(R, why, sizeof(why));
	if (!why[0] && status_why(R, why, sizeof(why)) < 0)
		return -EIO;
	if (!why[0])
		snprintf(why, sizeof(why), procs ?
			 "the traced processes loaded CUDA but ran no GPU work while traced" :
			 "no GPU stream in the run: not a CUDA program, or the injection library"
			 " was blocked (setuid program, CUDA_INJECTION64_PATH overridden, static"
			 " CUDA without injection support)");
	if (R->o->format == XP_FMT_JSON) {
		jsonw_key(&R->json, "warning");
		jsonw_str(&R->json, why);
	} else {
		xp_rep_foot_line(R, "%s: %s", lead, why);
	}
	return 0;
}

static int no_activity_warning(struct rep *R)
{
	return no_activity_note(R, "WARNING: no GPU activity in this run");
}

/* A view of CPU samples (--by cpu, --by source on them): no GPU footer. */
static int cpu_samples(const struct xp_report_opts *o)
{
	return o->by == XP_BY_CPU || (o->cpu && o->by == XP_BY_SOURCE);
}

/* The CPU views' footer after their own: the losses (samples lost too);
 * json keeps the keys every report has (report-schema.json). */
static int footer_cpu(struct rep *R)
{
	int rc = 0;

	if (R->o->format == XP_FMT_JSON && ((rc = footer_coverage(R)) < 0 ||
					     (rc = footer_rejected(R)) < 0))
		return rc;
	if ((rc = footer_losses(R)) < 0)
		return rc;
	/* why a run has no GPU side, as the GPU views say it; not a warning here */
	return no_activity_note(R, "No GPU work in this run");
}

int xp_report(sqlite3 *db, const struct xp_report_opts *o, FILE *out, size_t *groups)
{
	struct rep R = { .db = db, .o = o, .out = out };
	struct xp_db_task *fresh = NULL;
	char sql[2048];
	size_t shown, rows = 0;
	int rc = 0;

	build_query(&R, sql, sizeof(sql));
	/* the stack tables are the main loader's: fail before any output if absent */
	if ((o->by == XP_BY_KERNEL || o->by == XP_BY_STACK) && xp_rep_frame_stmt(&R) < 0) {
		rc = -EIO;
		goto out;
	}
	if (xp_views[o->by].run && !filtered(o) && !cpu_samples(o))
		rc = xp_db_task_start(db, groups_fresh_task, &R, &fresh);
	else
		R.groups = use_groups(&R);
	if (rc < 0)
		goto out;
	if (!xp_views[o->by].run &&
	    (rc = R.groups && groups_view(o) ? collect_groups(&R, groups_view(o)) :
	     collect(&R, sql)) < 0)
		goto out;
	sort_by = o->sort;
	if (R.n)     /* qsort wants a non-NULL base even for 0 items (UBSan) */
		qsort(R.g, R.n, sizeof(*R.g), cmp_group);
	shown = o->top && o->top < R.n ? o->top : R.n;
	rows = R.n;
	if (o->format == XP_FMT_JSON) {
		jsonw_init(&R.json, out);
		jsonw_obj_begin(&R.json);
		jsonw_key(&R.json, "report");
		jsonw_str(&R.json, xp_views[o->by].name);
		jsonw_key(&R.json, "title");
		jsonw_str(&R.json, o->cpu && o->by == XP_BY_SOURCE ? xp_source_cpu_title :
			  xp_rep_title(o->by));
		if (!xp_views[o->by].run) {  /* the others count rows after */
			jsonw_key(&R.json, "groups");
			jsonw_uint(&R.json, R.n);
		}
	}
	if ((rc = xp_views[o->by].run ? xp_views[o->by].run(&R, &rows) : print_table(&R, shown)) < 0 ||
	    (rc = xp_db_task_join(fresh)) < 0)
		goto out;
	fresh = NULL;
	if (cpu_samples(o))
		rc = footer_cpu(&R);
	else if ((rc = footer_coverage(&R)) >= 0 && (rc = footer_python(&R)) >= 0 &&
		 (rc = footer_rest(&R)) >= 0)
		rc = no_activity_warning(&R);
	if (rc < 0)
		goto out;
	if (o->format == XP_FMT_JSON) {
		jsonw_obj_end(&R.json);
		fputc('\n', out);
		rc = jsonw_error(&R.json);
	}
out:
	xp_db_task_drop(fresh);
	if (groups)
		*groups = rows;
	for (size_t i = 0; i < R.n; i++)
		free(R.g[i].name);
	free(R.g);
	xp_stackwalk_close(R.walk);
	return rc;
}
