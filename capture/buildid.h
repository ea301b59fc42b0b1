/* buildid.h - the GNU build id of an ELF file, read with libelf, for
 * mappings whose perf record came without one (page not resident) and for
 * mappings taken from /proc/PID/maps.
 *   uint8_t id[20]; size_t n;
 *   if (buildid_read("/usr/lib/libc.so.6", id, sizeof(id), &n) == 0) ...
 */
#ifndef XP_CAPTURE_BUILDID_H
#define XP_CAPTURE_BUILDID_H

#include <stddef.h>
#include <stdint.h>

/* 0 and *n set, -ENOENT if the file has no build id note, -errno else. */
int buildid_read(const char *path, uint8_t *id, size_t max, size_t *n);

#endif
