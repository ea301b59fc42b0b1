/* taskowner.h - whether a process is entirely the invoking user's, read
 * from /proc as root: the rule of the BPF sampler's privileged() (and of
 * ptrace), for processes that existed before recording began and for the
 * pids given to -p under sudo.
 *   if (taskowner_is(pid, uid, gid) != 1) ... not the user's to record
 */
#ifndef XP_CAPTURE_TASKOWNER_H
#define XP_CAPTURE_TASKOWNER_H

#include <sys/types.h>

/* 1 when every user id of pid (real, effective, saved, filesystem) is uid,
 * every group id gid, and its memory dumpable as that user (the kernel
 * gives the files of a non-dumpable process's /proc entry to root; the
 * directory keeps its effective ids); 0 when not
 * (a kernel thread, another user's process, a setuid program); -ENOENT
 * when it is gone. */
int taskowner_is(pid_t pid, uid_t uid, gid_t gid);

#endif
