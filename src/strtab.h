/* strtab.h - string interner: each distinct string gets one small id, so the
 * database stores names once (StringIds) and rows carry integers.
 *
 *   struct xp_strtab *t = xp_strtab_new();
 *   int64_t id; int fresh;
 *   xp_strtab_intern(t, "main", 4, &id, &fresh);   // fresh: insert into StringIds
 *   printf("%s\n", xp_strtab_get(t, id));
 *   xp_strtab_free(t);
 */
#ifndef XP_STRTAB_H
#define XP_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct xp_strtab;

struct xp_strtab *xp_strtab_new(void);      /* NULL: out of memory */
void xp_strtab_free(struct xp_strtab *t);
/* Ids start at 1 and are dense. 0 or -ENOMEM, -E2BIG for len > 1 MiB. */
int xp_strtab_intern(struct xp_strtab *t, const char *s, size_t len,
		     int64_t *id, int *fresh);
/* The string of an id, or NULL for an unknown id. */
const char *xp_strtab_get(const struct xp_strtab *t, int64_t id);
size_t xp_strtab_count(const struct xp_strtab *t);

#endif
