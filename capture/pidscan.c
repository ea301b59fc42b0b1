/* pidscan.c - the pids in /proc new since the scan before (pidscan.h).
 * One bit a possible pid for the scan before and one for this one: "below
 * the largest pid seen" would call a pid reused after the counter wraps
 * old, and its process would never be read. */
#include "capture/pidscan.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PID_MAX_LIMIT 4194304u          /* the kernel's bound on 64-bit */

struct pidscan {
	uint32_t limit;                 /* pids below it have bits */
	uint64_t *before, *now;
};

static uint32_t pid_limit(void)
{
	char buf[32] = "";
	long v = 0;
	int fd = open("/proc/sys/kernel/pid_max", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf) - 1) > 0)
			v = strtol(buf, NULL, 10);
		close(fd);
	}
	return v > 0 && v <= (long)PID_MAX_LIMIT ? (uint32_t)v : PID_MAX_LIMIT;
}

int pidscan_new(struct pidscan **out)
{
	struct pidscan *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->limit = pid_limit();
	s->before = calloc(s->limit / 64 + 1, sizeof(uint64_t));
	s->now = calloc(s->limit / 64 + 1, sizeof(uint64_t));
	if (!s->before || !s->now) {
		pidscan_free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

void pidscan_free(struct pidscan *s)
{
	if (!s)
		return;
	free(s->before);
	free(s->now);
	free(s);
}

static bool was_seen(const struct pidscan *s, long pid)
{
	return (uint64_t)pid < s->limit && s->before[pid / 64] >> (pid % 64) & 1;
}

static void mark(struct pidscan *s, long pid)
{
	if ((uint64_t)pid < s->limit)
		s->now[pid / 64] |= 1ull << (pid % 64);
}

/* This scan becomes the one before. */
static void turn(struct pidscan *s)
{
	uint64_t *t = s->before;

	s->before = s->now;
	s->now = t;
	memset(s->now, 0, (s->limit / 64 + 1) * sizeof(uint64_t));
}

static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd, ppid;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return -1;
	return (pid_t)ppid;
}

/* Each pid of /proc in turn, -1 at the end. */
static long next_pid(DIR *dir)
{
	struct dirent *d;

	while (dir && (d = readdir(dir))) {
		char *end;
		long pid = strtol(d->d_name, &end, 10);

		if (!*end && pid > 0)
			return pid;
	}
	return -1;
}

void pidscan_mark_all(struct pidscan *s)
{
	DIR *dir = opendir("/proc");

	for (long pid; (pid = next_pid(dir)) > 0;)
		mark(s, pid);
	if (dir)
		closedir(dir);
	turn(s);
}

unsigned pidscan_next(struct pidscan *s, pid_t *pids, pid_t *ppids, unsigned max,
		      bool (*ours)(void *ctx, pid_t pid), void *ctx)
{
	DIR *dir = opendir("/proc");
	unsigned n = 0;
	long pid;

	/* pids past max stay unmarked: new again at the next scan */
	while (n < max && (pid = next_pid(dir)) > 0) {
		mark(s, pid);
		if (was_seen(s, pid) && !ours(ctx, (pid_t)pid))
			continue;       /* seen before and not ours: its parent is old */
		pids[n] = (pid_t)pid;
		ppids[n] = parent_of((pid_t)pid);
		n++;
	}
	if (dir)
		closedir(dir);
	turn(s);
	return n;
}
