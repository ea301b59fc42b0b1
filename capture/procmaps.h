/* procmaps.h - executable mappings that exist before capture starts
 * (-p, -a), read from /proc/PID/maps into XP_MMAP_FROM_PROC records, with
 * the build ids of the mapped files themselves (buildid.h, mapfile.h).
 *   struct procmaps_entry e;
 *   if (procmaps_parse_line(line, &e) == 0 && (e.prot & PROT_EXEC)) ...
 *   procmaps_walk(pid, ts, emit, ctx);
 */
#ifndef XP_CAPTURE_PROCMAPS_H
#define XP_CAPTURE_PROCMAPS_H

#include <stdint.h>
#include <sys/types.h>

#include "src/runfmt.h"

struct procmaps_entry {
	uint64_t start, end, pgoff;
	uint32_t prot;              /* PROT_* */
	uint32_t maj, min;          /* the mapped file's device */
	uint64_t ino;               /* and inode; 0: anonymous */
	const char *path;           /* points into the line; "" if anonymous */
};

/* Parses one line ("start-end perms offset dev inode   path"); the line's
 * newline is cut. 0 or -EINVAL. */
int procmaps_parse_line(char *line, struct procmaps_entry *e);

/* Called per executable mapping, with its record filled. */
typedef void (*procmaps_fn)(void *ctx, const struct xp_mmap *m, const char *path);

/* Every executable mapping of pid; 0 or -errno (-ENOENT: process gone). */
int procmaps_walk(pid_t pid, uint64_t ts, procmaps_fn fn, void *ctx);
/* How many there are, no file opened; or -errno. */
int procmaps_count_exec(pid_t pid);

#endif
