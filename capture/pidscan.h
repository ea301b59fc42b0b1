/* pidscan.h - the pids in /proc that are new since the scan before, and
 * their parents: how the frame reader finds its command's descendants
 * without reading every process's stat file at every scan. */
#ifndef XP_CAPTURE_PIDSCAN_H
#define XP_CAPTURE_PIDSCAN_H

#include <stdbool.h>
#include <sys/types.h>

struct pidscan;

/* 0 or -ENOMEM. */
int pidscan_new(struct pidscan **out);
void pidscan_free(struct pidscan *s);

/* Every pid now taken as seen, none read: before a held command's exec. */
void pidscan_mark_all(struct pidscan *s);

/* Up to max pids that the scan before did not see, or that ours() says are
 * ours, into pids[] with their parents (-1: gone) into ppids[]; returns how
 * many. A pid is new again when reused after the counter wrapped. */
unsigned pidscan_next(struct pidscan *s, pid_t *pids, pid_t *ppids, unsigned max,
		      bool (*ours)(void *ctx, pid_t pid), void *ctx);

#endif
