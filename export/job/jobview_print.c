/* jobview_print.c - the job views (jobsum.h) in text and csv, from what
 * jobview.c gathered. `--by rank` keeps report_rank.c's csv columns, so a
 * job read from summaries and the same job merged compare row for row. */
#include "export/job/jobview_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export/names/elidename.h"
#include "export/render/jsonw.h"
#include "export/report/report_priv.h"
#include "src/satmath.h"
#include "src/textesc.h"

/* json: every view an object, its rows arrays (J->json set by jv_print) */
#define JSON(J) ((J)->json != NULL)
/* csv and json show every rank and device; text --top of them */
#define EVERY(J) ((J)->o->csv || JSON(J))

static void jint(struct jsonw *j, const char *key, int64_t v)
{
	jsonw_key(j, key);
	jsonw_int(j, v);
}

static void jstr(struct jsonw *j, const char *key, const char *v)
{
	jsonw_key(j, key);
	jsonw_str(j, v);
}

static const struct jv *sort_J;     /* qsort's context */

/* A run's names in csv as every view writes them (quoted, invalid UTF-8
 * as U+FFFD); in text through xp_esc (src/textesc.h). */
static void csv_str(FILE *f, const char *s)
{
	xp_rep_csv_str(f, s ? s : "");
}

static int cmp_rank(const void *a, const void *b)
{
	const struct jv_rank *x = &sort_J->ranks[*(const size_t *)a], *y = &sort_J->ranks[*(const size_t *)b];

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->run != y->run ? (x->run < y->run ? -1 : 1) : (x->pid > y->pid) - (x->pid < y->pid);
}

/* The ranks in rank order: an index array (NULL: out of memory). */
static size_t *rank_order(const struct jv *J)
{
	size_t *v = malloc((J->nranks ? J->nranks : 1) * sizeof(*v));

	if (!v)
		return NULL;
	for (size_t i = 0; i < J->nranks; i++)
		v[i] = i;
	sort_J = J;
	qsort(v, J->nranks, sizeof(*v), cmp_rank);
	return v;
}

static void put_rank_row(const struct jv *J, const struct jv_rank *k, FILE *out)
{
	double pct = k->gpu ? 100.0 * (double)k->coll / (double)k->gpu : 0;

	if (JSON(J)) {
		jsonw_obj_begin(J->json);
		jint(J->json, "rank", k->rank), jint(J->json, "world", k->world);
		jint(J->json, "pid", k->pid), jstr(J->json, "host", k->host);
		jint(J->json, "gpu_ns", k->gpu), jint(J->json, "kernels", k->kernels);
		jint(J->json, "collectives_ns", k->coll), jint(J->json, "sync_wait_ns", k->sync);
		jint(J->json, "rank_wait_ns", k->wait), jint(J->json, "waited_on_ns", k->waited_on);
		jsonw_obj_end(J->json);
		return;
	}
	if (J->o->csv) {
		fprintf(out, "\"rank\",%lld,%lld,%lld,", (long long)k->rank, (long long)k->world,
			(long long)k->pid);
		csv_str(out, k->host);
		fprintf(out, ",%lld,%lld,%lld,%lld,\"\",,,,\n", (long long)k->gpu, (long long)k->kernels,
			(long long)k->coll, (long long)k->sync);
	} else {
		fprintf(out, "  %4lld  %5lld  %14lld  %7lld  %16lld  %8.1f  %14lld  %14lld  %7lld  %s\n",
			(long long)k->rank, (long long)k->world, (long long)k->gpu, (long long)k->kernels,
			(long long)k->coll, pct, (long long)k->sync, (long long)k->wait, (long long)k->pid,
			xp_esc(k->host));
	}
}

