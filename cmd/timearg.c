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
	if (errno || end == s + 1)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit)) {
			/* written as "not in range": NaN compares false both ways,
			 * and NaN or more than 2^63 ns as an integer is undefined */
			if (!(v >= 0 && v * units[i].scale <= XP_OFFSET_MAX_NS))
				return -EINVAL;
			*ns = (int64_t)(v * units[i].scale + 0.5);
			return 0;
		}
	return -EINVAL;
}

int xp_cmd_offset_time(int64_t t0, int64_t off, int64_t *t)
{
	/* a received database's start time is any integer */
	return __builtin_add_overflow(t0, off, t) ? -ERANGE : 0;
}
