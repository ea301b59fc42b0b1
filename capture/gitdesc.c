/* gitdesc.c - git describe at record time, as the invoking user; see
 * gitdesc.h. The child writes the program's directory as its first line,
 * then becomes git, whose output is the second line. */
#include "capture/gitdesc.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_GROUPS 256

struct who {
	uid_t uid;
	gid_t gid;
	gid_t groups[MAX_GROUPS];
	int ngroups;
	int drop;                       /* root acting for another user */
	char *env[8];
	char env_buf[3][PATH_MAX + 16];
};

static int is_python(const char *word)
{
	const char *b = strrchr(word, '/');

	return !strncmp(b ? b + 1 : word, "python", 6);
}

int gitdesc_program_dir(char *const *argv, char *dir, size_t len)
{
	char real[PATH_MAX], *slash;
	const char *prog = NULL;

	if (!argv || !argv[0])
		return -ENOENT;
	if (!is_python(argv[0])) {
		prog = argv[0];
	} else {
		/* the script after the interpreter's options */
		for (int i = 1; argv[i] && !prog; i++) {
			size_t n = strlen(argv[i]);

			if (argv[i][0] != '-' && n > 3 && !strcmp(argv[i] + n - 3, ".py"))
				prog = argv[i];
		}
	}
	if (!prog || !realpath(prog, real))
		return -ENOENT;
	slash = strrchr(real, '/');
	if (slash)
		*slash = '\0';
	snprintf(dir, len, "%s", real[0] ? real : "/");
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Who git runs as, and its environment: computed before the fork (no NSS
 * lookups in the child). Nothing of the caller's environment but PATH. */
static void prepare(struct who *w, uid_t uid, gid_t gid)
{
	const char *path = getenv("PATH");
	struct passwd *pw = getpwuid(uid);
	int n = MAX_GROUPS, e = 0;

	w->uid = uid;
	w->gid = gid;
	w->drop = geteuid() == 0 && uid != 0;
	w->ngroups = 0;
	if (w->drop && pw && getgrouplist(pw->pw_name, gid, w->groups, &n) >= 0)
		w->ngroups = n;
	snprintf(w->env_buf[0], sizeof(w->env_buf[0]), "PATH=%s",
		 path ? path : "/usr/local/bin:/usr/bin:/bin");
	snprintf(w->env_buf[1], sizeof(w->env_buf[1]), "HOME=%s", pw ? pw->pw_dir : "/nonexistent");
	w->env[e++] = w->env_buf[0];
	w->env[e++] = w->env_buf[1];
	w->env[e++] = "GIT_CONFIG_NOSYSTEM=1";
	w->env[e++] = "GIT_OPTIONAL_LOCKS=0";      /* describe --dirty writes no index */
	w->env[e++] = "GIT_TERMINAL_PROMPT=0";
	w->env[e++] = "LC_ALL=C";
	w->env[e] = NULL;
}

static void child(int wr, char *const *argv, const struct who *w)
{
	static char *const git[] = { "git", "-c", "core.fsmonitor=false", "-c",
				     "core.hooksPath=/dev/null", "describe", "--always", "--dirty",
				     "--tags", NULL };
	char dir[PATH_MAX];
	sigset_t none;
	int null;

	setpgid(0, 0);          /* killed as a group, with anything git starts */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	/* for good: groups, gid, uid (not just the effective ones) */
	if (w->drop && (setgroups((size_t)w->ngroups, w->groups) || setgid(w->gid) ||
			setuid(w->uid) || setuid(0) == 0))
		_exit(126);
	if (gitdesc_program_dir(argv, dir, sizeof(dir)) || chdir(dir) ||
	    dprintf(wr, "%s\n", dir) < 0)
		_exit(125);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(wr, STDOUT_FILENO) < 0 ||
	    dup2(null, STDERR_FILENO) < 0)
		_exit(124);
	execvpe(git[0], git, w->env);
	_exit(127);
}

int gitdesc_take(char *const *argv, uid_t uid, gid_t gid, struct gitdesc *g)
{
	char buf[PATH_MAX + 512], *nl;
	uint64_t deadline = now_ms() + GITDESC_TIMEOUT_MS, t;
	struct who w;
	size_t got = 0;
	int p[2], status = 0, eof = 0, timed_out = 0;
	siginfo_t si;
	pid_t pid;

	memset(g, 0, sizeof(*g));
	if (!argv || !argv[0])
		return -ENOENT;
	prepare(&w, uid, gid);
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = -errno;

		close(p[0]);
		close(p[1]);
		return e;
	}
	if (pid == 0) {
		close(p[0]);
		child(p[1], argv, &w);
	}
	close(p[1]);
	setpgid(pid, pid);      /* as the child does: no window before kill */
	while (!eof && (t = now_ms()) < deadline) {
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, (int)(deadline - t)) <= 0)
			continue;
		n = read(p[0], buf + got, sizeof(buf) - 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || (got += (size_t)n) == sizeof(buf) - 1)
			eof = 1;
	}
	close(p[0]);
	buf[got] = '\0';
	/* its exit, without reaping it: the group must not be freed yet */
	for (;;) {
		si.si_pid = 0;
		if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) && errno != EINTR)
			break;
		if (si.si_pid)
			break;
		if (now_ms() >= deadline) {
			timed_out = 1;
			break;
		}
		nanosleep(&(struct timespec){ .tv_nsec = 5000000 }, NULL);
	}
	kill(-pid, SIGKILL);    /* git's helpers; git itself when it overran */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (timed_out)
		return -ETIMEDOUT;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return -ENOENT;
	nl = strchr(buf, '\n');
	if (!nl || nl == buf)
		return -ENOENT;
	*nl++ = '\0';
	nl[strcspn(nl, "\n")] = '\0';
	if (!nl[0] || strlen(buf) >= sizeof(g->dir))
		return -ENOENT;
	memcpy(g->dir, buf, strlen(buf) + 1);
	snprintf(g->describe, sizeof(g->describe), "%s", nl);
	return 0;
}

json_t *gitdesc_json(const struct gitdesc *g)
{
	json_t *j = g && g->describe[0] ?
		json_pack("{s:s,s:s}", "describe", g->describe, "dir", g->dir) : NULL;

	return j ? j : json_null();     /* none, or not UTF-8 */
}
