/* array.h - growable arrays: the one "double the capacity" routine, with
 * the overflow check that hand-written copies forgot.
 *
 *   struct row *rows = NULL; size_t cap = 0, n = 0;
 *   if (xp_array__reserve((void **)&rows, &cap, n + 1, sizeof(*rows), 64))
 *           return -ENOMEM;
 *   rows[n++] = r;
 */
#ifndef XP_ARRAY_H
#define XP_ARRAY_H

#include <stddef.h>

/* Makes *p (of elem-byte items) hold at least need items: the capacity
 * doubles from first. *p and *cap change only on success. 0 or -ENOMEM. */
int xp_array__reserve(void **p, size_t *cap, size_t need, size_t elem, size_t first);

#endif
