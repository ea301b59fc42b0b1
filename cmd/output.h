/* output.h - a command's -o FILE: never one of the command's inputs, and
 * never half written. A regular file (or a new name) is written to a
 * temporary file made exclusively in FILE's directory and renamed onto
 * FILE when the command succeeds, removed when it fails: a failed export
 * leaves FILE as it was, and a reader never sees a partial one. A device,
 * FIFO or symbolic link (-o /dev/stdout), and a file in a directory where
 * no file can be made, are written in place, as before.
 * Refused before anything is written: FILE that is an input (a database
 * file, --input's file) or a file of an input run directory (its
 * xpcorr.db, its streams), by any path or link.
 *
 *   struct xp_cmd_out out;
 *   const char *inputs[] = { run };
 *   if ((rc = xp_cmd_out_open(&out, "xpcorr report", path, inputs, 1)))
 *           return rc;                       // said why
 *   ... write to out.f ...
 *   rc = xp_cmd_out_close(&out, rc);         // renamed when rc is XP_EXIT_OK
 */
#ifndef XP_CMD_OUTPUT_H
#define XP_CMD_OUTPUT_H

#include <stdio.h>

struct xp_cmd_out {
	FILE *f;                    /* where to write: stdout when path is NULL */
	const char *path;           /* -o FILE, or NULL */
	int dirfd;                  /* FILE's directory while a temporary file is open, else -1 */
	const char *name;           /* FILE's last component, in dirfd */
	char tmp[96];               /* the temporary file's name in dirfd, "" when none */
};

/* Opens -o path (stdout when NULL) after checking it is none of the n
 * inputs (run directories or files, as given on the command line):
 * XP_EXIT_OK, or the exit status after one line from who on stderr. */
int xp_cmd_out_open(struct xp_cmd_out *o, const char *who, const char *path,
		    const char *const *inputs, int n);
/* Closes o: on rc == XP_EXIT_OK the temporary file becomes path (rc, or
 * XP_EXIT_FAIL after saying why when that fails); otherwise it is removed
 * and rc returned. Safe on an o that did not open. */
int xp_cmd_out_close(struct xp_cmd_out *o, int rc);

#endif
