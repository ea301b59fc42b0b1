/* timearg.c - --since/--until offsets from the run's start; see timearg.h. */
#include "timearg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int xp_cmd_parse_offset(const char *s, int64_t *ns)
{
	static const struct { const char *unit; double scale; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1 },
	};
	char *end;
	double v;

	if (s[0] != '+')
		return -EINVAL;
	errno = 0;
	v = strtod(s + 1, &end);
	if (errno || end == s + 1 || v < 0 || v > 1e6)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit)) {
			*ns = (int64_t)(v * units[i].scale + 0.5);
			return 0;
		}
	return -EINVAL;
}

int64_t xp_cmd_run_start_ns(sqlite3 *db)
{
	sqlite3_stmt *st;
	int64_t t = -1;

	if (sqlite3_prepare_v2(db, "SELECT CAST(value AS INTEGER) FROM META_DATA_EXPORT"
			       " WHERE name = 'meta.start_monotonic_ns'", -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		t = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return t;
}