static int cmp_spread(const void *a, const void *b)
{
	const struct jv_kernel *x = &sort_J->kern[*(const size_t *)a], *y = &sort_J->kern[*(const size_t *)b];
	int64_t sx = xp_sat_sub(x->max, x->min), sy = xp_sat_sub(y->max, y->min);

	if (x->coll != y->coll)
		return y->coll - x->coll;
	if (sx != sy)
		return sx > sy ? -1 : 1;
	return strcmp(sort_J->names.v[*(const size_t *)a], sort_J->names.v[*(const size_t *)b]);
}

static void put_spread_row(const struct jv *J, size_t name, FILE *out)
{
	const struct jv_kernel *k = &J->kern[name];
	int64_t slow = k->coll ? k->late_rank : k->max_rank;
	long long slow_rank = slow >= 0 ? (long long)J->ranks[slow].rank : -1;
	char brief[512];

	if (JSON(J)) {
		jsonw_obj_begin(J->json);
		jstr(J->json, "name", J->names.v[name]);
		jint(J->json, "spread_ns", xp_sat_sub(k->max, k->min));
		jsonw_key(J->json, "slowest_rank");
		if (slow >= 0)
			jsonw_int(J->json, slow_rank);
		else
			jsonw_null(J->json);
		jsonw_key(J->json, "collective"), jsonw_bool(J->json, k->coll);
		if (k->host) {
			jsonw_key(J->json, "host_side"), jsonw_bool(J->json, 1);
			jsonw_key(J->json, "not_matched"), jsonw_bool(J->json, k->nlo != k->nhi);
		}
		if (k->coll)
			jint(J->json, "waited_ns", k->wait), jint(J->json, "waited_for_slowest_ns", k->late_ns),
			jint(J->json, "waited_within_clock_error_ns", k->unsure);
		jstr(J->json, "slowest_rank_site", k->site >= 0 ? J->names.v[k->site] : "(no launch stack)");
		jsonw_obj_end(J->json);
		return;
	}
	if (J->o->csv) {
		fputs("\"spread\",,,,,,,,,", out);
		csv_str(out, J->names.v[name]);
		fprintf(out, ",%lld,", (long long)xp_sat_sub(k->max, k->min));
		if (slow >= 0)
			fprintf(out, "%lld", slow_rank);
		if (k->coll)
			fprintf(out, ",%lld,%lld\n", (long long)k->wait, (long long)k->unsure);
		else
			fputs(",,\n", out);
		return;
	}
	/* a host-side collective's name is no signature to elide */
	if (k->host)
		snprintf(brief, sizeof(brief), "%s", J->names.v[name]);
	else
		xp_elide_name(J->names.v[name], brief, sizeof(brief));
	if (slow >= 0)
		fprintf(out, "  %11lld  %7lld  %s\n", (long long)xp_sat_sub(k->max, k->min), slow_rank,
			xp_esc(brief));
	else
		fprintf(out, "  %11lld  %7s  %s\n", (long long)xp_sat_sub(k->max, k->min), "?",
			xp_esc(brief));
	if (k->host && k->nlo != k->nhi)
		fprintf(out, "%24snot matched across ranks: rank %lld waited %lld times, rank %lld %lld",
			"", (long long)J->ranks[k->nhi_rank].rank, (long long)k->nhi,
			(long long)J->ranks[k->nlo_rank].rank, (long long)k->nlo);
	else if (k->coll && slow >= 0)
		fprintf(out, "%24sthe others waited %lld ns, %.1f%% of it for rank %lld", "",
			(long long)k->wait, k->wait ? 100.0 * (double)k->late_ns / (double)k->wait : 0,
			slow_rank);
	else if (k->coll)
		fprintf(out, "%24sthe others waited %lld ns", "", (long long)k->wait);
	if (k->coll && k->unsure)
		fprintf(out, " (%lld ns where the ranks started within the clocks' error)",
			(long long)k->unsure);
	if (k->coll)
		fputc('\n', out);
	fprintf(out, "%24s%s\n", "", k->site >= 0 ? xp_esc(J->names.v[k->site]) : "(no launch stack)");
}

