/* fsident.h - root acting on the file system as another user, on the
 * calling thread only: setfsuid/setfsgid and the raw setgroups system call
 * (glibc's setgroups changes every thread's groups). The kernel then
 * checks each file operation as that user, and a fsuid other than 0 drops
 * the file-system capabilities, so a link or a swapped directory can only
 * lead where the user could go anyway. One copy, used by xpcap's run
 * directory (capture/rundir.c) and by ingest's (db/rundb.c).
 *
 *   struct xp_fsident id;
 *   struct xp_fsident_saved s;
 *   if (xp_fsident__init(&id, uid, gid, true)) ...   // their groups too
 *   if (xp_fsident__enter(&id, &s) == 0) {
 *           fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW);  // as uid
 *           xp_fsident__leave(&id, &s);                       // root again
 *   }
 *   xp_fsident__free(&id);
 */
#ifndef XP_FSIDENT_H
#define XP_FSIDENT_H

#include <stdbool.h>
#include <sys/types.h>

struct xp_fsident {
	uid_t uid;                      /* whom the file system sees */
	gid_t gid;
	gid_t *groups;                  /* uid's supplementary groups (may be none) */
	int ngroups;
	gid_t *own_groups;              /* the caller's, restored by leave */
	int n_own_groups;
};

/* One enter..leave; on the stack, so several threads may each act. */
struct xp_fsident_saved {
	bool on;                        /* entered: leave restores */
	uid_t fsuid;                    /* the ids before enter */
	gid_t fsgid;
};

/* Takes the caller's groups (to go back to) and, with user_groups and a
 * uid other than 0, uid's from the group database (a uid without a name:
 * gid only); without, uid acts with no supplementary group. 0 or -errno;
 * xp_fsident__free is safe after a failure. */
int xp_fsident__init(struct xp_fsident *id, uid_t uid, gid_t gid, bool user_groups);
void xp_fsident__free(struct xp_fsident *id);
/* Becomes id on this thread, checked (setfsuid reports no failure, so the
 * ids are read back): 0, or -EPERM / -errno with nothing changed. */
int xp_fsident__enter(const struct xp_fsident *id, struct xp_fsident_saved *s);
/* Back to the ids before enter (fsuid first: that restores the file-system
 * capabilities). errno is kept. Nothing when s was not entered. */
void xp_fsident__leave(const struct xp_fsident *id, struct xp_fsident_saved *s);

#endif
