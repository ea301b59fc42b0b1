/* meta.h - read the run's meta.json tolerantly: every scalar becomes a
 * (dotted key, text value) pair, so keys this reader does not know yet still
 * reach the database (META_DATA_EXPORT, prefixed "meta.").
 *
 *   json_t *j; 
 *   if (xp_meta_load(&j, "run/meta.json") == 0) {
 *       xp_meta_flatten(j, print_pair, NULL);    // "records.sample.lost" = "3"
 *       json_decref(j);
 *   }
 */
#ifndef XP_META_H
#define XP_META_H

#include <jansson.h>
#include <stdint.h>

#define XP_META_MAX_BYTES (16u << 20)   /* a meta.json is a few KiB */

/* 0; -ENOENT; -EFBIG over the bound; -EBADMSG not JSON (then *line set). */
int xp_meta_load(json_t **out, const char *path, int *line);
/* Calls fn for every scalar, depth-first, keys joined with '.', arrays
 * indexed ("command.0"). Nesting deeper than 8 is ignored. Stops at the
 * first non-zero return of fn and returns it. */
int xp_meta_flatten(json_t *j, int (*fn)(void *ctx, const char *key,
					 const char *value), void *ctx);
/* Integer at a dotted path of objects, or def. */
int64_t xp_meta_int(json_t *j, const char *dotted, int64_t def);

#endif
