/* snapshot.c - see snapshot.h. Missing or vanished processes and files are
 * not errors: a snapshot takes what is there. */
#include "capture/snapshot.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/drain.h"
#include "capture/procmaps.h"
#include "capture/rundir.h"

#define MAX_PERF_MAPS 4096

static void on_proc_map(void *ctx, const struct xp_mmap *m, const char *path)
{
	drain_append_path(ctx, XP_REC_MMAP, m, sizeof(*m), path, m->path_len);
}

/* Under sudo another user's process is only counted: its mappings as
 * lost, no file of it opened. 1 if pid's maps were read. */
static int walk_one(struct drain *d, pid_t pid, uint64_t ts)
{
	int n;

	if (!drain_task_allowed(d, pid)) {
		n = procmaps_count_exec(pid);
		if (n > 0)
			drain_drop_privileged(d, XP_REC_MMAP, (uint64_t)n);
		return 0;
	}
	return procmaps_walk(pid, ts, on_proc_map, d) == 0;
}

unsigned snapshot_existing_maps(struct drain *d, const pid_t *pids, unsigned n, uint64_t ts)
{
	struct dirent *de;
	unsigned done = 0;
	DIR *dir;

	if (pids) {
		for (unsigned i = 0; i < n; i++)
			done += walk_one(d, pids[i], ts);
		return done;
	}
	dir = opendir("/proc");
	if (!dir)
		return 0;
	while ((de = readdir(dir)))
		if (atoi(de->d_name) > 0)
			done += walk_one(d, atoi(de->d_name), ts);
	closedir(dir);
	return done;
}

/* The owner of a live process, else fallback. */
static uid_t proc_owner(pid_t pid, uid_t fallback)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return stat(path, &st) ? fallback : st.st_uid;
}

unsigned snapshot_perf_maps(struct drain *d, const pid_t *pids, unsigned n,
			    struct rundir *rd)
{
	pid_t seen[MAX_PERF_MAPS];
	unsigned count = drain_pids(d, seen, MAX_PERF_MAPS), copied = 0;
	char src[64], name[64];

	for (unsigned i = 0; i < n && count < MAX_PERF_MAPS; i++)
		seen[count++] = pids[i];
	for (unsigned i = 0; i < count; i++) {
		snprintf(src, sizeof(src), "/tmp/perf-%d.map", (int)seen[i]);
		snprintf(name, sizeof(name), "perf-%d.map", (int)seen[i]);
		if (drain_task_allowed(d, seen[i]))     /* none: -ENOENT */
			copied += rundir_copy_user_file(rd, src, name, rd->uid,
							proc_owner(seen[i], rd->uid)) == 0;
	}
	return copied;
}
