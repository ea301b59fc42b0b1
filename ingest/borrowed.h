/* borrowed.h - the native frames of launch stacks that name an earlier
 * copy (XP_STACK_KEYED, XP_STACK_BORROWED in runfmt.h; the library's side
 * is cupti/stackreuse.h): each key's frames as its latest copy
 * unwound, by process and key id.
 *
 *   struct xp_borrowed *b = xp_borrowed_new();
 *   xp_borrowed_put(b, pid, key, ips, n, stack);   // a KEYED copy, unwound
 *   ips = xp_borrowed_get(b, pid, key, &n);         // a BORROWED launch
 *   xp_borrowed_free(b);
 */
#ifndef XP_INGEST_BORROWED_H
#define XP_INGEST_BORROWED_H

#include <stdint.h>

struct xp_borrowed;

struct xp_borrowed *xp_borrowed_new(void);
void xp_borrowed_free(struct xp_borrowed *b);
/* Keeps ips[0..n) as the frames of (pid, key), whose launch made stack
 * (a stack id: the same functions make the same id): XP_BORROWED_NEW for a
 * key not seen before, else a check of it, _SAME or _DIFFERED from the
 * stack it had; -ENOMEM. */
enum { XP_BORROWED_NEW, XP_BORROWED_SAME, XP_BORROWED_DIFFERED };
int xp_borrowed_put(struct xp_borrowed *b, uint32_t pid, uint32_t key, const uint64_t *ips,
		    unsigned n, int64_t stack);
/* The frames of (pid, key), NULL when no copy of it came (lost, or cut off).
 * Key 0 is none: put keeps nothing for it, get finds nothing. */
const uint64_t *xp_borrowed_get(const struct xp_borrowed *b, uint32_t pid, uint32_t key,
				unsigned *n);

#endif
