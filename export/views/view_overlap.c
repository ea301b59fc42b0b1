/* view_overlap.c - `xpcorr report --by overlap`: per device of each rank,
 * how much of its communication (NCCL and gloo kernels, as the time they
 * ran on the device, collectives overlapping each other counted once) ran
 * while compute kernels ran on the same device, and the exposed rest; then
 * the collectives exposed most, by kernel and the line that launched them
 * (HTA's comm_comp_overlap, nsys nccl_gpu_overlap_trace).
 *
 *   xpcorr report --by overlap --top 5 job/
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "export/names/elidename.h"
#include "src/gtid.h"
#include "export/names/launchsite.h"
#include "export/report/report_priv.h"
#include "export/report/decl.h"
#include "export/report/table.h"
#include "export/analysis/timeline.h"

struct time_span {
	int64_t a, b;
};

struct exposed {
	int64_t name, stack;        /* kernel name id, launch stack */
	const char *site;
	uint64_t n;
	int64_t ns, exposed_ns;
};

/* The union of the class's ops, clipped to [w0, w1), in order. */
static int union_of(const struct xp_tl *tl, int cls, int64_t w0, int64_t w1, struct time_span **out,
		    size_t *n)
{
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < tl->n; i++) {
		const struct xp_tl_op *op = &tl->ops[i];
		int64_t a = op->start < w0 ? w0 : op->start, b = op->end > w1 ? w1 : op->end;

		if (op->cls != cls || b <= a)
			continue;
		if (*n && a <= (*out)[*n - 1].b) {
			if (b > (*out)[*n - 1].b)
				(*out)[*n - 1].b = b;
			continue;
		}
		if (xp_array__reserve((void **)out, &cap, *n + 1, sizeof(**out), 256))
			return -ENOMEM;
		(*out)[(*n)++] = (struct time_span){ a, b };
	}
	return 0;
}

/* ns of [a, b) covered by the spans u (sorted, disjoint). */
static int64_t covered(const struct time_span *u, size_t n, int64_t a, int64_t b)
{
	size_t lo = 0, hi = n;
	int64_t ns = 0;

	while (lo < hi) {               /* the first span ending after a */
		size_t mid = lo + (hi - lo) / 2;

		if (u[mid].b <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n && u[i].a < b; i++) {
		int64_t x = u[i].a > a ? u[i].a : a, y = u[i].b < b ? u[i].b : b;

		ns += y > x ? y - x : 0;
	}
	return ns;
}

static int cmp_exposed(const void *pa, const void *pb)
{
	const struct exposed *a = pa, *b = pb;

	if (a->exposed_ns != b->exposed_ns)
		return a->exposed_ns < b->exposed_ns ? 1 : -1;
	return a->ns < b->ns ? 1 : a->ns > b->ns ? -1 : strcmp(a->site, b->site);
}

static int add_exposed(struct exposed **e, size_t *n, size_t *cap, const struct xp_tl_op *op,
		       const char *site, int64_t ns, int64_t exposed)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if ((*e)[i].name == op->name && !strcmp((*e)[i].site, site))
			break;
	if (i == *n) {
		if (xp_array__reserve((void **)e, cap, *n + 1, sizeof(**e), 16))
			return -ENOMEM;
		(*e)[(*n)++] = (struct exposed){ .name = op->name, .stack = op->stack, .site = site };
	}
	(*e)[i].n++;
	(*e)[i].ns += ns;
	(*e)[i].exposed_ns += exposed;
	return 0;
}

