/* procrank.c - see procrank.h. */
#include "capture/procrank.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/jobrank.h"

/* More than any launcher's environment; a larger one is read this far. */
#define ENVIRON_MAX (1u << 20)

/* The environment xp_job_rank's getter reads (the drain thread's). */
static _Thread_local const char *env;
static _Thread_local size_t env_len;

/* getenv over env: its NUL-separated "NAME=value" entries. */
static char *env_get(const char *name)
{
	size_t n = strlen(name);

	for (const char *p = env; p < env + env_len; p += strlen(p) + 1)
		if (!strncmp(p, name, n) && p[n] == '=')
			return (char *)(p + n + 1);
	return NULL;
}

/* pid's environ, NUL-terminated, into *out (*len bytes before the NUL). */
static int read_environ(pid_t pid, char **out, size_t *len)
{
	size_t cap = 16384, n = 0;
	char path[64], *buf = NULL, *grown;
	ssize_t got = 1;
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return -errno;
	while (got > 0 && n < ENVIRON_MAX) {
		if (n + 1 >= cap || !buf) {
			cap = buf ? cap * 2 : cap;
			if (!(grown = realloc(buf, cap + 1))) {
				err = -ENOMEM;
				break;
			}
			buf = grown;
		}
		got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			got = 1;
		else if (got < 0)
			err = -errno;
		else
			n += (size_t)got;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

int procrank_read(pid_t pid, struct xp_gpu_rank *r)
{
	char *buf = NULL;
	size_t len = 0;
	int err, found;

	if ((err = read_environ(pid, &buf, &len)) < 0)
		return err;
	env = buf;
	env_len = len;
	found = xp_job_rank(env_get, r);
	env = NULL;
	free(buf);
	if (found)
		r->pid = (uint32_t)pid;
	return found;
}

void procranks_note(struct procranks *R, pid_t pid)
{
	struct xp_gpu_rank r;
	unsigned i;

	if (procrank_read(pid, &r) != 1)
		return;
	for (i = 0; i < R->n && R->v[i].pid != r.pid; i++)
		;
	if (i < PROCRANKS_MAX) {
		R->v[i] = r;
		R->n += i == R->n;
	}
}
