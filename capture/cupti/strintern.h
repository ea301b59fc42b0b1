/* strings.h - intern table for names written to the GPU stream.
 *
 * Kernel, device, NVTX and API names arrive as pointers into CUPTI-owned
 * memory that may be reused once a buffer is released, so each distinct name
 * is copied here once, given an id, and written as an XP_REC_GPU_STRING
 * record before the first record that uses it:
 *
 *   struct xp_strtab *t = xp_strtab_new(&next_id);
 *   uint32_t id; int fresh = xp_strtab_intern(t, name, &id);
 *   if (fresh > 0) emit the string record (id, name);
 *
 * Not thread-safe: the caller serializes (the conversion lock). Ids come
 * from a counter the caller may share with other tables (atomically). */
#ifndef XPCUPTI_STRINGS_H
#define XPCUPTI_STRINGS_H

#include <stddef.h>
#include <stdint.h>

struct xp_strtab;

/* next_id: shared id counter (first id handed out is *next_id + 1). */
struct xp_strtab *xp_strtab_new(uint32_t *next_id);
/* 1: new string, *id assigned; 0: known, *id set; -ENOMEM. NULL or empty
 * names get id 0 and return 0. */
int xp_strtab_intern(struct xp_strtab *t, const char *s, uint32_t *id);
size_t xp_strtab_count(const struct xp_strtab *t);
void xp_strtab_free(struct xp_strtab *t);

/* Names longer than this are cut (a record must stay small). */
#define XP_STR_MAX 4096

#endif
