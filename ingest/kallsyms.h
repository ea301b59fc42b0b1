/* kallsyms.h - kernel symbols from the run's /proc/kallsyms snapshot, sorted
 * for binary search; a kernel IP belongs to the closest symbol below it.
 *
 *   struct xp_kallsyms *k;
 *   if (xp_kallsyms_load(&k, "run/kallsyms") == 0) {
 *       const char *mod, *name = xp_kallsyms_lookup(k, ip, &mod);   // mod: NULL or "nvidia"
 *       xp_kallsyms_free(k);
 *   }
 */
#ifndef XP_KALLSYMS_H
#define XP_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct xp_kallsyms;

/* 0, -errno of open, -ENOMEM, -E2BIG past the bounds (lines, symbols). Lines
 * that do not parse are skipped and counted. */
int xp_kallsyms_load(struct xp_kallsyms **out, const char *path);
int xp_kallsyms_parse(struct xp_kallsyms **out, FILE *f);
/* Symbol name containing ip, or NULL (below the first symbol, above the
 * last text symbol, or all addresses zero as an unprivileged read gives). */
const char *xp_kallsyms_lookup(const struct xp_kallsyms *k, uint64_t ip,
			       const char **module);
size_t xp_kallsyms_count(const struct xp_kallsyms *k);
size_t xp_kallsyms_skipped(const struct xp_kallsyms *k);
void xp_kallsyms_free(struct xp_kallsyms *k);

#endif
