/* wtab.h - a table of text keys (folded lines, kernel names) with a weight
 * and an instance count per side: side 0 alone for an export, sides 0 and
 * 1 (base, new) for a diff. Memory grows with distinct keys, never with rows.
 *
 *   struct xp_wtab *t = xp_wtab_new();
 *   xp_wtab_add(t, 0, "main;run;k_alpha", 16, 1500, 3);
 *   struct xp_wrow *rows; size_t n;
 *   xp_wtab_rows(t, &rows, &n);          // sorted by key; free(rows) after
 */
#ifndef XP_WTAB_H
#define XP_WTAB_H

#include <stddef.h>
#include <stdint.h>

struct xp_wtab;

struct xp_wrow {
	const char *key;            /* owned by the table */
	uint64_t w[2];              /* weight per side: samples or ns */
	uint64_t n[2];              /* instances per side */
};

struct xp_wtab *xp_wtab_new(void);          /* NULL: out of memory */
void xp_wtab_free(struct xp_wtab *t);
/* Adds to the key's row (created at 0). 0, -EINVAL (side), -ENOMEM, -E2BIG. */
int xp_wtab_add(struct xp_wtab *t, int side, const char *key, size_t len,
		uint64_t weight, uint64_t n);
size_t xp_wtab_count(const struct xp_wtab *t);
/* Every row, sorted by key (strcmp); *rows is malloc'd (NULL when empty). */
int xp_wtab_rows(const struct xp_wtab *t, struct xp_wrow **rows, size_t *n);

#endif