/* Kernels every rank ran, collectives first, by spread. */
static int put_spread(const struct jv *J, FILE *out)
{
	size_t *v = malloc((J->nkern ? J->nkern : 1) * sizeof(*v)), n = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < J->nkern; i++)
		if (J->nranks > 1 && J->kern[i].nranks == (int64_t)J->nranks)
			v[n++] = i;
	sort_J = J;
	qsort(v, n, sizeof(*v), cmp_spread);
	if (JSON(J)) {
		jint(J->json, "instances_every_rank_entered", (int64_t)J->complete);
		jsonw_key(J->json, "spread");
		jsonw_arr_begin(J->json);
	} else if (!J->o->csv) {
		fprintf(out, "\n  Spread (ns)  Slowest  Kernel (collectives first; run by every rank) / where"
			" the slowest rank launched it\n"
			"  -----------  -------  ------\n");
		fprintf(out, "  (a collective's Slowest is the rank the others waited for: the last to"
			" start it; %zu instances every rank entered)\n", J->complete);
	}
	for (size_t i = 0; i < n && (!J->o->top || i < J->o->top); i++)
		put_spread_row(J, v[i], out);
	if (JSON(J))
		jsonw_arr_end(J->json);
	free(v);
	return 0;
}

static int cmp_matters(const void *a, const void *b)
{
	const struct jv_rank *x = &sort_J->ranks[*(const size_t *)a], *y = &sort_J->ranks[*(const size_t *)b];

	if (x->waited_on != y->waited_on)
		return x->waited_on > y->waited_on ? -1 : 1;
	if (x->gpu != y->gpu)
		return x->gpu > y->gpu ? -1 : 1;
	return cmp_rank(a, b);
}

/* Text with --top N of more ranks: the N the others waited for most (then
 * the most GPU time) first, in rank order: a job of thousands of ranks
 * shows its stragglers, not its first ranks. */
static void keep_top(const struct jv *J, size_t *order)
{
	sort_J = J;
	qsort(order, J->nranks, sizeof(*order), cmp_matters);
	qsort(order, J->o->top, sizeof(*order), cmp_rank);
}

static int view_rank(const struct jv *J, FILE *out)
{
	size_t *order = rank_order(J);

	if (!order)
		return -ENOMEM;
	if (JSON(J)) {
		jint(J->json, "clock_error_ns", J->clock_err);
		jsonw_key(J->json, "ranks_table");
		jsonw_arr_begin(J->json);
	} else if (J->o->csv)
		fputs("\"Section\",\"Rank\",\"World\",\"PID\",\"Host\",\"GPU Time (ns)\",\"Kernels\","
		      "\"Collectives (ns)\",\"Sync Wait (ns)\",\"Name\",\"Spread (ns)\",\"Slowest Rank\","
		      "\"Waited (ns)\",\"Waited Within Clock Error (ns)\"\n", out);
	else
		fprintf(out, "** Ranks of the Job (from %zu ranks' summaries, clocks aligned on their"
			" collectives, +-%.1f us): GPU time, kernels, collectives, sync and rank waits:\n\n"
			"  Rank  World   GPU Time (ns)  Kernels  Collectives (ns)  Coll (%%)  Sync Wait (ns)"
			"  Rank Wait (ns)      PID  Host\n"
			"  ----  -----   -------------  -------  ----------------  --------  --------------"
			"  --------------      ---  ----\n", J->nranks, (double)J->clock_err / 1e3);
	if (!EVERY(J) && J->o->top && J->o->top < J->nranks)
		keep_top(J, order);
	for (size_t i = 0; i < J->nranks; i++)
		if (EVERY(J) || !J->o->top || i < J->o->top)
			put_rank_row(J, &J->ranks[order[i]], out);
	if (JSON(J))
		jsonw_arr_end(J->json);
	if (!EVERY(J) && J->o->top && J->o->top < J->nranks)
		fprintf(out, "  (%zu more ranks; --top 0 shows all)\n", J->nranks - J->o->top);
	free(order);
	return put_spread(J, out);
}