static void kernel_name(struct rep *R, int64_t id, char *buf, size_t len)
{
	sqlite3_stmt *s;

	snprintf(buf, len, "?");
	if (sqlite3_prepare_v2(R->db, "SELECT value FROM StringIds WHERE id = ?", -1, &s, NULL)
	    != SQLITE_OK)
		return;
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
		snprintf(buf, len, "%s", (const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
}

/* A device in text: its totals in a sentence. */
struct device_row {
	int64_t rank, dev;
	long long pid;
	const int64_t *t;
};

static int device_text(struct xp_table *tb, const struct xp_cell *c)
{
	const struct device_row *d = c->p;
	const int64_t *t = d->t;
	double pct = t[1] ? 100.0 * (double)(t[1] - t[2]) / (double)t[1] : 0;
	char who[48] = "", dev[32];

	if (d->rank >= 0)
		snprintf(who, sizeof(who), "Rank %lld, ", (long long)d->rank);
	xp_table_text(tb, "%s", "");
	xp_tl_device_name(d->dev, dev, sizeof(dev));
	xp_table_text(tb, "  %s%s of process %lld: compute %lld ns, comm %lld ns,"
		      " %.1f%% overlapped, %lld ns exposed", who, dev, d->pid,
		      (long long)t[0], (long long)t[1], pct, (long long)t[2]);
	return 0;
}

/* The view's sheet: a device's totals, then its collectives, most exposed
 * first (json: nested in the device; text: the device in a sentence, the
 * name and its site in one field). */
static const struct xp_col exposed_cols[] = {
	{ .head = "Section", .kind = XP_COL_TEXT, .csv_only = 1 },
	{ .head = "Rank", .json = "rank", .kind = XP_COL_INT, .csv_only = 1 },
	{ .head = "Device", .json = "device", .kind = XP_COL_INT, .csv_only = 1 },
	{ .head = "PID", .json = "pid", .kind = XP_COL_INT, .csv_only = 1 },
	{ .head = "Compute (ns)", .json = "compute_ns", .kind = XP_COL_INT, .csv_only = 1 },
	{ .head = "Communication (ns)", .json = "communication_ns", .kind = XP_COL_INT,
	  .csv_only = 1 },
	{ .head = "Overlapped (ns)", .json = "overlapped_ns", .kind = XP_COL_INT, .csv_only = 1 },
	{ .head = "Exposed (ns)", .json = "exposed_ns", .kind = XP_COL_INT, .csv_only = 1 },
	{ .head = "Calls", .kind = XP_COL_UINT, .width = 9, .rule = 9 },
	{ .head = "Kernel", .json = "kernel", .kind = XP_COL_TEXT },
	{ .head = "Launch Site", .json = "site", .kind = XP_COL_TEXT },
	{ .head = "Calls", .json = "calls", .kind = XP_COL_UINT, .json_only = 1 },
	{ .head = "Comm (ns)", .csv = "Collective (ns)", .json = "ns", .kind = XP_COL_INT,
	  .width = 13, .rule = 13 },
	{ .head = "Exposed (ns)", .csv = "Collective Exposed (ns)", .json = "exposed_ns",
	  .kind = XP_COL_INT, .width = 13, .rule = 13 },
	{ .head = "Exposed (%)", .kind = XP_COL_FIXED, .width = 11, .rule = 11, .prec = 1,
	  .text_only = 1 },
	{ .head = "Collective  \u2039 launched at", .kind = XP_COL_TEXT, .width = 0, .rule = 10,
	  .text_only = 1 },
	{ .kind = XP_COL_CALL, .text_only = 1, .call = device_text },
};
static const unsigned char exposed_text[] = { 8, 12, 13, 14, 15 };
static const unsigned char device_json[] = { 1, 2, 3, 4, 5, 6, 7 };
#define NCOLS (sizeof(exposed_cols) / sizeof(exposed_cols[0]))

static void print_exposed(struct rep *R, struct xp_table *dt, const struct exposed *e, size_t n,
			  int64_t rank, int64_t dev)
{
	size_t shown = R->o->top && R->o->top < n ? R->o->top : n;
	struct xp_table t = { .cols = exposed_cols, .n = NCOLS, .fmt = R->o->format, .out = R->out,
			      .json = &R->json, .width = R->o->width, .key = "collectives",
			      .lead = "    ", .no_split = 1, .text_order = exposed_text,
			      .text_n = sizeof(exposed_text), .csv_continues = 1, .text_lazy = 1 };

	xp_table_begin(&t, NULL);
	for (size_t i = 0; i < shown; i++) {
		char name[1024], brief[512], both[1400];
		double pct = e[i].ns ? 100.0 * (double)e[i].exposed_ns / (double)e[i].ns : 0;

		kernel_name(R, e[i].name, name, sizeof(name));
		xp_elide_name(name, brief, sizeof(brief));
		snprintf(both, sizeof(both), "%s  \u2039 %s", R->o->full_names ? name : brief, e[i].site);
		xp_table_row(&t, (struct xp_cell[]){
			{ .s = "collective" }, { .i = rank }, { .i = dev }, { .absent = 1 }, { .absent = 1 },
			{ .absent = 1 }, { .absent = 1 }, { .absent = 1 }, { .u = e[i].n }, { .s = name },
			{ .s = e[i].site }, { .u = e[i].n }, { .i = e[i].ns }, { .i = e[i].exposed_ns },
			{ .d = pct }, { .s = both }, { .absent = 1 },
		});
	}
	xp_table_end(&t, shown, shown);
	xp_table_row_close(dt);
}

/* One device: its totals (compute, communication, exposed) and collectives. */
static int one_device(struct rep *R, struct xp_table *dt, struct xp_sites *sites,
		      const struct xp_tl *tl, size_t *rows)
{
	int64_t gpid = tl->gpid, dev = tl->device;
	int64_t w0 = R->o->since, w1 = R->o->until ? R->o->until : INT64_MAX, t[3] = { 0 }, rank;
	struct time_span *comp = NULL, *comm = NULL;
	struct exposed *e = NULL;
	size_t nc = 0, nm = 0, ne = 0, cap = 0;
	int rc;

	if ((rc = union_of(tl, XP_TL_COMPUTE, w0, w1, &comp, &nc)) < 0 ||
	    (rc = union_of(tl, XP_TL_COMM, w0, w1, &comm, &nm)) < 0 || !nm)
		goto out;
	for (size_t i = 0; i < nc; i++)
		t[0] += comp[i].b - comp[i].a;
	for (size_t i = 0; i < nm; i++) {
		t[1] += comm[i].b - comm[i].a;
		t[2] += comm[i].b - comm[i].a - covered(comp, nc, comm[i].a, comm[i].b);
	}
	for (size_t i = 0; i < tl->n && rc == 0; i++) {
		const struct xp_tl_op *op = &tl->ops[i];
		int64_t a = op->start < w0 ? w0 : op->start, b = op->end > w1 ? w1 : op->end;
		const char *site = op->stack > 0 ? xp_sites_get(sites, op->stack) : "(no launch stack)";

		if (op->cls != XP_TL_COMM || b <= a)
			continue;
		rc = site ? add_exposed(&e, &ne, &cap, op, site, b - a, b - a - covered(comp, nc, a, b)) :
		     -ENOMEM;
	}
	if (rc < 0 || (rc = xp_tl_rank(R->db, gpid, &rank)) < 0)
		goto out;
	if (ne)
		qsort(e, ne, sizeof(*e), cmp_exposed);
	{
		struct device_row d = { rank, dev,
					(long long)xp_pid_local((uint64_t)gpid >> 24), t };

		xp_table_row_open(dt, (struct xp_cell[NCOLS]){
			{ .s = "device" }, { .i = d.rank }, { .i = dev }, { .i = d.pid }, { .i = t[0] },
			{ .i = t[1] }, { .i = t[1] - t[2] }, { .i = t[2] }, { .absent = 1 },
			{ .absent = 1 }, { .absent = 1 }, { .absent = 1 }, { .absent = 1 },
			{ .absent = 1 }, { .absent = 1 }, { .absent = 1 }, { .p = &d } });
	}
	print_exposed(R, dt, e, ne, rank, dev);
	(*rows)++;
out:
	free(comp);
	free(comm);
	free(e);
	return rc;
}

int xp_view_overlap(struct rep *R, size_t *rows)
{
	static const unsigned char none[1];
	struct xp_table t = { .cols = exposed_cols, .n = NCOLS, .fmt = R->o->format, .out = R->out,
			      .json = &R->json, .width = R->o->width, .key = "devices",
			      .text_order = none, .json_order = device_json,
			      .json_n = sizeof(device_json) };
	struct xp_sites *sites = NULL;
	struct xp_tl_set set = { 0 };
	char title[256];
	int rc;

	*rows = 0;
	if ((rc = xp_tl_load_all(R->db, &set)) < 0 || (rc = xp_sites_new(R->db, &sites)) < 0)
		goto out;
	xp_sites_prefer_own(sites);
	snprintf(title, sizeof(title), "** %s:", xp_rep_title(R->o->by));
	xp_table_begin(&t, title);
	for (size_t i = 0; i < set.ndev && rc == 0; i++)
		if (xp_tl_selected(set.dev[i].gpid, R->o->pid))
			rc = one_device(R, &t, sites, &set.dev[i], rows);
	xp_table_end(&t, 0, 0);
out:
	xp_sites_free(sites);
	xp_tl_set_free(&set);
	return rc;
}

/* Where the view's tables land in json (report/decl.h). */
const struct xp_decl xp_decl_overlap[] = {
	XP_DECL_ORDER("overlap", "devices[]", exposed_cols, device_json),
	XP_DECL("overlap", "devices[].collectives[]", exposed_cols),
	{ 0 },
};
