/* gitdesc.h - `git describe` of the recorded program's checkout, taken by
 * xpcap at record time as the invoking user and written into meta.json
 * ("git": {"describe", "dir"}), so that xpcorr never runs a program on a
 * path that a run names (a received run's .git could name one in
 * core.fsmonitor). git runs in a child that has dropped to the user's
 * uid, gid and groups, with /dev/null for stdin, no system config, no
 * fsmonitor or hooks, and is killed (its process group) after 2 s.
 *
 *   struct gitdesc g;
 *   gitdesc_take(o.command, uid, gid, &g);      // before any thread exists
 *   json_object_set_new(root, "git", gitdesc_json(&g));
 */
#ifndef XP_CAPTURE_GITDESC_H
#define XP_CAPTURE_GITDESC_H

#include <jansson.h>
#include <limits.h>
#include <sys/types.h>

#define GITDESC_TIMEOUT_MS 2000

struct gitdesc {
	char describe[256];             /* "v1.2-3-gabcdef-dirty"; empty: none */
	char dir[PATH_MAX];             /* the program's directory, where git ran */
};

/* The program's directory: argv[0], or the .py script a python interpreter
 * runs, resolved against the current directory. 0 or -ENOENT. */
int gitdesc_program_dir(char *const *argv, char *dir, size_t len);
/* 0 with g filled, -ENOENT (no program dir, no checkout, no git),
 * -ETIMEDOUT (killed), or another -errno; g->describe is empty then. */
int gitdesc_take(char *const *argv, uid_t uid, gid_t gid, struct gitdesc *g);
/* {"describe": ..., "dir": ...}, or JSON null when there is none. */
json_t *gitdesc_json(const struct gitdesc *g);

#endif
