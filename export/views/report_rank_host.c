/* report_rank_host.c - --by rank's collectives waited for on the hosts
 * (rank_host.h): gloo runs its collectives on the host, each rank's
 * thread waiting in c10d::Work::wait while they run, with no collective
 * kernel for the spread table to list. */
#include "export/views/rank_host.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "src/gtid.h"
#include "export/report/decl.h"
#include "export/report/table.h"

/* Whether --pid, --since and --until select instance inst (its first entry). */
static int selected(const struct xp_report_opts *o, const struct xp_host_colls *H, size_t inst)
{
	int64_t first = INT64_MAX;

	for (size_t r = 0; r < H->nranks; r++)
		if (xp_host_coll_at(H, inst, r)->entry < first)
			first = xp_host_coll_at(H, inst, r)->entry;
	return (!o->since || first >= o->since) && (!o->until || first < o->until);
}

static int rank_selected(const struct xp_report_opts *o, const struct xp_host_colls *H, size_t r)
{
	return xp_tl_selected(xp_gpid((uint64_t)H->pid[r]), o->pid);
}

/* One collective's totals: late[r] the others' wait for rank r. */
static void one_coll(const struct xp_report_opts *o, const struct xp_host_colls *H, size_t name,
		     struct xp_rank_host_coll *c, int64_t *late, int64_t *in)
{
	int64_t most = INT64_MIN, least = INT64_MAX;

	memset(late, 0, H->nranks * sizeof(*late));
	memset(in, 0, H->nranks * sizeof(*in));
	*c = (struct xp_rank_host_coll){ .name = H->names[name], .late_rank = -1, .late_stack = -1 };
	for (size_t k = 0; k < H->ninst; k++) {
		int close;
		size_t l = xp_host_coll_late(H, k, &close);

		if (xp_host_coll_at(H, k, 0)->name != name || !selected(o, H, k))
			continue;
		for (size_t r = 0; r < H->nranks; r++) {
			const struct xp_host_wait *w = xp_host_coll_at(H, k, r);
			int64_t ns = xp_host_coll_wait(H, k, r);

			in[r] += w->end - w->entry;
			c->wait_ns += ns;
			*(close ? &c->unsure_ns : &late[l]) += ns;
		}
	}
	for (size_t r = 0; r < H->nranks; r++) {
		most = in[r] > most ? in[r] : most;
		least = in[r] < least ? in[r] : least;
		if (late[r] > c->late_ns && rank_selected(o, H, r))
			c->late_ns = late[r], c->late_rank = (int64_t)r;
	}
	c->spread_ns = H->nranks ? most - least : 0;
	for (size_t k = 0; c->late_rank >= 0 && k < H->ninst && c->late_stack < 0; k++) {
		int close;

		if (xp_host_coll_at(H, k, 0)->name == name && selected(o, H, k) &&
		    xp_host_coll_late(H, k, &close) == (size_t)c->late_rank && !close)
			c->late_stack = xp_host_coll_at(H, k, (size_t)c->late_rank)->stack;
	}
	if (c->late_rank >= 0)
		c->late_rank = H->rank[c->late_rank];
}

int xp_rank_host_colls(const struct xp_report_opts *o, const struct xp_host_colls *H,
		       struct xp_rank_host_coll **out, size_t *n)
{
	int64_t *late = malloc((H->nranks ? H->nranks : 1) * 2 * sizeof(*late));

	*out = NULL;
	*n = 0;
	if (!late)
		return -ENOMEM;
	if (H->ninst && H->nnames && !(*out = calloc(H->nnames, sizeof(**out)))) {
		free(late);
		return -ENOMEM;
	}
	for (size_t i = 0; H->ninst && i < H->nnames; i++) {
		one_coll(o, H, i, &(*out)[*n], late, late + H->nranks);
		*n += (*out)[*n].wait_ns > 0 || (*out)[*n].spread_ns > 0;
	}
	free(late);
	return 0;
}

/* The section: its csv rows continue the ranks table's sheet (its header's
 * fields, Section "host"); json "host_collectives". */
enum { H_SECTION, H_RANK, H_WORLD, H_PID, H_HOST, H_GPU, H_KERNELS, H_IN, H_SYNC, H_NAME,
       H_SPREAD, H_SLOWEST, H_WAITED, H_UNSURE, H_WAITS, H_LAST, H_N };
