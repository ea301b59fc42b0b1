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
