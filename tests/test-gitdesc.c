/* test-gitdesc.c - git describe taken by xpcap at record time (gitdesc.c):
 * the program's checkout, as the invoking user (uid, gid, groups, stdin
 * /dev/null), with the repository's core.fsmonitor not run, and a git that
 * hangs killed with whatever it started. Real git, real repositories. */
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-main.h"
#include "capture/gitdesc.h"

static char dir[64], path_env[8192];

static void sh(const char *fmt, const char *arg)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), fmt, arg, arg, arg, arg, arg, arg, arg, arg);
	ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

static char *slurp(const char *name)
{
	static char buf[4096];
	char path[256];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/xp-gitdesc-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	chmod(dir, 0755);
	snprintf(path_env, sizeof(path_env), "%s", getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
}

static void teardown(void)
{
	setenv("PATH", path_env, 1);
	sh("rm -rf %s", dir);
}

START_TEST(describes_the_programs_checkout)
{
	char script[256], *argv[] = { "/usr/bin/python3", "-X", "perf", script, "--steps", NULL };
	struct gitdesc g;

	sh("mkdir -p %s/repo/tools && cd %s/repo && git init -q . && echo 1 > tools/train.py &&"
	   " git add . && git -c user.name=t -c user.email=t@t commit -qm one && git tag v1.2", dir);
	snprintf(script, sizeof(script), "%s/repo/tools/train.py", dir);
	ck_assert_int_eq(gitdesc_take(argv, getuid(), getgid(), &g), 0);
	ck_assert_str_eq(g.describe, "v1.2");
	ck_assert_str_eq(g.dir + strlen(g.dir) - 11, "/repo/tools");
	sh("echo 2 > %s/repo/tools/train.py", dir);
	ck_assert_int_eq(gitdesc_take(argv, getuid(), getgid(), &g), 0);
	ck_assert_str_eq(g.describe, "v1.2-dirty");
	/* not a checkout, no such program, no command */
	sh("echo x > %s/prog", dir);
	snprintf(script, sizeof(script), "%s/prog", dir);
	argv[0] = script;
	ck_assert_int_eq(gitdesc_take(argv, getuid(), getgid(), &g), -ENOENT);
	ck_assert_str_eq(g.describe, "");
	argv[0] = "/no/such/program";
	ck_assert_int_eq(gitdesc_take(argv, getuid(), getgid(), &g), -ENOENT);
	ck_assert_int_eq(gitdesc_take(NULL, getuid(), getgid(), &g), -ENOENT);
	ck_assert(json_is_null(gitdesc_json(&g)));
}
END_TEST

/* A git wrapper first on PATH notes who runs it, then runs the real git. */
static void wrap_git(const char *body)
{
	char path[8400], wrapper[256];
	FILE *f;

	snprintf(wrapper, sizeof(wrapper), "%s/bin/git", dir);
	sh("mkdir -p %s/bin", dir);
	f = fopen(wrapper, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "#!/bin/sh\n%s\n", body);
	fclose(f);
	chmod(wrapper, 0755);
	snprintf(path, sizeof(path), "%s/bin:%s", dir, path_env);
	setenv("PATH", path, 1);
}

START_TEST(runs_as_the_user_without_the_repositorys_fsmonitor)
{
	char prog[256], body[1024], *argv[] = { prog, NULL }, want[64] = "";
	gid_t groups[64];
	int n = 64;
	struct passwd *pw = getpwuid(65534);
	struct gitdesc g;

	if (geteuid() != 0 || !pw) {
		printf("SKIP part: running git as another user needs root and uid 65534\n");
		return;
	}
	/* the user's checkout, whose config names a program in core.fsmonitor */
	sh("mkdir -p %s/repo && cd %s/repo && git init -q . && cp /bin/true prog && git add . &&"
	   " git -c user.name=t -c user.email=t@t commit -qm one && git tag v1.0 &&"
	   " printf '#!/bin/sh\\ntouch %s/FSMONITOR_RAN\\n' > %s/fsmon.sh && chmod 755 %s/fsmon.sh &&"
	   " git config core.fsmonitor %s/fsmon.sh && chown -R 65534:65534 %s/repo", dir);
	snprintf(body, sizeof(body), "{ id -u; id -G; echo \"$HOME\"; readlink /proc/self/fd/0;"
		 " env | grep -c '^SUDO_' ; } > %s/who.txt\nexec /usr/bin/git \"$@\"", dir);
	wrap_git(body);
	chmod(dir, 0777);
	snprintf(prog, sizeof(prog), "%s/repo/prog", dir);
	setenv("SUDO_USER", "someone", 1);      /* the caller's environment stays out */
	ck_assert_int_eq(gitdesc_take(argv, 65534, 65534, &g), 0);
	unsetenv("SUDO_USER");
	ck_assert_str_eq(g.describe, "v1.0");
	ck_assert_ptr_null(slurp("FSMONITOR_RAN"));
	ck_assert_int_ge(getgrouplist(pw->pw_name, 65534, groups, &n), 0);
	for (int i = 0; i < n; i++)
		snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%u", i ? " " : "",
			 (unsigned)groups[i]);
	ck_assert_ptr_nonnull(slurp("who.txt"));
	ck_assert_msg(strstr(slurp("who.txt"), "65534\n") == slurp("who.txt"), "%s", slurp("who.txt"));
	ck_assert_msg(strstr(slurp("who.txt"), "/dev/null\n0\n"), "%s", slurp("who.txt"));
	ck_assert_msg(strstr(slurp("who.txt"), pw->pw_dir), "%s", slurp("who.txt"));
	/* the groups line: the user's, not root's */
	ck_assert_msg(!strncmp(strchr(slurp("who.txt"), '\n') + 1, want, strlen(want)),
		      "want groups %s: %s", want, slurp("who.txt"));
}
END_TEST

START_TEST(a_git_that_hangs_is_killed_with_what_it_started)
{
	char prog[256], body[512], *argv[] = { prog, NULL };
	struct gitdesc g;
	char *pid_text, stat_path[64], state[256] = "";
	FILE *f;

	sh("echo x > %s/prog", dir);
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	snprintf(body, sizeof(body), "sleep 60 & echo $! > %s/sleeper.pid; wait", dir);
	wrap_git(body);
	ck_assert_int_eq(gitdesc_take(argv, getuid(), getgid(), &g), -ETIMEDOUT);
	ck_assert_str_eq(g.describe, "");
	pid_text = slurp("sleeper.pid");
	ck_assert_ptr_nonnull(pid_text);
	/* gone, or a zombie waiting for init: killed either way */
	snprintf(stat_path, sizeof(stat_path), "/proc/%d/stat", atoi(pid_text));
	for (int i = 0; i < 100; i++) {
		f = fopen(stat_path, "r");
		if (!f || !fgets(state, sizeof(state), f) || strstr(state, ") Z ")) {
			if (f)
				fclose(f);
			return;
		}
		fclose(f);
		usleep(10000);
	}
	ck_abort_msg("the sleep git started is still running: %s", state);
}
END_TEST

Suite *gitdesc_suite(void)
{
	Suite *s = suite_create("gitdesc");
	TCase *tc = tcase_create("gitdesc");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, describes_the_programs_checkout);
	tcase_add_test(tc, runs_as_the_user_without_the_repositorys_fsmonitor);
	tcase_add_test(tc, a_git_that_hangs_is_killed_with_what_it_started);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(gitdesc_suite)
