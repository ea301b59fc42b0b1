/* report_priv.h - what report.c shares with the views that live in their
 * own files (report_source.c): the report's state, the row filter, output
 * helpers and the footer. Not for users of the report (report.h).
 *
 *   xp_rep_filter(R->o, "g.gp", "g.start", f, sizeof(f));   // "1 AND ... = :pid"
 *   xp_rep_prepare(R, sql, &s);                             // binds :pid :since :until
 *   xp_rep_put_row(R, line);                                // cut to --width
 */
#ifndef XP_REPORT_PRIV_H
#define XP_REPORT_PRIV_H

#include <stdint.h>
#include <stdio.h>
#include <sqlite3.h>

#include "export/analysis/cpuprof.h"
#include "export/render/jsonw.h"
#include "export/report/report.h"
#include "db/stackwalk.h"

struct group {
	char *name;
	int64_t key;
	uint64_t n;
	int64_t total, min, max;
	double avg, med, sd;
};

struct rep {
	sqlite3 *db;
	const struct xp_report_opts *o;
	FILE *out;
	struct jsonw json;
	struct group *g;
	size_t n, cap;
	int64_t all_total;
	struct xp_stackwalk *walk;  /* launch stacks, from the leaf */
	int groups;                 /* read the correlation's precomputed groups */
};

/* Whether --pid, --since or --until leave rows out. */
int xp_rep_filtered(const struct xp_report_opts *o);
/* Text reports name C++ functions and kernels short (elidename.h); csv
 * and json keep the names whole for scripts. */
int xp_rep_short_names(const struct xp_report_opts *o);
/* The WHERE text for --pid/--since/--until on the given columns. */
void xp_rep_filter(const struct xp_report_opts *o, const char *gp, const char *start, char *buf,
		   size_t len);
/* sql prepared with :pid, :since and :until bound. 0 or -EIO. */
int xp_rep_prepare(struct rep *R, const char *sql, sqlite3_stmt **s);
/* Bytes of line that fit in width columns (UTF-8: a character is a column). */
size_t xp_rep_fit_bytes(const char *line, unsigned width, int *cut);
/* line fitted in width columns by eliding inside its last field (its
 * leading namespaces, else its middle), into out: 1, or 0 where it has no
 * such field (fitline.c). */
int xp_rep_fit_last_field(const char *line, unsigned width, char *out, size_t len);
/* One text line, cut to --width with an ellipsis. */
/* line, escaped, cut to width columns with an ellipsis (0: whole), to out. */
void xp_rep_put_line(FILE *out, const char *line, unsigned width);
void xp_rep_put_row(struct rep *R, const char *line);
/* A quoted csv field (invalid UTF-8 as U+FFFD). */
void xp_rep_csv_str(FILE *out, const char *s);
/* The title line's text of a view. */
const char *xp_rep_title(enum xp_report_by by);
/* Text: the view's title line, "** Title:". */
void xp_rep_put_title(struct rep *R);

/* One footer line (text and csv's notes; nothing in json), wrapped to --width. */
void xp_rep_foot_line(struct rep *R, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A table of json-only columns c (the footer's objects) in R's format and
 * writer, its rows under key (NULL: a keyed row or fields alone). */
struct xp_col;
struct xp_table xp_rep_json_table(struct rep *R, const struct xp_col *c, size_t n, const char *key);
/* The footer's last lines (report_cost.c): what recording cost the program
 * (the library's own time per launch call) and what launch stacks were
 * taken from an earlier copy. 0 or -EIO. */
int xp_rep_recording_cost(struct rep *R);

/* Opens R->walk once. 0, -EIO or -ENOMEM. */
int xp_rep_frame_stmt(struct rep *R);
/* A launch stack in a line, as the report shows it (report_stack.c):
 * "(no stack)" for id < 0. 0 or -EIO. */
int xp_rep_format_stack(struct rep *R, int64_t id, char *buf, size_t len);
/* A kernel's launching stacks, one writer per format (a table's call
 * column): text, lines indented by indent_text after its row, those that
 * read the same merged; csv, items inside the open quoted field; json,
 * the array. 0, -EIO or -ENOMEM. */
int xp_rep_kernel_stacks_text(struct rep *R, const struct group *g, int indent_text);
int xp_rep_kernel_stacks_csv(struct rep *R, const struct group *g);
int xp_rep_kernel_stacks_json(struct rep *R, const struct group *g);

/* The nsys-style views (view_groups.c): the view's (name, key, duration)
 * query, -ENOENT for a view with a file of its own; its groups' name in
 * xp_report_groups or NULL; its first shown groups as a table. */
int xp_rep_group_query(struct rep *R, char *sql, size_t len);
const char *xp_rep_groups_view(const struct xp_report_opts *o);
int xp_rep_group_table(struct rep *R, size_t shown);
/* The footer (report_footer.c): coverage, Python reach, rejected evidence,
 * losses, clock skew, the no-GPU warning; cpu: a CPU-sample view's. */
int xp_rep_footer(struct rep *R, int cpu);

/* --by source (report_source.c): its table in R's format; rows: the
 * functions found (and the no-Python-line row). 0 or a negative errno. */
int xp_report_source(struct rep *R, size_t *rows);
/* --by graph (report_graph.c): one row per graph exec replayed. */
int xp_report_graph(struct rep *R, size_t *rows);
/* --by rank (report_rank.c): the ranks side by side, then the spread. */
int xp_report_rank(struct rep *R, size_t *rows);
/* --by op (view_op.c), idle, launch, overlap (view_*.c): views.h's table. */
int xp_view_op(struct rep *R, size_t *rows);
int xp_view_idle(struct rep *R, size_t *rows);
int xp_view_launch(struct rep *R, size_t *rows);
int xp_view_overlap(struct rep *R, size_t *rows);
/* --by wait (view_wait.c): every collective wait charged to its late rank's cause. */
int xp_view_wait(struct rep *R, size_t *rows);
/* --by stream (view_stream.c): GPU time per CUDA stream. */
int xp_view_stream(struct rep *R, size_t *rows);
/* --by cpu (view_cpu.c): CPU samples by function and Python line. */
int xp_view_cpu(struct rep *R, size_t *rows);
/* --by source on CPU samples (source_cpu.c); its title. */
int xp_report_source_cpu(struct rep *R, size_t *rows);
extern const char xp_source_cpu_title[];
/* The CPU views' shared parts (view_cpu.c): the WHERE text of --pid/--since/
 * --until over xp_samples x; the samples counted (cpuprof.h) with R's
 * walker; the footer (samples, processes, threads, frequency). */
void xp_rep_cpu_filter(const struct xp_report_opts *o, char *buf, size_t len);
int xp_rep_cpu_collect(struct rep *R, enum xp_cpu_self self, struct xp_cpuprof *p);
int xp_rep_cpu_footer(struct rep *R, const struct xp_cpuprof *p);
/* Binds :pid, :since and :until of an xp_rep_filter text (R: a struct rep). */
void xp_rep_bind_filter(void *R, sqlite3_stmt *s);

#endif
