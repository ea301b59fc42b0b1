/* perfmap.h - JIT symbol maps (/tmp/perf-PID.map, saved in the run as
 * perf-PID.map): "START SIZE name" lines in hex, as written by CPython 3.12
 * (-X perf: "py::func:file.py"), the JVM agents, V8 and LuaJIT.
 *
 *   struct xp_perfmap *m;
 *   if (xp_perfmap_load(&m, "run/perf-1234.map") == 0) {
 *       const char *name = xp_perfmap_lookup(m, ip);   // NULL outside every entry
 *       xp_perfmap_free(m);
 *   }
 */
#ifndef XP_PERFMAP_H
#define XP_PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct xp_perfmap;

/* 0, -errno, -ENOMEM, -E2BIG past XP_PERFMAP_MAX entries. Bad lines skipped. */
int xp_perfmap_load(struct xp_perfmap **out, const char *path);
int xp_perfmap_parse(struct xp_perfmap **out, FILE *f);
/* Latest entry containing ip (a JIT may reuse addresses: later lines win). */
const char *xp_perfmap_lookup(const struct xp_perfmap *m, uint64_t ip);
size_t xp_perfmap_count(const struct xp_perfmap *m);
size_t xp_perfmap_skipped(const struct xp_perfmap *m);
void xp_perfmap_free(struct xp_perfmap *m);

#define XP_PERFMAP_MAX (8u << 20)

#endif
