/* view_cpu.c - `xpcorr report --by cpu`: the CPU samples by function and by
 * Python line, self and total, as `perf report --no-children` and
 * `--children` and `py-spy top` show them (cpuprof.h counts them). The
 * report a run without GPU work gets by default (cmd_report.c).
 *
 *   xpcorr report --by cpu --top 10 run/
 *    Self (%)  Self (samples)  Total (%)  Total (samples)  Function
 *        74.3             715       74.6              718  hot_a (hotspots)
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export/analysis/cpuprof.h"
#include "export/report/report_priv.h"
#include "src/gtid.h"

void xp_rep_cpu_filter(const struct xp_report_opts *o, char *buf, size_t len)
{
	int n = snprintf(buf, len, "1");

	/* in a merged job, --pid 4242 is that pid on every host, as elsewhere */
	if (o->pid)
		n += snprintf(buf + n, len - (size_t)n, " AND (x.pid = :pid OR "
			      XP_SQL_PID_LOCAL("x.pid") " = :pid)");
	if (o->since)
		n += snprintf(buf + n, len - (size_t)n, " AND x.ts >= :since");
	if (o->until)
		snprintf(buf + n, len - (size_t)n, " AND x.ts < :until");
}

int xp_rep_cpu_collect(struct rep *R, enum xp_cpu_self self, struct xp_cpuprof *p)
{
	char where[256];
	struct xp_cpuprof_opts co = { .self = self, .where = where, .bind = xp_rep_bind_filter,
				      .ctx = R };
	int rc;

	xp_rep_cpu_filter(R->o, where, sizeof(where));
	if ((rc = xp_rep_frame_stmt(R)) < 0)
		return rc;
	co.walk = R->walk;
	return xp_cpuprof_collect(R->db, &co, p);
}

static double pct(const struct xp_cpuprof *p, uint64_t k)
{
	return p->samples ? 100.0 * (double)k / (double)p->samples : 0;
}

/* Samples, processes, threads and frequency under the table (json: keys). */
int xp_rep_cpu_footer(struct rep *R, const struct xp_cpuprof *p)
{
	char where[256], sql[512];
	int64_t procs = 0, threads = 0, hz = 0;
	sqlite3_stmt *s;

	xp_rep_cpu_filter(R->o, where, sizeof(where));
	snprintf(sql, sizeof(sql), "SELECT count(DISTINCT x.pid), count(DISTINCT x.pid * 4294967296"
		 " + x.tid), (SELECT CAST(value AS INTEGER) FROM META_DATA_EXPORT WHERE name ="
		 " 'meta.sample_frequency_hz') FROM xp_samples x WHERE %s", where);
	if (xp_rep_prepare(R, sql, &s) < 0)
		return -EIO;
	if (sqlite3_step(s) == SQLITE_ROW) {
		procs = sqlite3_column_int64(s, 0);
		threads = sqlite3_column_int64(s, 1);
		hz = sqlite3_column_int64(s, 2);
	}
	sqlite3_finalize(s);
	if (R->o->format == XP_FMT_JSON) {
		struct jsonw *w = &R->json;

		jsonw_key(w, "cpu");
		jsonw_obj_begin(w);
		jsonw_key(w, "samples"); jsonw_uint(w, p->samples);
		jsonw_key(w, "python_samples"); jsonw_uint(w, p->python);
		jsonw_key(w, "no_frame_samples"); jsonw_uint(w, p->no_frame);
		jsonw_key(w, "processes"); jsonw_int(w, procs);
		jsonw_key(w, "threads"); jsonw_int(w, threads);
		jsonw_key(w, "frequency_hz"); jsonw_int(w, hz);
		jsonw_obj_end(w);
		return 0;
	}
	xp_rep_foot_line(R, "%s", "");
	xp_rep_foot_line(R, "CPU samples: %llu in %lld process%s, %lld thread%s, at %lld Hz",
			 (unsigned long long)p->samples, (long long)procs, procs == 1 ? "" : "es",
			 (long long)threads, threads == 1 ? "" : "s", (long long)hz);
	if (p->python)
		xp_rep_foot_line(R, "  with a Python frame: %llu (%.1f%%)",
				 (unsigned long long)p->python, pct(p, p->python));
	if (p->no_frame)
		xp_rep_foot_line(R, "  with no stack: %llu (%.1f%%)", (unsigned long long)p->no_frame,
				 pct(p, p->no_frame));
	return 0;
}

static void text_head(struct rep *R, const char *title, const char *what)
{
	char line[256];

	snprintf(line, sizeof(line), "** %s:", title);
	xp_rep_put_row(R, line);
	xp_rep_put_row(R, "");
	snprintf(line, sizeof(line), " Self (%%)  Self (samples)  Total (%%)  Total (samples)  %s",
		 what);
	xp_rep_put_row(R, line);
	snprintf(line, sizeof(line), " --------  --------------  ---------  ---------------  %.*s",
		 (int)strlen(what), "------------");
	xp_rep_put_row(R, line);
}

