/* cmd.h - the command table of both programs (in the manner of git and perf).
 * Each command lives in its stage as `int cmd_<name>(int argc, char **argv)`,
 * returns the process exit status, and is the only place that prints. */
#ifndef XP_CMD_H
#define XP_CMD_H

#include <stdio.h>

/* Exit codes shared by every command (documented in xpcap(1), xpcorr(1)). */
enum xp_exit {
	XP_EXIT_OK = 0,
	XP_EXIT_FAIL = 1,           /* the work failed (I/O, corrupt input) */
	XP_EXIT_USAGE = 2,          /* bad arguments or environment */
};

struct xp_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

/* argv[1] picks the command; --help/--version handled here. */
int xp_cmd_dispatch(const char *prog, const struct xp_cmd *cmds, int argc,
		    char **argv);

/* A misused option's one line, "xpcorr report: --by kernels: expected one of
 * kernel, stack, api" (who is "xpcorr report"): the index of value in names,
 * or -1 after printing it. */
int xp_cmd_choice(const char *who, const char *opt, const char *value,
		  const char *const *names, int n);
/* XP_EXIT_OK when path exists (or cannot be looked at: the open will say
 * why); else "xpcorr report: /x: no such run directory" and XP_EXIT_USAGE. */
int xp_cmd_need_path(const char *who, const char *path, const char *what);

/* Columns a text table fits: $COLUMNS, else the terminal's own width, else
 * 120 (a pipe or a file, to_file: -o FILE; what a reader's screen holds). */
unsigned xp_cmd_text_width(int to_file);

int cmd_record(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_ingest(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_job(int argc, char **argv);

#endif
