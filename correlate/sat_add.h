/* sat_add.h - sums of GPU durations that cannot overflow (src/satmath.h):
 * a corrupt record may hold a duration near 2^63, and adding it to a total
 * must not be undefined behaviour. The total sticks at the limit.
 *   total = xc_sat_add(total, dur);
 */
#ifndef XC_SAT_ADD_H
#define XC_SAT_ADD_H

#include "src/satmath.h"

#define xc_sat_add xp_sat_add

#endif
