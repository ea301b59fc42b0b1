/* pywait.c - see pywait.h. The kernel prints "running" for a thread on CPU
 * or runnable (preempted: not a wait), "-1 SP PC" for one blocked outside
 * a system call, else "NR ARG1..ARG6 SP PC" in hex. */
#include "capture/pywait.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BURST 32ull                 /* reads a budget may save up */

void pywait_budget_init(struct pywait_budget *b, uint64_t per_sec, uint64_t now)
{
	b->per_sec = per_sec;
	b->tokens = BURST * 1000000000ull;
	b->at = now;
}

bool pywait_take(struct pywait_budget *b, uint64_t now)
{
	uint64_t dt = now > b->at ? now - b->at : 0;

	if (dt > 1000000000ull)
		dt = 1000000000ull;
	b->tokens += dt * b->per_sec;
	if (b->tokens > BURST * 1000000000ull)
		b->tokens = BURST * 1000000000ull;
	b->at = now;
	if (b->tokens < 1000000000ull)
		return false;
	b->tokens -= 1000000000ull;
	return true;
}

int pywait_parse(const char *text, struct xp_pywait *w)
{
	unsigned long long v[9];
	long nr;
	char *end;
	int n = 0;
	const char *p;

	if (!strncmp(text, "running", 7))
		return 0;
	errno = 0;
	nr = strtol(text, &end, 10);
	if (end == text || errno || nr < -1 || nr > 4095)
		return -EBADMSG;
	for (p = end; n < 9; n++) {
		while (*p == ' ')
			p++;
		if (strncmp(p, "0x", 2))
			break;
		v[n] = strtoull(p, &end, 16);
		if (end == p + 2)
			return -EBADMSG;
		p = end;
	}
	while (*p == ' ' || *p == '\n')
		p++;
	/* -1: sp and pc; a system call: six arguments, sp and pc */
	if (*p || n != (nr == -1 ? 2 : 8))
		return -EBADMSG;
	w->syscall = (int32_t)nr;
	w->sp = v[n - 2];
	w->pc = v[n - 1];
	return 1;
}

int pywait_read(pid_t pid, uint32_t tid, struct xp_pywait *w)
{
	char path[64], buf[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/task/%" PRIu32 "/syscall", (int)pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n <= 0)
		return n < 0 ? (int)n : -EBADMSG;
	buf[n] = '\0';
	return pywait_parse(buf, w);
}

#define CACHE_THREADS 64                /* threads followed; the least recent goes */

struct entry {
	pid_t pid;                      /* 0: free */
	uint32_t tid;
	int fd;                         /* its syscall file, -1 until needed */
	uint64_t chain;                 /* its Python chain at its previous read */
	uint64_t seen;                  /* ns, that read */
};

struct pywait_cache {
	struct pywait_budget budget;
	struct entry e[CACHE_THREADS];
	uint64_t reads;
};

struct pywait_cache *pywait_cache_new(uint64_t per_sec, uint64_t now)
{
	struct pywait_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	pywait_budget_init(&c->budget, per_sec, now);
	for (int i = 0; i < CACHE_THREADS; i++)
		c->e[i].fd = -1;
	return c;
}

static void forget(struct entry *e)
{
	if (e->fd >= 0)
		close(e->fd);
	memset(e, 0, sizeof(*e));
	e->fd = -1;
}

/* The thread's entry; a new one (in place of the least recent) when
 * *fresh. */
static struct entry *entry_of(struct pywait_cache *c, pid_t pid, uint32_t tid, bool *fresh)
{
	struct entry *old = &c->e[0];

	*fresh = false;
	for (int i = 0; i < CACHE_THREADS; i++) {
		if (c->e[i].pid == pid && c->e[i].tid == tid)
			return &c->e[i];
		if (c->e[i].seen < old->seen)
			old = &c->e[i];
	}
	forget(old);
	old->pid = pid;
	old->tid = tid;
	*fresh = true;
	return old;
}

/* pread of the kept file: as pywait_read. */
static int read_kept(struct entry *e, struct xp_pywait *w)
{
	char path[64], buf[256];
	ssize_t n;

	if (e->fd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/task/%" PRIu32 "/syscall", (int)e->pid, e->tid);
		if ((e->fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			return -errno;
	}
	n = pread(e->fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return n < 0 ? -errno : -EBADMSG;
	buf[n] = '\0';
	return pywait_parse(buf, w);
}

int pywait_check(struct pywait_cache *c, pid_t pid, uint32_t tid, uint64_t chain, uint64_t now,
		 struct xp_pywait *w)
{
	bool fresh;
	struct entry *e = entry_of(c, pid, tid, &fresh);
	bool still = !fresh && e->chain == chain;
	int r;

	e->chain = chain;
	e->seen = now;
	/* a thread that ran Python since its last read is not waiting */
	if (!still || !pywait_take(&c->budget, now))
		return 0;
	c->reads++;
	r = read_kept(e, w);
	if (r < 0)
		forget(e);      /* gone, or no longer readable: asked afresh */
	return r == 1;
}

uint64_t pywait_reads(const struct pywait_cache *c)
{
	return c->reads;
}

void pywait_cache_free(struct pywait_cache *c)
{
	if (!c)
		return;
	for (int i = 0; i < CACHE_THREADS; i++)
		forget(&c->e[i]);
	free(c);
}