static int cmp_kernel(const void *a, const void *b)
{
	const struct jv_kernel *x = &sort_J->kern[*(const size_t *)a], *y = &sort_J->kern[*(const size_t *)b];

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return strcmp(sort_J->names.v[*(const size_t *)a], sort_J->names.v[*(const size_t *)b]);
}

/* GPU time per kernel over the job, with the ranks' least and most. */
static int view_kernel(const struct jv *J, FILE *out)
{
	size_t *v = malloc((J->nkern ? J->nkern : 1) * sizeof(*v)), n = 0;
	int64_t total = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < J->nkern; i++)
		if (J->kern[i].n && !J->kern[i].host) {
			v[n++] = i;
			total = xp_sat_add(total, J->kern[i].ns);
		}
	sort_J = J;
	qsort(v, n, sizeof(*v), cmp_kernel);
	if (JSON(J)) {
		jsonw_key(J->json, "kernels");
		jsonw_arr_begin(J->json);
	} else if (J->o->csv)
		fputs("\"Time (%)\",\"Total Time (ns)\",\"Instances\",\"Ranks\",\"Min Rank (ns)\","
		      "\"Max Rank (ns)\",\"Slowest Rank\",\"Name\"\n", out);
	else
		fprintf(out, "** GPU Kernels of the Job (from %zu ranks' summaries): total, and the"
			" ranks' least and most:\n\n Time (%%)  Total Time (ns)  Instances  Ranks"
			"  Min Rank (ns)  Max Rank (ns)  Slowest  Name\n --------  ---------------"
			"  ---------  -----  -------------  -------------  -------  ----\n", J->nranks);
	for (size_t i = 0; i < n && (!J->o->top || i < J->o->top); i++) {
		const struct jv_kernel *k = &J->kern[v[i]];
		double pct = total ? 100.0 * (double)k->ns / (double)total : 0;
		/* a collective's: the rank the others waited for */
		int64_t s = k->coll && k->late_rank >= 0 ? k->late_rank : k->max_rank;
		long long slow = s >= 0 ? (long long)J->ranks[s].rank : -1;
		char brief[512];

		if (JSON(J)) {
			jsonw_obj_begin(J->json);
			jsonw_key(J->json, "time_percent"), jsonw_fixed(J->json, pct, 1);
			jint(J->json, "total_ns", k->ns), jint(J->json, "instances", k->n);
			jint(J->json, "ranks", k->nranks), jint(J->json, "min_rank_ns", k->min);
			jint(J->json, "max_rank_ns", k->max), jint(J->json, "slowest_rank", slow);
			jsonw_key(J->json, "collective"), jsonw_bool(J->json, k->coll);
			jstr(J->json, "name", J->names.v[v[i]]);
			jsonw_obj_end(J->json);
			continue;
		}
		if (J->o->csv) {
			fprintf(out, "%.1f,%lld,%lld,%lld,%lld,%lld,%lld,", pct, (long long)k->ns,
				(long long)k->n, (long long)k->nranks, (long long)k->min, (long long)k->max, slow);
			csv_str(out, J->names.v[v[i]]);
			fputc('\n', out);
			continue;
		}
		xp_elide_name(J->names.v[v[i]], brief, sizeof(brief));
		fprintf(out, " %8.1f  %15lld  %9lld  %5lld  %13lld  %13lld  %7lld  %s\n", pct,
			(long long)k->ns, (long long)k->n, (long long)k->nranks, (long long)k->min,
			(long long)k->max, slow, xp_esc(brief));
	}
	if (JSON(J))
		jsonw_arr_end(J->json);
	free(v);
	return 0;
}

