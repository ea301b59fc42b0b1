/* pypath.c - short Python file paths, the one copy of their rules (pypath.h). */
#include "db/pypath.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "src/array.h"
#include "db/db_schema.h"

/* The part after an installed package root, or NULL. */
static const char *after_package_root(const char *path)
{
	static const char *const roots[] = { "/site-packages/", "/dist-packages/" };
	const char *best = NULL;

	for (size_t i = 0; i < 2; i++) {
		/* the last one: a venv inside another project's site-packages */
		for (const char *p = strstr(path, roots[i]); p; p = strstr(p + 1, roots[i]))
			if (!best || p > best)
				best = p + strlen(roots[i]);
	}
	if (best)
		return best;
	/* code torch.compile generated (/tmp/torchinductor_USER/xx/yyy.py): the
	 * framework's, not the program's */
	if ((best = strstr(path, "/torchinductor_")))
		return best + 1;
	/* the standard library: ".../lib/python3.12/x.py" -> "python3.12/x.py" */
	for (const char *p = strstr(path, "/lib/python"); p; p = strstr(p + 1, "/lib/python"))
		best = p + 5;
	return best;
}

const char *xp_pypath_base(const char *path)
{
	const char *slash = strrchr(path, '/'), *prev;

	if (!slash)
		return path;
	if (strcmp(slash + 1, "__init__.py") && strcmp(slash + 1, "__main__.py"))
		return slash + 1;
	for (prev = slash; prev > path && prev[-1] != '/'; prev--)
		;
	return prev;
}

int xp_pypath_is_library(const char *path)
{
	return after_package_root(path) != NULL;
}

/* Shortens r->dir to the directory it shares with path. */
static void share_dir(struct xp_pyroot *r, const char *path)
{
	size_t n = 0;

	while (n < r->len && path[n] == r->dir[n])
		n++;
	while (n > 0 && r->dir[n - 1] != '/')
		n--;
	r->len = n;
	r->dir[n] = '\0';
}

int xp_pyroot_from(const char *const *paths, size_t n, struct xp_pyroot *r)
{
	r->dir = NULL;
	r->len = 0;
	for (size_t i = 0; i < n; i++) {
		const char *p = paths[i], *slash;

		/* "<frozen ...>", "<string>", relative names: no directory to share */
		if (!p || p[0] != '/' || xp_pypath_is_library(p))
			continue;
		if (r->dir) {
			share_dir(r, p);
			continue;
		}
		slash = strrchr(p, '/');
		r->len = (size_t)(slash - p) + 1;
		if (!(r->dir = strndup(p, r->len)))
			return -ENOMEM;
	}
	return 0;
}

int xp_pyroot_load(sqlite3 *db, struct xp_pyroot *r)
{
	sqlite3_stmt *s;
	char **paths = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	r->dir = NULL;
	r->len = 0;
	if (sqlite3_prepare_v2(db, "SELECT DISTINCT m.value FROM xp_frames f JOIN StringIds m"
			       " ON m.id = f.module WHERE f.kind = ?", -1, &s, NULL) != SQLITE_OK)
		return -EIO;
	sqlite3_bind_int(s, 1, XP_FRAME_PYTHON);
	while (rc == 0 && sqlite3_step(s) == SQLITE_ROW) {
		const char *p = (const char *)sqlite3_column_text(s, 0);

		if (!p)
			continue;
		if (xp_array__reserve((void **)&paths, &cap, n + 1, sizeof(*paths), 16)) {
			rc = -ENOMEM;
			break;
		}
		if (!(paths[n] = strdup(p)))
			rc = -ENOMEM;
		else
			n++;
	}
	sqlite3_finalize(s);
	if (rc == 0)
		rc = xp_pyroot_from((const char *const *)paths, n, r);
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	return rc;
}

const char *xp_pypath_short(const struct xp_pyroot *r, const char *path)
{
	const char *lib = after_package_root(path);

	if (lib)
		return lib;
	if (r->dir && r->len && !strncmp(path, r->dir, r->len) && path[r->len])
		return path + r->len;
	return path;
}

void xp_pyroot_free(struct xp_pyroot *r)
{
	free(r->dir);
	r->dir = NULL;
	r->len = 0;
}
