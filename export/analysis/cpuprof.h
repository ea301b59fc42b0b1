/* cpuprof.h - CPU samples by function and Python line, self and total, as
 * `perf report --no-children/--children` and `py-spy top` count them: self
 * is the samples taken in the function (the line) itself, total those with
 * it anywhere on the stack (once per stack: recursion does not count
 * twice). One engine for `report --by cpu`, `report --by source` on CPU
 * samples and `diff` of CPU-only runs; one naming for them all: a Python
 * line "file.py:LINE qualname", a Python function "qualname (file.py)", a
 * native one "function (module)", the kernel's "function (kernel)".
 *
 *   struct xp_cpuprof p = { 0 };
 *   struct xp_cpuprof_opts o = { .self = XP_CPU_SELF_LEAF };
 *   if (xp_cpuprof_collect(db, &o, &p) == 0)
 *           for (size_t i = 0; i < p.n; i++)
 *                   printf("%llu %s\n", (unsigned long long)p.rows[i].self,
 *                          xp_cpu_row_name(&p.rows[i], 0, buf, sizeof(buf)));
 *   xp_cpuprof_free(&p);
 */
#ifndef XP_CPUPROF_H
#define XP_CPUPROF_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "db/pypath.h"
#include "db/stackwalk.h"

struct xp_strtab;

enum xp_cpu_self {
	XP_CPU_SELF_LEAF,           /* the leaf frame; the interpreter's own frames under
				     * a Python line give theirs to the line (py-spy, perf) */
	XP_CPU_SELF_PYTHON,         /* the innermost Python line (py-spy without --native);
				     * native frames count only in stacks with no Python */
};

enum xp_cpu_kind {
	XP_CPU_PYTHON,              /* a Python function or line */
	XP_CPU_NATIVE,              /* an ELF symbol, with its module */
	XP_CPU_KERNEL,              /* a kernel symbol */
	XP_CPU_RAW,                 /* named as stored: module+offset, py:: perf-map entries */
};

struct xp_cpu_row {
	char *file;                 /* Python: the file as listed (pypath.h); native: the
				     * module's base name; else "" */
	char *path;                 /* Python: the file as recorded, named in the row's
				     * name as frames name it (pyframe.h); else as file */
	char *name;                 /* the qualified name, or the symbol as stored */
	int line;                   /* a line row: its line (-1: not known); else -1 */
	int is_line;                /* a Python line, not a function */
	enum xp_cpu_kind kind;
	int exe;                    /* native: the module is a program, not a shared object */
	size_t func;                /* a line row: its function's row */
	uint64_t self, total;       /* samples */
	uint64_t mark;              /* the last stack counted in total */
};

struct xp_cpuprof {
	struct xp_cpu_row *rows;    /* functions and lines, in the order first seen */
	size_t n, cap;
	uint64_t samples;           /* in the selection */
	uint64_t python;            /* of which with a Python frame */
	uint64_t no_frame;          /* of which with no frame to name */
	int lines;                  /* any Python line row */
	/* private */
	struct xp_strtab *ids;
	struct xp_pyroot root;
};

struct xp_cpuprof_opts {
	enum xp_cpu_self self;
	const char *where;          /* SQL over xp_samples x ("x.pid = :pid"), or NULL */
	void (*bind)(void *ctx, sqlite3_stmt *s);   /* binds where's parameters */
	void *ctx;
	struct xp_stackwalk *walk;  /* a walker of db to use, or NULL: one of its own */
};

/* 0, -EIO (SQLite: see sqlite3_errmsg) or -ENOMEM; p is freed by
 * xp_cpuprof_free either way. */
int xp_cpuprof_collect(sqlite3 *db, const struct xp_cpuprof_opts *o, struct xp_cpuprof *p);
void xp_cpuprof_free(struct xp_cpuprof *p);

#define XP_CPU_NAME_SHORT 1         /* C++ names elided (elidename.h): text output */
#define XP_CPU_NAME_NO_EXE 2        /* a program's own functions without its name:
				     * `prog` and its copy `prog2` compare */
/* The row's name (see above) into buf; returns buf. */
const char *xp_cpu_row_name(const struct xp_cpu_row *r, int flags, char *buf, size_t len);
/* Row indices sorted by self, then total, then name: lines (1) or functions (0). */
int xp_cpuprof_order(const struct xp_cpuprof *p, int lines, size_t **order, size_t *n);

#endif
