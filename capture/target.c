/* target.c - see target.h. The child blocks in read() on the go pipe with
 * default signal handling; after the byte arrives it drops privileges and
 * execs. A CLOEXEC pipe tells the parent whether exec worked: it closes
 * without data on success, or carries errno. */
#include "capture/target.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void target_invoking_user(uid_t *uid, gid_t *gid)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");

	*uid = getuid();
	*gid = getgid();
	if (geteuid() == 0 && su && sg && atoi(su) > 0) {
		*uid = (uid_t)atoi(su);
		*gid = (gid_t)atoi(sg);
	}
}

static int drop_privileges(uid_t uid, gid_t gid)
{
	struct passwd *pw;

	if (geteuid() != 0 || uid == 0)
		return 0;
	pw = getpwuid(uid);
	if (pw ? initgroups(pw->pw_name, gid) : setgroups(0, NULL))
		return -errno;
	if (setgid(gid) || setuid(uid))
		return -errno;
	return 0;
}

int target_raise_nofile(struct target *t)
{
	struct rlimit now;

	if (getrlimit(RLIMIT_NOFILE, &now))
		return -errno;
	if (!t->nofile_raised)
		t->nofile = now;
	t->nofile_raised = true;
	if (now.rlim_cur == now.rlim_max)
		return 0;
	now.rlim_cur = now.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &now) ? -errno : 0;
}

static void child_run(const struct target *t, int go_rd, int err_wr, char **argv, char **env,
		      uid_t uid, gid_t gid)
{
	sigset_t none;
	char c;
	int err;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	/* EOF instead of the byte: xpcap died before arming; do not run untraced */
	if (read(go_rd, &c, 1) != 1)
		_exit(127);
	close(go_rd);
	for (char **e = env; e && *e; e++)
		putenv(*e);
	err = drop_privileges(uid, gid);
	/* the descriptors the command would have had without xpcap */
	if (!err && t->nofile_raised && setrlimit(RLIMIT_NOFILE, &t->nofile))
		err = -errno;
	if (!err) {
		execvp(argv[0], argv);
		err = -errno;
	}
	err = -err;
	if (write(err_wr, &err, sizeof(err)) < 0)
		_exit(127);
	_exit(127);
}

int target_fork(struct target *t, char **argv, char **env, uid_t uid, gid_t gid)
{
	int go[2], ex[2];

	t->pid = 0;
	t->go_fd = t->err_fd = -1;
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(ex, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	t->pid = fork();
	if (t->pid < 0) {
		int err = -errno;

		close(go[0]); close(go[1]); close(ex[0]); close(ex[1]);
		t->pid = 0;
		return err;
	}
	if (t->pid == 0) {
		close(go[1]);
		close(ex[0]);
		child_run(t, go[0], ex[1], argv, env, uid, gid);
	}
	close(go[0]);
	close(ex[1]);
	t->go_fd = go[1];
	t->err_fd = ex[0];
	return 0;
}

int target_release(struct target *t, int *exec_errno)
{
	char c = 1;
	int err = 0;
	ssize_t n;

	*exec_errno = 0;
	if (write(t->go_fd, &c, 1) != 1)
		err = -errno;
	close(t->go_fd);
	t->go_fd = -1;
	do
		n = read(t->err_fd, exec_errno, sizeof(*exec_errno));
	while (n < 0 && errno == EINTR);
	close(t->err_fd);
	t->err_fd = -1;
	if (n == (ssize_t)sizeof(*exec_errno))
		return -ECHILD;
	*exec_errno = 0;
	return err;
}

void target_abort(struct target *t)
{
	if (t->go_fd >= 0)
		close(t->go_fd);
	if (t->err_fd >= 0)
		close(t->err_fd);
	t->go_fd = t->err_fd = -1;
	if (t->pid > 0) {
		kill(t->pid, SIGKILL);
		waitpid(t->pid, NULL, 0);
		t->pid = 0;
	}
}

int target_exit_code(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 1;
}
