/* pyprivs.h - what the Python frame reader's thread may read as: the
 * invoking user under sudo, root without CAP_SYS_PTRACE otherwise
 * (pyprivs.c). */
#ifndef XP_PYPRIVS_H
#define XP_PYPRIVS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Called on the reader's own thread: under sudo (euid 0, uid not 0) it
 * becomes uid:gid with no capabilities; as root for root it drops
 * CAP_SYS_PTRACE from its effective set unless record_privileged. mode
 * says how memory is read, for the info records. 0, or -1 when a drop
 * failed (the reader must then read nothing). */
int pyreader_become_user(uid_t uid, gid_t gid, bool record_privileged, char *mode, size_t len);

#endif
