/* array.c - growable arrays (array.h). */
#include "src/array.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

int xp_array__reserve(void **p, size_t *cap, size_t need, size_t elem, size_t first)
{
	size_t n = *cap ? *cap : (first ? first : 1);
	void *q;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -ENOMEM;
		n *= 2;
	}
	if (elem && n > SIZE_MAX / elem)
		return -ENOMEM;
	q = realloc(*p, n * elem);
	if (!q)
		return -ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}
