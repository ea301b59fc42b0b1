/* cuptilib.h - the injection library's file, opened once. A --cupti-lib
 * PATH that a sudo user gave is looked up and opened with that user's
 * file-system identity (src/fsident.h): root then reads, and attaches the
 * uprobe to, nothing the user could not read. xpcap's own copy (next to
 * it, the build tree's, the install's) is opened as xpcap. Regular files
 * only: a FIFO or a device is never opened (src/safeopen.h). The user's
 * path is walked without asking a FUSE file system anything (fstrust.h):
 * its server, the user's, may never answer root. The uprobe
 * is attached to the file through its fd, so a path swapped afterwards
 * changes nothing.
 *   int fd = cuptilib_open(path, uid, gid);   // O_RDONLY, or -errno
 */
#ifndef XP_CAPTURE_CUPTILIB_H
#define XP_CAPTURE_CUPTILIB_H

#include <sys/types.h>

/* As uid:gid (and uid's groups) when xpcap is root and uid is not 0, else
 * as xpcap. -ENXIO: not a regular file; -EACCES: uid may not read it;
 * -EREMOTE: on FUSE or another mount root does not touch (fstrust.h). */
int cuptilib_open(const char *path, uid_t uid, gid_t gid);

#endif