static void row_out(struct rep *R, const struct xp_cpuprof *p, const struct xp_cpu_row *r)
{
	int text = R->o->format == XP_FMT_TEXT;
	char name[2048], line[2200];

	xp_cpu_row_name(r, text && !R->o->full_names ? XP_CPU_NAME_SHORT : 0, name, sizeof(name));
	if (text) {
		snprintf(line, sizeof(line), " %8.1f  %14llu  %9.1f  %15llu  %s", pct(p, r->self),
			 (unsigned long long)r->self, pct(p, r->total), (unsigned long long)r->total,
			 name);
		xp_rep_put_row(R, line);
	} else if (R->o->format == XP_FMT_CSV) {
		fprintf(R->out, "\"%s\",%llu,%.1f,%llu,%.1f,", r->is_line ? "line" : "function",
			(unsigned long long)r->self, pct(p, r->self), (unsigned long long)r->total,
			pct(p, r->total));
		xp_rep_csv_str(R->out, name);
		fputc(',', R->out);
		xp_rep_csv_str(R->out, r->name);
		fputc(',', R->out);
		xp_rep_csv_str(R->out, r->file);
		if (r->is_line && r->line >= 0)
			fprintf(R->out, ",%d\n", r->line);
		else
			fputs(",\n", R->out);
	} else {
		static const char *const kinds[] = { "python", "native", "kernel", "other" };
		struct jsonw *w = &R->json;

		jsonw_obj_begin(w);
		jsonw_key(w, "name"); jsonw_str(w, name);
		jsonw_key(w, "function"); jsonw_str(w, r->name);
		jsonw_key(w, "file"); jsonw_str(w, r->file);
		if (r->is_line) {
			jsonw_key(w, "line");
			if (r->line >= 0)
				jsonw_int(w, r->line);
			else
				jsonw_null(w);
		}
		jsonw_key(w, "kind"); jsonw_str(w, kinds[r->kind]);
		jsonw_key(w, "self_samples"); jsonw_uint(w, r->self);
		jsonw_key(w, "self_pct"); jsonw_fixed(w, pct(p, r->self), 1);
		jsonw_key(w, "total_samples"); jsonw_uint(w, r->total);
		jsonw_key(w, "total_pct"); jsonw_fixed(w, pct(p, r->total), 1);
		jsonw_obj_end(w);
	}
}

/* The functions' (lines 0) or Python lines' (1) table; *rows: rows found
 * (the first table of the report when *rows is 0). */
static int table(struct rep *R, const struct xp_cpuprof *p, int lines, size_t *rows)
{
	const struct xp_report_opts *o = R->o;
	size_t *order, n, shown;

	if (xp_cpuprof_order(p, lines, &order, &n) < 0)
		return -ENOMEM;
	shown = o->top && o->top < n ? o->top : n;
	if (o->format == XP_FMT_TEXT) {
		if (*rows)
			xp_rep_put_row(R, "");
		text_head(R, lines ? "CPU Samples by Python Line" : xp_rep_title(o->by),
			  lines ? "Line" : "Function");
	} else if (o->format == XP_FMT_JSON) {
		jsonw_key(&R->json, lines ? "cpu_lines" : "cpu_functions");
		jsonw_arr_begin(&R->json);
	}
	for (size_t i = 0; i < shown; i++)
		row_out(R, p, &p->rows[order[i]]);
	if (o->format == XP_FMT_JSON)
		jsonw_arr_end(&R->json);
	else if (o->format == XP_FMT_TEXT && shown < n)
		fprintf(R->out, " (%zu more %s; --top 0 shows all)\n", n - shown,
			lines ? "lines" : "functions");
	*rows += n;
	free(order);
	return 0;
}

int xp_view_cpu(struct rep *R, size_t *rows)
{
	struct xp_cpuprof p = { 0 };
	int rc;

	*rows = 0;
	if ((rc = xp_rep_cpu_collect(R, XP_CPU_SELF_LEAF, &p)) < 0)
		goto out;
	if (R->o->format == XP_FMT_JSON) {
		jsonw_key(&R->json, "total_samples");
		jsonw_uint(&R->json, p.samples);
	} else if (R->o->format == XP_FMT_CSV) {
		fputs("\"Level\",\"Self (samples)\",\"Self (%)\",\"Total (samples)\",\"Total (%)\","
		      "\"Name\",\"Function\",\"File\",\"Line\"\n", R->out);
	}
	/* a program that is mostly Python: its lines first (py-spy top's
	 * view), the native functions under them after */
	if (p.lines && p.python * 2 > p.samples)
		rc = table(R, &p, 1, rows) < 0 || table(R, &p, 0, rows) < 0 ? -ENOMEM : 0;
	else
		rc = table(R, &p, 0, rows) < 0 || (p.lines && table(R, &p, 1, rows) < 0) ? -ENOMEM : 0;
	if (rc < 0)
		goto out;
	rc = xp_rep_cpu_footer(R, &p);
out:
	xp_cpuprof_free(&p);
	return rc;
}
