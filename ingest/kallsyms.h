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
/* Symbol name containing ip, or NULL: below the first symbol, at an end
 * marker (_etext, _einittext, __entry_text_end...) or more than
 * XP_KSYM_MAX_EXTENT past the symbol below it (no function is that long:
 * the gap after a module's last function, after the kernel's text), past
 * the last symbol of a truncated copy, or all addresses zero as an
 * unprivileged read gives. */
const char *xp_kallsyms_lookup(const struct xp_kallsyms *k, uint64_t ip,
			       const char **module);
size_t xp_kallsyms_count(const struct xp_kallsyms *k);
/* Bytes read, and whether the last line was whole (a copy cut short by a
 * killed xpcap ends in the middle of a line; that line is not used). */
uint64_t xp_kallsyms_bytes(const struct xp_kallsyms *k);
int xp_kallsyms_complete(const struct xp_kallsyms *k);
/* The copy is known to be cut short: an address past its last symbol may
 * belong to a symbol that was never read, so it gets none. */
void xp_kallsyms_set_truncated(struct xp_kallsyms *k);
/* Whether ip is past the last symbol of a truncated copy. */
int xp_kallsyms_beyond(const struct xp_kallsyms *k, uint64_t ip);
size_t xp_kallsyms_skipped(const struct xp_kallsyms *k);
void xp_kallsyms_free(struct xp_kallsyms *k);

#define XP_KSYM_MAX_EXTENT (1u << 20)   /* the longest kernel function is ~20 KiB */

#endif
