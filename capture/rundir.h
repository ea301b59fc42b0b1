/* rundir.h - the run directory on disk: checked and created before capture,
 * filled with snapshots (kallsyms, perf maps) after, handed to the invoking
 * user, or removed again when capture could not start.
 *   bool created;
 *   if (rundir_prepare("run", false, &created) == -ENOTEMPTY) ...
 *   int dirfd = rundir_open("run");           // every write goes through it
 *   rundir_copy_file("/proc/kallsyms", dirfd, "kallsyms");
 *   rundir_chown(dirfd, uid, gid, created);
 */
#ifndef XP_CAPTURE_RUNDIR_H
#define XP_CAPTURE_RUNDIR_H

#include <stdbool.h>
#include <sys/types.h>

/* Creates dir, or accepts an empty one (or with force, a used one: the
 * files a previous run wrote are removed). -ENOTEMPTY, -ENOTDIR, -errno. */
int rundir_prepare(const char *dir, bool force, bool *created);
/* The run directory as an fd (O_NOFOLLOW): writes go through it, so a user
 * who owns the directory cannot redirect them by renaming it and leaving a
 * link in its place. -errno. */
int rundir_open(const char *dir);
/* Removes the files xpcap writes, then the directory if it was created. */
void rundir_remove(const char *dir, bool created);
/* Copies src to dir/name: never through a link planted at dir/name, and a
 * partial copy (a full disk) is removed. 0 or -errno. */
int rundir_copy_file(const char *src, int dirfd, const char *name);
/* Same for a file a profiled user could have planted (/tmp/perf-PID.map):
 * only a regular file, not a link, owned by one of the two uids. */
int rundir_copy_user_file(const char *src, int dirfd, const char *name,
			  uid_t owner, uid_t owner2);
/* Every file in the directory, and the directory itself if own_dir (xpcap
 * created it), never through a link: an existing directory keeps its owner. */
int rundir_chown(int dirfd, uid_t uid, gid_t gid, bool own_dir);

#endif
