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

/* What all the maps of a run may take (read from someone else's run, they
 * are hostile input): bytes read and lines, counted down as maps parse. */
struct xp_perfmap_budget {
	uint64_t bytes;
	uint64_t lines;
};
#define XP_PERFMAP_RUN_BYTES (512ull << 20)
#define XP_PERFMAP_RUN_LINES (16ull << 20)

/* 0, -errno, -ENOMEM, -E2BIG past XP_PERFMAP_MAX entries. Bad lines skipped. */
int xp_perfmap_load(struct xp_perfmap **out, const char *path);
int xp_perfmap_parse(struct xp_perfmap **out, FILE *f);
/* The same within budget b (NULL: none): -E2BIG when the map would go over
 * it; b is then left as it was before this map. */
int xp_perfmap_parse_budget(struct xp_perfmap **out, FILE *f, struct xp_perfmap_budget *b);
/* Latest entry containing ip (a JIT may reuse addresses: later lines win). */
const char *xp_perfmap_lookup(const struct xp_perfmap *m, uint64_t ip);
size_t xp_perfmap_count(const struct xp_perfmap *m);
size_t xp_perfmap_skipped(const struct xp_perfmap *m);
void xp_perfmap_free(struct xp_perfmap *m);

#define XP_PERFMAP_MAX (8u << 20)

#endif
