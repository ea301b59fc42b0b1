/* rundir.h - the run directory on disk, as the invoking user sees it.
 * xpcap runs as root; the user must not get from it a directory or file
 * they could not have made themselves. So the directory is resolved and
 * opened once, as that user (fsuid/fsgid and their groups, on the calling
 * thread only), locked against a second recorder, and every file in it is
 * created relative to that fd, as the user, exclusively and without
 * following a link: born the user's, never chowned.
 *   struct rundir rd;
 *   if (rundir_open(&rd, "run", uid, gid, force) == -EBUSY) ... rd.holder
 *   int fd = rundir_open_file(&rd, "cpu.xpr", O_WRONLY | O_CREAT);
 *   rundir_copy_file(&rd, format_path, "tracepoints/sched_switch.format", &bytes);
 *   rundir_abandon(&rd);      // capture never started: remove what we made
 *   rundir_close(&rd);
 */
#ifndef XP_CAPTURE_RUNDIR_H
#define XP_CAPTURE_RUNDIR_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "src/fsident.h"

#define RUNDIR_MAX_MADE 16

struct rundir {
	int fd;                         /* the directory, opened once; holds the lock */
	uid_t uid;                      /* whose files go in it (0: root's own run) */
	gid_t gid;
	bool created;                   /* made by this xpcap: removed by rundir_abandon */
	char path[PATH_MAX];            /* absolute, as opened (messages, XPCAP_RUN_DIR) */
	const char *arg;                /* the path as given */
	/* why rundir_open refused */
	uid_t owner;                    /* -EPERM: who owns the directory */
	pid_t holder;                   /* -EBUSY: the recorder holding the lock, or 0 */
	struct xp_fsident ident;         /* the user's, entered per call and thread */
	pthread_mutex_t made_lock;
	unsigned nmade;                 /* names this process created, in order */
	char made[RUNDIR_MAX_MADE][64];
};

/* Opens path as the run directory of uid:gid, creating it (as the user)
 * when missing, and locks it. Refuses: -ELOOP (the last component is a
 * link), -ENOTDIR, -EPERM (owned by rd->owner, not by uid), -EACCES (the
 * owner may not write it), -EBUSY (rd->holder records into it),
 * -ENOTEMPTY (files in it and no force; with force xpcap's own files are
 * removed, as the user, and others kept), or -errno. On failure nothing
 * is left open or created. */
int rundir_open(struct rundir *rd, const char *path, uid_t uid, gid_t gid, bool force);
/* openat(rd->fd, name, flags | O_NOFOLLOW | O_CLOEXEC) as the user, 0644;
 * O_CREAT always means O_EXCL, and the name is remembered for
 * rundir_abandon. name may be "sub/file" (sub opened without following a
 * link). An fd or -errno; usable from any thread. */
int rundir_open_file(struct rundir *rd, const char *name, int flags);
/* mkdirat / unlinkat / renameat within the run directory, as the user.
 * 0 or -errno. A new directory and a rename's target are remembered. */
int rundir_mkdir(struct rundir *rd, const char *name);
int rundir_unlink(struct rundir *rd, const char *name);
int rundir_rename(struct rundir *rd, const char *from, const char *to);
/* Copies src (read as root) to name: written to name.tmp and renamed into
 * place only when complete, so a killed xpcap or a full disk never leaves
 * a partial file under the real name. *bytes (may be NULL) gets its size.
 * 0 or -errno. */
int rundir_copy_file(struct rundir *rd, const char *src, const char *name, uint64_t *bytes);
/* Same for a file a profiled user could have planted (/tmp/perf-PID.map):
 * only a regular file, not a link, owned by one of the two uids. */
int rundir_copy_user_file(struct rundir *rd, const char *src, const char *name,
			  uid_t owner, uid_t owner2);
/* Capture never started: removes the files this process created (never
 * another's), and the directory if it made it. */
void rundir_abandon(struct rundir *rd);
/* Closes the directory, which releases the lock. */
void rundir_close(struct rundir *rd);

#endif
