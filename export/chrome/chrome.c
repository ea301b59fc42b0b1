/* chrome.c - puts the Chrome trace together (see chrome.h): the top-level
 * object in the order Kineto writes it, the shared event header and query
 * filter; output gathered in a 64 KiB buffer (jsonw_buffer). */
#include "export/chrome/chrome_priv.h"
#include "db/db_schema.h"
#include "db/pyframe.h"
#include "src/satmath.h"
#include "src/writeerr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void xp_chrome_event_begin(struct xp_chrome *c, const char *ph, const char *cat, const char *name,
			      int64_t pid, int64_t tid, int64_t ts_ns)
{
	struct jsonw *w = &c->w;

	jsonw_newline(w);
	jsonw_obj_begin(w);
	/* ph and cat are this writer's constants: no escaping to look for */
	jsonw_key_lit(w, "ph"); jsonw_str_plain(w, ph);
	if (cat) {
		jsonw_key_lit(w, "cat"); jsonw_str_plain(w, cat);
	}
	jsonw_key_lit(w, "name"); jsonw_str(w, name);
	jsonw_key_lit(w, "pid"); jsonw_int(w, pid);
	jsonw_key_lit(w, "tid"); jsonw_int(w, tid);
	/* metadata has no time of its own: 0, not the base before the run */
	jsonw_key_lit(w, "ts"); jsonw_ns_as_us(w, ph[0] == 'M' && !ph[1] ? 0 : xp_sat_sub(ts_ns, c->o->base));
	c->st.events++;
	c->st.metadata += ph[0] == 'M' && !ph[1];
}

int xp_chrome_site_arg(struct xp_chrome *c, int64_t stack_id)
{
	const char *site = xp_sites_get(c->sites, stack_id);

	if (!site)
		return -ENOMEM;
	jsonw_key_lit(&c->w, "launch_site");
	jsonw_str(&c->w, site);
	return 0;
}

int xp_chrome_in_window(const struct xp_chrome *c, int64_t ts)
{
	return ts >= c->o->since && (!c->o->until || ts < c->o->until);
}

int xp_chrome_prepare(struct xp_chrome *c, sqlite3_stmt **st, const char *select_from,
			 const char *where, const char *time_col, const char *pid_expr,
			 const char *order)
{
	char *sql;
	int i, rc;

	if (asprintf(&sql, "%s WHERE (%s)%s%s%s%s%s%s%s%s ORDER BY %s", select_from,
		     where ? where : "1",
		     time_col && c->o->since ? " AND " : "", time_col && c->o->since ? time_col : "",
		     time_col && c->o->since ? " >= :since" : "",
		     time_col && c->o->until ? " AND " : "", time_col && c->o->until ? time_col : "",
		     time_col && c->o->until ? " < :until" : "",
		     pid_expr && c->o->pid >= 0 ? " AND :pid = " : "",
		     pid_expr && c->o->pid >= 0 ? pid_expr : "", order) < 0)
		return -ENOMEM;
	rc = sqlite3_prepare_v2(c->db, sql, -1, st, NULL);
	free(sql);
	if (rc != SQLITE_OK)
		return -EIO;
	if ((i = sqlite3_bind_parameter_index(*st, ":since")))
		sqlite3_bind_int64(*st, i, c->o->since);
	if ((i = sqlite3_bind_parameter_index(*st, ":until")))
		sqlite3_bind_int64(*st, i, c->o->until);
	if ((i = sqlite3_bind_parameter_index(*st, ":pid")))
		sqlite3_bind_int64(*st, i, c->o->pid);
	return 0;
}

static int write_trace(struct xp_chrome *c)
{
	struct jsonw *w = &c->w;
	int err;

	jsonw_obj_begin(w);
	if ((err = xp_chrome_stacks_init(c)))
		return err;
	jsonw_key_lit(w, "schemaVersion"); jsonw_int(w, 1);
	/* Kineto's key: "ts" counts from here (here CLOCK_MONOTONIC ns, the run's start) */
	jsonw_key_lit(w, "baseTimeNanoseconds"); jsonw_int(w, c->o->base);
	jsonw_key_lit(w, "deviceProperties");
	if ((err = xp_chrome_device_properties(c)))
		return err;
	jsonw_key_lit(w, "traceEvents");
	jsonw_arr_begin(w);
	if ((err = xp_chrome_thread_names(c)) || (err = xp_chrome_cpu_events(c)) ||
	    (err = xp_chrome_gpu_events(c)) || (err = xp_chrome_graph_replays(c)) ||
	    (err = xp_chrome_idle_events(c)) || (err = xp_chrome_fwdbwd(c)))
		return err;
	jsonw_arr_end(w);
	jsonw_newline(w);
	/* what chrome://tracing shows as the stack of a sample or a launch ("sf") */
	jsonw_key_lit(w, "stackFrames");
	if ((err = xp_chrome_stack_frames(c)))
		return err;
	jsonw_newline(w);
	jsonw_key_lit(w, "displayTimeUnit"); jsonw_str_lit(w, "ms");
	jsonw_key_lit(w, "traceName"); jsonw_str(w, "xpcorr " XP_VERSION);
	jsonw_obj_end(w);
	jsonw_flush(w);
	putc('\n', w->out);
	return jsonw_error(w);
}

int xp_chrome_write(sqlite3 *db, const struct xp_chrome_opts *o, FILE *out,
		    struct xp_chrome_stats *stats)
{
	struct xp_chrome c = { .db = db, .o = o, .first_gpu_pid = -1, .next_flow_id = 1ull << 32 };
	char *buf = malloc(1 << 16), leaf_sql[300];
	int err;

	if (!buf)
		return -ENOMEM;
	c.job = xp_db_job_runs(db) > 1;
	jsonw_init(&c.w, out);
	jsonw_buffer(&c.w, buf, 1 << 16);
	snprintf(leaf_sql, sizeof(leaf_sql), "SELECT xp_frame_name(f.kind, v.value, m.value, %s)"
		 " FROM xp_stacks n JOIN xp_frames f ON f.id = n.frame JOIN StringIds v ON v.id = f.symbol"
		 " LEFT JOIN StringIds m ON m.id = f.module WHERE n.id = ?", xp_sql_frame_line(db));
	if (xp_frame_name_sql(db) != SQLITE_OK)
		err = -ENOMEM;
	else if (!(err = xp_chrome_names_new(db, "SELECT value FROM StringIds WHERE id = ?", "?", &c.strings)) &&
	    !(err = xp_chrome_names_new(db, leaf_sql, "[no stack]", &c.leaves)) &&
	    !(err = xp_sites_new(db, &c.sites)) && !(err = xp_sites_new(db, &c.capture_sites))) {
		xp_sites_prefer_own(c.capture_sites);
		err = write_trace(&c);
	}
	jsonw_flush(&c.w);
	if (fflush(out) && !c.w.error)
		c.w.error = xp_write_errno();
	if (c.w.error)          /* the write's error (jsonw.h), before the database's */
		err = c.w.error;
	xp_chrome_gpu_fini(&c);
	xp_chrome_stacks_free(&c);
	xp_chrome_names_free(c.strings);
	xp_chrome_names_free(c.leaves);
	xp_sites_free(c.sites);
	xp_sites_free(c.capture_sites);
	free(buf);
	c.st.bytes = c.w.bytes + 1;           /* and the final newline */
	if (stats)
		*stats = c.st;
	return err;
}
