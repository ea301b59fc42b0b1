/* strintern.h - intern table for names written to the GPU stream.
 *
 * Kernel, device, NVTX and API names arrive as pointers into CUPTI-owned
 * memory that may be reused once a buffer is released, so each distinct name
 * is copied here once, given an id, and written as an XP_REC_GPU_STRING
 * record before the first record that uses it:
 *
 *   struct xpc_strintern *t = xpc_strintern__new(&next_id);
 *   uint32_t id; int fresh = xpc_strintern__intern(t, name, &id);
 *   if (fresh > 0) emit the string record (id, name);
 *
 * Not thread-safe: the caller serializes (the conversion lock). Ids come
 * from a counter the caller may share with other tables (atomically). */
#ifndef XPCUPTI_STRINTERN_H
#define XPCUPTI_STRINTERN_H

#include <stddef.h>
#include <stdint.h>

struct xpc_strintern;

/* next_id: shared id counter (first id handed out is *next_id + 1). */
struct xpc_strintern *xpc_strintern__new(uint32_t *next_id);
/* 1: new string, *id assigned; 0: known, *id set; -ENOMEM. NULL or empty
 * names get id 0 and return 0. */
int xpc_strintern__intern(struct xpc_strintern *t, const char *s, uint32_t *id);
size_t xpc_strintern__count(const struct xpc_strintern *t);
void xpc_strintern__free(struct xpc_strintern *t);

/* Names longer than this are cut (a record must stay small). */
#define XP_STR_MAX 4096

#endif
