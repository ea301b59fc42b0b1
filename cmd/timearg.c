/* timearg.c - --since/--until offsets from the run's start; see timearg.h. */
#include "cmd/timearg.h"

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
