/* satmath.h - arithmetic on times and durations read from a database or a
 * run: a crafted or torn record may hold 0 and 2^63-1 (a "duration" of 292
 * years), and adding it to a total or subtracting two such times must not
 * be undefined behaviour. Results stick at the int64 limits.
 *   total = xp_sat_add(total, end - start);   // NO: the difference first
 *   total = xp_sat_add(total, xp_sat_sub(end, start));
 */
#ifndef XP_SATMATH_H
#define XP_SATMATH_H

#include <stdint.h>

static inline int64_t xp_sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static inline int64_t xp_sat_sub(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static inline int64_t xp_sat_mul(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_mul_overflow(a, b, &r))
		return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
	return r;
}

#endif
