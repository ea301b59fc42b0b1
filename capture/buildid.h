/* buildid.h - the GNU build id of a mapped ELF file, read with libelf, for
 * mappings whose perf record came without one (page not resident) and for
 * mappings taken from /proc/PID/maps. Root reads it, so only the mapped
 * file itself is opened (mapfile.h).
 *   struct mapfile_id m = { pid, start, end, dev, ino, path };
 *   uint8_t id[20]; size_t n;
 *   if (buildid_read_mapping(&m, id, sizeof(id), &n) == 0) ...
 */
#ifndef XP_CAPTURE_BUILDID_H
#define XP_CAPTURE_BUILDID_H

#include <stddef.h>
#include <stdint.h>

struct mapfile_id;

/* 0 and *n set, -ENOENT if the file has no build id note, -errno else
 * (-EPERM: the path no longer leads to the mapped file). */
int buildid_read_mapping(const struct mapfile_id *m, uint8_t *id, size_t max, size_t *n);

#endif
