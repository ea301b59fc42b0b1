/* diff_cpu.c - one run's CPU samples by function for `xpcorr diff` (diff.h):
 * self and total per function, self per Python line, counted as `report --by cpu`
 * counts them (cpuprof.h), keyed by the function's name and module, a
 * program's own functions by their name alone, so that `prog` and its copy
 * `prog2` compare row by row.
 *
 *   xp_diff_cpu_collect(db, 0, self, total);    // the base run's side
 */
#include "export/diff/diff.h"

#include <errno.h>
#include <string.h>

#include "export/analysis/cpuprof.h"
#include "export/render/wtab.h"

int xp_diff_cpu_collect(sqlite3 *db, int side, struct xp_wtab *self, struct xp_wtab *total,
			struct xp_wtab *lines)
{
	struct xp_cpuprof_opts o = { .self = XP_CPU_SELF_LEAF };
	struct xp_cpuprof p = { 0 };
	char name[2048];
	int rc = xp_cpuprof_collect(db, &o, &p);

	for (size_t i = 0; rc == 0 && i < p.n; i++) {
		const struct xp_cpu_row *r = &p.rows[i];

		xp_cpu_row_name(r, XP_CPU_NAME_NO_EXE, name, sizeof(name));
		if (r->is_line) {       /* a table of their own: a sample is in a function too */
			if (r->self)
				rc = xp_wtab_add(lines, side, name, strlen(name), r->self, r->self);
			continue;
		}
		if (r->self)
			rc = xp_wtab_add(self, side, name, strlen(name), r->self, r->self);
		if (rc == 0 && r->total)
			rc = xp_wtab_add(total, side, name, strlen(name), r->total, r->total);
	}
	xp_cpuprof_free(&p);
	return rc;
}
