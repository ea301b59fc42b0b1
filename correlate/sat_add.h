/* sat_add.h - sums of GPU durations that cannot overflow: a corrupt record
 * (fuzzed, or a torn write) may hold a duration near 2^63, and adding it to
 * a total must not be undefined behaviour. The total sticks at the limit.
 *   total = xc_sat_add(total, dur);
 */
#ifndef XC_SAT_ADD_H
#define XC_SAT_ADD_H

#include <stdint.h>

static inline int64_t xc_sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

#endif
