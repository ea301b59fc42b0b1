/* pypath.h - Python file paths as a person reads them, the one place their
 * rules live. Where a line is named in a frame ("linear.py:134
 * Linear.forward", pyframe.h), the file's last component, with its package
 * for __init__.py and __main__.py ("nn/__init__.py"). Where files are listed
 * (report --by source), a library file from its package
 * ("transformers/models/gpt2/modeling_gpt2.py"), the standard library from
 * "python3.12/", the program's own files relative to the directory they all
 * share ("train.py", "model/layers.py").
 *
 *   puts(xp_pypath_base("/venv/site-packages/torch/nn/__init__.py"));  // "nn/__init__.py"
 *   struct xp_pyroot r;
 *   xp_pyroot_load(db, &r);                 // over the run's Python frames
 *   puts(xp_pypath_short(&r, "/home/u/proj/train.py"));   // "train.py"
 *   xp_pyroot_free(&r);
 */
#ifndef XP_PYPATH_H
#define XP_PYPATH_H

#include <stddef.h>
#include <sqlite3.h>

struct xp_pyroot {
	char *dir;                  /* common directory with its '/', or NULL */
	size_t len;
};

/* The common directory of the program's own files among the modules of the
 * run's Python-line frames. 0, -EIO or -ENOMEM. */
int xp_pyroot_load(sqlite3 *db, struct xp_pyroot *r);
/* The same from a list of paths (for tests and other callers). 0 or -ENOMEM. */
int xp_pyroot_from(const char *const *paths, size_t n, struct xp_pyroot *r);
/* The short form of path: a pointer into path, never NULL. */
const char *xp_pypath_short(const struct xp_pyroot *r, const char *path);
/* The file as a frame names it: a pointer into path, never NULL. */
const char *xp_pypath_base(const char *path);
/* 1 when path is a library's or the standard library's, not the program's. */
int xp_pypath_is_library(const char *path);
void xp_pyroot_free(struct xp_pyroot *r);

#endif
