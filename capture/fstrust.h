/* fstrust.h - whether root may touch a file that another user names (a
 * mapping, a perf map, --cupti-lib) without that user's file-system server
 * holding root's xpcap for good. A FUSE file system (fuse, fuseblk,
 * fuse.*) is served by a process of whoever mounted it (a user, through
 * fusermount or in a user namespace), a network one by a server elsewhere:
 * a stat, open or read there waits for the server, and one that never
 * answers holds the caller until SIGKILL. So the mount is found without
 * asking its file system anything: an O_PATH fd (opening it calls no file
 * system) has its mount id in /proc/self/fdinfo, and a mountinfo file
 * gives that mount's type. Disk and memory file systems pass; network
 * ones and overlay where their super block is mounted in xpcap's own mount
 * namespace (root mounted them there: no user namespace mounts a network
 * file system, and one's overlay may sit on FUSE). FUSE, a type not known
 * and a mount not found are skipped and counted.
 *
 *   int pfd = openat(AT_FDCWD, "/proc/PID/map_files/A-B", O_PATH | O_CLOEXEC);
 *   if (fstrust_fd(pfd, pid) == 0) fstat(pfd, &st) ...    // a local file
 *   pfd = fstrust_open_path("/usr/lib/libc.so.6", 0);      // O_PATH, walked
 */
#ifndef XP_CAPTURE_FSTRUST_H
#define XP_CAPTURE_FSTRUST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* 0 when the file open on fd (O_PATH is enough) is on a file system that
 * passes (above); -EREMOTE when not, or when its mount cannot be told
 * (counted);
 * -errno when /proc cannot be read. ns_pid: a process of the mount
 * namespace fd was opened in (/proc/PID/map_files), 0 for xpcap's own. */
int fstrust_fd(int fd, pid_t ns_pid);

enum fstrust_flags {
	FSTRUST_FOLLOW = 1 << 0,        /* links are followed (each read on a local
					 * mount), else a link is -ELOOP */
};

/* An O_PATH fd of the absolute path, looked up one name at a time in
 * xpcap's mount namespace with the caller's file-system identity, each
 * file checked by fstrust_fd before anything is asked of it (a name looked
 * up in it, its stat, a link's text): no request reaches a file system that
 * is not local. "." and ".." are refused (-EINVAL: the paths walked are
 * the kernel's, canonical). The file itself is checked too, but not
 * opened: the caller fstats it (xp_regular_path_check). -EREMOTE
 * (counted), -ELOOP, -ENOTDIR or -errno. */
int fstrust_open_path(const char *path, unsigned flags);

/* How many files were skipped so far, in this process, and the types of
 * their mounts ("fuse.sshfs,nfs4"; "" when none; "?" for a mount not
 * found), for meta.json and the last words of xpcap record. */
uint64_t fstrust_skipped(void);
void fstrust_skipped_types(char *out, size_t len);

#endif