static int cmp_pair(const void *a, const void *b)
{
	const struct jv_pair *x = a, *y = b;

	if (x->ranks != y->ranks)       /* here: the site's (or cause's) total, set by the caller */
		return x->ranks > y->ranks ? -1 : 1;
	if (x->a != y->a)
		return strcmp(sort_J->names.v[x->a], sort_J->names.v[y->a]);
	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return strcmp(sort_J->names.v[x->b], sort_J->names.v[y->b]);
}

/* Pairs sorted by their first id's total, then their own: a copy. */
static struct jv_pair *grouped(const struct jv *J, const struct jv_pair *p, size_t n)
{
	struct jv_pair *v = malloc((n ? n : 1) * sizeof(*v));
	int64_t *sum = calloc(J->names.n ? J->names.n : 1, sizeof(*sum));

	if (!v || !sum) {
		free(v);
		free(sum);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		sum[p[i].a] = xp_sat_add(sum[p[i].a], p[i].ns);
	for (size_t i = 0; i < n; i++) {
		v[i] = p[i];
		v[i].ranks = sum[p[i].a];
	}
	free(sum);
	sort_J = J;
	qsort(v, n, sizeof(*v), cmp_pair);
	return v;
}

/* GPU time by launch site (a Python line, else the program's function),
 * each with its kernels. */
static int view_source(const struct jv *J, FILE *out)
{
	struct jv_pair *v = grouped(J, J->sites, J->nsites);
	unsigned shown = 0;

	if (!v)
		return -ENOMEM;
	if (JSON(J)) {
		jsonw_key(J->json, "sites");
		jsonw_arr_begin(J->json);
	} else if (J->o->csv)
		fputs("\"Site\",\"Site Time (ns)\",\"Kernel\",\"GPU Time (ns)\",\"Instances\"\n", out);
	else
		fprintf(out, "** GPU Time of the Job by Launch Site (from %zu ranks' summaries), and"
			" its kernels:\n\n  Site Time (ns)   GPU Time (ns)  Instances  Site / Kernel\n"
			"  --------------   -------------  ---------  ------\n", J->nranks);
	for (size_t i = 0; i < J->nsites; i++) {
		char brief[512];
		int new_site = !i || v[i].a != v[i - 1].a;

		/* counted whatever --top: json closes the last site shown */
		if (new_site && shown++ >= J->o->top && J->o->top)
			break;
		if (JSON(J)) {
			if (new_site && i)
				jsonw_arr_end(J->json), jsonw_obj_end(J->json);
			if (new_site) {
				jsonw_obj_begin(J->json);
				jstr(J->json, "site", J->names.v[v[i].a]);
				jint(J->json, "site_ns", v[i].ranks);
				jsonw_key(J->json, "kernels");
				jsonw_arr_begin(J->json);
			}
			jsonw_obj_begin(J->json);
			jstr(J->json, "name", J->names.v[v[i].b]);
			jint(J->json, "ns", v[i].ns), jint(J->json, "instances", v[i].n);
			jsonw_obj_end(J->json);
			continue;
		}
		if (J->o->csv) {
			csv_str(out, J->names.v[v[i].a]);
			fprintf(out, ",%lld,", (long long)v[i].ranks);
			csv_str(out, J->names.v[v[i].b]);
			fprintf(out, ",%lld,%lld\n", (long long)v[i].ns, (long long)v[i].n);
			continue;
		}
		if (new_site)
			fprintf(out, "  %14lld  %14s  %9s  %s\n", (long long)v[i].ranks, "", "",
				xp_esc(J->names.v[v[i].a]));
		xp_elide_name(J->names.v[v[i].b], brief, sizeof(brief));
		fprintf(out, "  %14s  %14lld  %9lld    %s\n", "", (long long)v[i].ns, (long long)v[i].n,
			xp_esc(brief));
	}
	if (JSON(J) && J->nsites && shown)
		jsonw_arr_end(J->json), jsonw_obj_end(J->json);
	if (JSON(J))
		jsonw_arr_end(J->json);
	free(v);
	return 0;
}

/* A device's row: its own view's split, its rank's wait in collectives
 * taken out of communication. */
static void put_device(const struct jv *J, const struct jv_dev *d, int64_t wait, FILE *out)
{
	const struct jv_rank *k = &J->ranks[d->rank];
	int64_t comm = xp_sat_sub(d->comm, wait);

	if (JSON(J)) {
		jsonw_obj_begin(J->json);
		jint(J->json, "rank", k->rank), jint(J->json, "device", d->device);
		jint(J->json, "pid", k->pid), jstr(J->json, "host", k->host);
		jint(J->json, "steps", d->steps), jint(J->json, "window_ns", d->window);
		jint(J->json, "compute_ns", d->compute), jint(J->json, "communication_ns", comm);
		jint(J->json, "memory_ns", d->mem), jint(J->json, "rank_wait_ns", wait);
		jint(J->json, "idle_ns", d->idle);
		jsonw_obj_end(J->json);
		return;
	}
	if (J->o->csv) {
		fprintf(out, "\"device\",%lld,%lld,%lld,", (long long)k->rank, (long long)d->device,
			(long long)k->pid);
		csv_str(out, k->host);
		fprintf(out, ",%lld,%lld,%lld,%lld,%lld,%lld,%lld,\"\",\"\",,,\n", (long long)d->steps,
			(long long)d->window, (long long)d->compute, (long long)comm, (long long)d->mem,
			(long long)wait, (long long)d->idle);
		return;
	}
	fprintf(out, "  %5lld  %6lld  %14lld  %7.1f  %7.1f  %7.1f  %7.1f  %7.1f  %s\n",
		(long long)k->rank, (long long)d->device, (long long)d->window,
		100.0 * (double)d->compute / (double)(d->window ? d->window : 1),
		100.0 * (double)comm / (double)(d->window ? d->window : 1),
		100.0 * (double)d->mem / (double)(d->window ? d->window : 1),
		100.0 * (double)wait / (double)(d->window ? d->window : 1),
		100.0 * (double)d->idle / (double)(d->window ? d->window : 1), xp_esc(k->host));
}

static const struct jv_dev *idle_sort_devs;
static const int64_t *idle_sort_wait;

static int cmp_lost(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int64_t x = xp_sat_add(idle_sort_devs[i].idle, idle_sort_wait[i]);
	int64_t y = xp_sat_add(idle_sort_devs[j].idle, idle_sort_wait[j]);

	return x != y ? (x > y ? -1 : 1) : (i > j) - (i < j);
}

/* Each device's wait: its rank's, on its first device with collectives. */
static int64_t *device_waits(const struct jv *J)
{
	int64_t *w = calloc(J->ndevs ? J->ndevs : 1, sizeof(*w));
	unsigned char *done = calloc(J->nranks ? J->nranks : 1, 1);

	for (size_t i = 0; w && done && i < J->ndevs; i++)
		if (!done[J->devs[i].rank] && J->devs[i].comm) {
			const struct jv_rank *k = &J->ranks[J->devs[i].rank];

			w[i] = k->wait < J->devs[i].comm ? k->wait : J->devs[i].comm;
			done[J->devs[i].rank] = 1;
		}
	free(done);
	return w;
}

static void put_causes(const struct jv *J, struct jv_pair *c, size_t n, FILE *out)
{
	int64_t total = 0;

	for (size_t i = 0; i < n; i++)
		total = xp_sat_add(total, c[i].ns);
	if (JSON(J)) {
		jsonw_key(J->json, "causes");
		jsonw_arr_begin(J->json);
	} else if (!J->o->csv)
		fprintf(out, "\n  Across the ranks: what the host did while its GPU was idle, and whom the"
			" ranks waited for in collectives\n    Idle (%%)       Idle (ns)      Gaps  Ranks"
			"  Cause              Where\n    --------  --------------  --------  -----"
			"  -----------------  -----\n");
	for (size_t i = 0; i < n && (EVERY(J) || !J->o->top || i < J->o->top); i++) {
		double share = total ? 100.0 * (double)c[i].ns / (double)total : 0;

		if (JSON(J)) {
			jsonw_obj_begin(J->json);
			jsonw_key(J->json, "idle_percent"), jsonw_fixed(J->json, share, 1);
			jstr(J->json, "cause", J->names.v[c[i].a]), jstr(J->json, "where", J->names.v[c[i].b]);
			jint(J->json, "ns", c[i].ns), jint(J->json, "gaps", c[i].n);
			jint(J->json, "ranks", c[i].ranks);
			jsonw_obj_end(J->json);
		} else if (J->o->csv) {
			fputs("\"cause\",,,,,,,,,,,,", out);
			csv_str(out, J->names.v[c[i].a]);
			fputc(',', out);
			csv_str(out, J->names.v[c[i].b]);
			fprintf(out, ",%lld,%lld,%lld\n", (long long)c[i].ns, (long long)c[i].n,
				(long long)c[i].ranks);
		} else {
			fprintf(out, "    %8.1f  %14lld  %8lld  %5lld  %-17s  %s\n", share,
				(long long)c[i].ns, (long long)c[i].n, (long long)c[i].ranks,
				xp_esc(J->names.v[c[i].a]), xp_esc(J->names.v[c[i].b]));
		}
	}
	if (JSON(J))
		jsonw_arr_end(J->json);
}

static int cmp_ns(const void *a, const void *b)
{
	const struct jv_pair *x = a, *y = b;

	return x->ns != y->ns ? (x->ns > y->ns ? -1 : 1) :
	       strcmp(sort_J->names.v[x->b], sort_J->names.v[y->b]);
}

/* The ranks' own idle causes and the waits for each late rank, by time. */
static int job_causes(struct jv *J, struct jv_pair **out, size_t *n)
{
	struct jv_pair *c = malloc((J->ncauses + J->nranks + 1) * sizeof(*c));
	int64_t cause, where;
	char text[96];

	if (!c || jv_intern(&J->names, "rank", &cause))
		return free(c), -ENOMEM;
	if (J->ncauses)	/* no causes: no array to copy (memcpy from NULL) */
		memcpy(c, J->causes, J->ncauses * sizeof(*c));
	*n = J->ncauses;
	for (size_t r = 0; r < J->nranks; r++) {
		if (J->ranks[r].waited_on <= 0)
			continue;
		snprintf(text, sizeof(text), "rank %lld (the last to start the collective)",
			 (long long)J->ranks[r].rank);
		if (jv_intern(&J->names, text, &where))
			return free(c), -ENOMEM;
		c[(*n)++] = (struct jv_pair){ .a = cause, .b = where, .ns = J->ranks[r].waited_on,
					      .n = (int64_t)J->complete, .ranks = (int64_t)J->nranks - 1 };
	}
	sort_J = J;
	qsort(c, *n, sizeof(*c), cmp_ns);
	*out = c;
	return 0;
}

static int view_idle(struct jv *J, FILE *out)
{
	int64_t *wait = device_waits(J), sum[6] = { 0 };
	size_t *v = malloc((J->ndevs ? J->ndevs : 1) * sizeof(*v)), nc = 0;
	struct jv_pair *c = NULL;

	if (!wait || !v || job_causes(J, &c, &nc)) {
		free(wait);
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < J->ndevs; i++) {
		const struct jv_dev *d = &J->devs[i];

		v[i] = i;
		sum[0] = xp_sat_add(sum[0], d->window), sum[1] = xp_sat_add(sum[1], d->compute);
		sum[2] = xp_sat_add(sum[2], xp_sat_sub(d->comm, wait[i]));
		sum[3] = xp_sat_add(sum[3], d->mem), sum[4] = xp_sat_add(sum[4], wait[i]);
		sum[5] = xp_sat_add(sum[5], d->idle);
	}
	idle_sort_devs = J->devs;
	idle_sort_wait = wait;
	if (!J->o->csv)
		qsort(v, J->ndevs, sizeof(*v), cmp_lost);
	if (JSON(J)) {
		jint(J->json, "window_ns", sum[0]), jint(J->json, "compute_ns", sum[1]);
		jint(J->json, "communication_ns", sum[2]), jint(J->json, "memory_ns", sum[3]);
		jint(J->json, "rank_wait_ns", sum[4]), jint(J->json, "idle_ns", sum[5]);
		jsonw_key(J->json, "devices");
		jsonw_arr_begin(J->json);
	} else if (J->o->csv) {
		fputs("\"Section\",\"Rank\",\"Device\",\"PID\",\"Host\",\"Steps\",\"Window (ns)\","
		      "\"Compute (ns)\",\"Communication (ns)\",\"Memory (ns)\",\"Rank Wait (ns)\","
		      "\"Idle (ns)\",\"Cause\",\"Where\",\"Cause (ns)\",\"Gaps\",\"Ranks\"\n", out);
	} else {
		double w = (double)(sum[0] ? sum[0] : 1);

		fprintf(out, "** GPU Time of the Job's %zu Devices (from %zu ranks' summaries), and What"
			" Their Hosts Did While Idle:\n\n  All devices, %lld ns: Compute %.1f%%"
			"  Communication %.1f%%  Memory %.1f%%  Waiting for another rank %.1f%%"
			"  Idle %.1f%%\n", J->ndevs, J->nranks, (long long)sum[0], 100 * sum[1] / w,
			100 * sum[2] / w, 100 * sum[3] / w, 100 * sum[4] / w, 100 * sum[5] / w);
		fprintf(out, "\n  The devices that lost most (idle + waiting for another rank):\n"
			"   Rank  Device      Window (ns)  Comp(%%)  Comm(%%)   Mem(%%)  Wait(%%)"
			"  Idle(%%)  Host\n   ----  ------      -----------  -------  -------  -------"
			"  -------  -------  ----\n");
	}
	for (size_t i = 0; i < J->ndevs && (EVERY(J) || !J->o->top || i < J->o->top); i++)
		put_device(J, &J->devs[v[i]], wait[v[i]], out);
	if (JSON(J))
		jsonw_arr_end(J->json);
	put_causes(J, c, nc, out);
	free(c);
	free(wait);
	free(v);
	return 0;
}

int jv_print(struct jv *J, FILE *out)
{
	static const char *const names[] = { [XP_JOB_RANK] = "rank", [XP_JOB_IDLE] = "idle",
					      [XP_JOB_KERNEL] = "kernel", [XP_JOB_SOURCE] = "source" };
	struct jsonw j;
	int err;

	if (J->o->format == XP_JOB_JSON && J->o->by != XP_JOB_WAIT) {
		jsonw_init(&j, out);
		J->json = &j;
		jsonw_obj_begin(&j);
		jstr(&j, "job", names[J->o->by]);
		jsonw_key(&j, "ranks");
		jsonw_uint(&j, J->nranks);
	}
	switch (J->o->by) {
	case XP_JOB_RANK: err = view_rank(J, out); break;
	case XP_JOB_KERNEL: err = view_kernel(J, out); break;
	case XP_JOB_SOURCE: err = view_source(J, out); break;
	case XP_JOB_WAIT: err = jv_wait_print(J, out); break;
	default: err = view_idle(J, out); break;
	}
	if (J->json) {
		jsonw_obj_end(&j);
		fputc('\n', out);
		J->json = NULL;
		if (!err && (err = jsonw_error(&j)))
			return jv_fail(J, err, "cannot write the json");
	}
	return err ? jv_fail(J, err, "out of memory") : 0;
}