static const struct xp_col cols[H_N] = {
	[H_SECTION] = { .head = "Section", .kind = XP_COL_TEXT },
	[H_RANK] = { .head = "Rank", .json = "rank", .kind = XP_COL_INT, .width = 4, .rule = 4 },
	[H_WORLD] = { .head = "World", .kind = XP_COL_INT },
	[H_PID] = { .head = "PID", .json = "pid", .kind = XP_COL_INT, .width = 7, .rule = 3 },
	[H_HOST] = { .head = "Host", .kind = XP_COL_TEXT },
	[H_GPU] = { .head = "GPU Time (ns)", .kind = XP_COL_INT },
	[H_KERNELS] = { .head = "Kernels", .kind = XP_COL_INT },
	[H_IN] = { .head = "In Waits (ns)", .csv = "Collectives (ns)", .json = "host_wait_ns",
		   .kind = XP_COL_INT, .width = 14, .rule = 13 },
	[H_SYNC] = { .head = "Sync Wait (ns)", .kind = XP_COL_INT },
	[H_NAME] = { .head = "Collective (host-side)", .csv = "Name", .json = "collective",
		     .kind = XP_COL_TEXT, .width = 0, .rule = 10 },
	[H_SPREAD] = { .head = "Spread (ns)", .kind = XP_COL_INT },
	[H_SLOWEST] = { .head = "Slowest Rank", .kind = XP_COL_INT },
	[H_WAITED] = { .head = "Waited For Others (ns)", .csv = "Waited (ns)", .json = "waited_ns",
		       .kind = XP_COL_INT, .width = 22, .rule = 22 },
	[H_UNSURE] = { .head = "Waited Within Clock Error (ns)",
		       .json = "waited_within_clock_error_ns", .kind = XP_COL_INT },
	[H_WAITS] = { .head = "Waits", .json = "waits", .kind = XP_COL_UINT, .width = 5, .rule = 5 },
	[H_LAST] = { .head = "Last In", .json = "last_entries", .kind = XP_COL_UINT, .width = 7,
		     .rule = 7 },
};
static const unsigned char text_cols[] = { H_RANK, H_WAITS, H_IN, H_WAITED, H_LAST, H_PID,
	H_NAME };
static const unsigned char csv_cols[] = { H_SECTION, H_RANK, H_WORLD, H_PID, H_HOST, H_GPU,
	H_KERNELS, H_IN, H_SYNC, H_NAME, H_SPREAD, H_SLOWEST, H_WAITED, H_UNSURE };
static const unsigned char json_cols[] = { H_RANK, H_PID, H_NAME, H_WAITS, H_IN, H_WAITED,
	H_UNSURE, H_LAST };

/* Rank r's row for collective name. */
static void rank_row(struct rep *R, struct xp_table *t, const struct xp_host_colls *H, size_t r,
		     size_t name)
{
	int64_t in = 0, waited = 0, unsure = 0;
	uint64_t waits = 0, last = 0;

	for (size_t k = 0; k < H->ninst; k++) {
		const struct xp_host_wait *w = xp_host_coll_at(H, k, r);
		int close;
		size_t l;

		if (w->name != name || !selected(R->o, H, k))
			continue;
		l = xp_host_coll_late(H, k, &close);
		waits++;
		in += w->end - w->entry;
		waited += xp_host_coll_wait(H, k, r);
		unsure += close ? xp_host_coll_wait(H, k, r) : 0;
		last += l == r && !close;
	}
	if (!waits)
		return;
	xp_table_row(t, (struct xp_cell[H_N]){
		[H_SECTION] = { .s = "host" }, [H_RANK] = { .i = H->rank[r] },
		[H_WORLD] = { .absent = 1 }, [H_PID] = { .i = xp_pid_local((uint64_t)H->pid[r]) },
		[H_HOST] = { .absent = 1 }, [H_GPU] = { .absent = 1 }, [H_KERNELS] = { .absent = 1 },
		[H_IN] = { .i = in }, [H_SYNC] = { .absent = 1 }, [H_NAME] = { .s = H->names[name] },
		[H_SPREAD] = { .absent = 1 }, [H_SLOWEST] = { .absent = 1 }, [H_WAITED] = { .i = waited },
		[H_UNSURE] = { .i = unsure }, [H_WAITS] = { .u = waits }, [H_LAST] = { .u = last } });
}

int xp_rank_host_section(struct rep *R, const struct xp_host_colls *H)
{
	struct xp_table t = { .cols = cols, .n = H_N, .fmt = R->o->format, .out = R->out,
			      .json = &R->json, .width = R->o->width, .key = "host_collectives",
			      .lead = "  ", .no_split = 1, .csv_continues = 1,
			      .text_order = text_cols, .text_n = sizeof(text_cols),
			      .csv_order = csv_cols, .csv_n = sizeof(csv_cols),
			      .json_order = json_cols, .json_n = sizeof(json_cols) };
	size_t rows = 0, odd = xp_host_colls_odd(H);

	if (H->mismatch) {
		xp_table_text(&t, "%s", "");
		xp_table_text(&t, "  Host-side collectives (waits in c10d::Work::wait) not matched across"
			      " ranks: rank %lld waited %zu times, rank %lld %zu", (long long)H->rank[0],
			      H->count[0], (long long)H->rank[odd], H->count[odd]);
	}
	if (!H->ninst)
		return 0;
	xp_table_text(&t, "%s", "");
	xp_table_begin(&t, "  Host-side collectives: each rank's waits in c10d::Work::wait (gloo, CPU"
		       " work), and in them for the last rank to enter:");
	for (size_t name = 0; name < H->nnames; name++)
		for (size_t r = 0; r < H->nranks; r++) {
			size_t before = t.rows;

			if (!rank_selected(R->o, H, r))
				continue;
			rank_row(R, &t, H, r, name);
			rows += t.rows - before;
		}
	xp_table_end(&t, rows, rows);
	return 0;
}

/* Where the section lands in json (report/decl.h). */
const struct xp_decl xp_decl_rank_host[] = {
	XP_DECL_ORDER("rank", "host_collectives[]", cols, json_cols),
	{ 0 },
};
