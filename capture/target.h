/* target.h - the command xpcap records: forked first and held on a pipe
 * until capture is armed (so its exec and first instructions are seen),
 * then run as the invoking user (SUDO_UID/SUDO_GID) and reaped.
 *   struct target t;
 *   target_fork(&t, argv, env, uid, gid);   // child waits
 *   ... track t.pid, open perf events ...
 *   if (target_release(&t, &exec_errno)) ...  // exec failed: exec_errno
 *   waitpid(t.pid, &status, 0); code = target_exit_code(status);
 */
#ifndef XP_CAPTURE_TARGET_H
#define XP_CAPTURE_TARGET_H

#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

struct target {
	pid_t pid;                  /* the child, 0 before fork */
	int go_fd;                  /* write end: one byte releases the child */
	int err_fd;                 /* read end: errno if exec failed, EOF if it ran */
	bool nofile_raised;         /* by target_raise_nofile: the command gets */
	struct rlimit nofile;       /* this RLIMIT_NOFILE back before its exec */
};

/* The user to run the command as: SUDO_UID/SUDO_GID when root via sudo,
 * else the real ids. */
void target_invoking_user(uid_t *uid, gid_t *gid);
/* Raises xpcap's soft RLIMIT_NOFILE to its hard limit (perf events take a
 * descriptor per thread and CPU); the command target_fork starts later
 * gets the limits it had, so it runs as it would without xpcap. 0 or
 * -errno (the limit stays). */
int target_raise_nofile(struct target *t);
/* env: "NAME=value" strings added to the child's environment (NULL-ended). */
int target_fork(struct target *t, char **argv, char **env, uid_t uid, gid_t gid);
/* 0: exec succeeded. -ECHILD and *exec_errno set: the command could not run. */
int target_release(struct target *t, int *exec_errno);
/* Kills and reaps a child that was never released (error paths). */
void target_abort(struct target *t);
/* The shell's view: code for exit(code), 128+N for signal N. */
int target_exit_code(int wstatus);

#endif
