/* cmd.c - command dispatch shared by xpcap and xpcorr. */
#include "cmd/cmd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/runfmt.h"

static void usage(FILE *out, const char *prog, const struct xp_cmd *cmds)
{
	fprintf(out, "usage: %s <command> [options] [args]\n\ncommands:\n", prog);
	for (const struct xp_cmd *c = cmds; c->name; c++)
		fprintf(out, "  %-10s %s\n", c->name, c->summary);
	fprintf(out, "\n'%s <command> --help' describes a command; man %s(1) has the rest.\n",
		prog, prog);
}

int xp_cmd_dispatch(const char *prog, const struct xp_cmd *cmds, int argc,
		    char **argv)
{
	if (argc < 2) {
		usage(stderr, prog, cmds);
		return XP_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout, prog, cmds);
		return XP_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("%s %s (run format %d)\n", prog, XP_VERSION, XP_FORMAT_VERSION);
		return XP_EXIT_OK;
	}
	for (const struct xp_cmd *c = cmds; c->name; c++)
		if (!strcmp(argv[1], c->name))
			return c->fn(argc - 1, argv + 1);
	fprintf(stderr, "%s: '%s' is not a command; see '%s --help'\n", prog, argv[1], prog);
	return XP_EXIT_USAGE;
}

int xp_cmd_choice(const char *who, const char *opt, const char *value,
		  const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(value, names[i]))
			return i;
	fprintf(stderr, "%s: --%s %s: expected one of ", who, opt, value);
	for (int i = 0; i < n; i++)
		fprintf(stderr, "%s%s", i ? ", " : "", names[i]);
	fputc('\n', stderr);
	return -1;
}

int xp_cmd_need_path(const char *who, const char *path, const char *what)
{
	struct stat sb;

	if (stat(path, &sb) == 0 || (errno != ENOENT && errno != ENOTDIR))
		return XP_EXIT_OK;      /* other errors: the open says what they are */
	fprintf(stderr, "%s: %s: no such %s\n", who, path, what);
	return XP_EXIT_USAGE;
}

unsigned xp_cmd_text_width(int to_file)
{
	const char *env = getenv("COLUMNS");
	struct winsize ws;
	long v;

	if (env && (v = strtol(env, NULL, 10)) >= 40 && v <= 100000)
		return (unsigned)v;
	if (!to_file && isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 &&
	    ws.ws_col >= 40)
		return ws.ws_col;
	return 120;
}
