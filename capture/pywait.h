/* pywait.h - the call a blocked thread waits in, for a normal user's waits
 * (perf gives them no stack): /proc/PID/task/TID/syscall (system call
 * number, user sp and pc of a thread off CPU in the kernel; "running"
 * otherwise; ptrace read rights, checked at every read, which a user has
 * on its own dumpable processes) read by the Python frame reader right
 * after a thread's frames, into an XP_REC_PYWAIT. Bounded: only a thread
 * whose Python chain has not moved since its previous read (blocked, or in
 * a long C call; a thread running Python is never asked), through a file
 * kept open per thread (a pread, not an open), within a budget of reads a
 * second.
 *   struct pywait_cache *c = pywait_cache_new(1000, now);
 *   struct xp_pywait w;
 *   if (pywait_check(c, pid, tid, chain_hash, now, &w) == 1) ... blocked at w.pc
 *   pywait_cache_free(c);
 */
#ifndef XP_CAPTURE_PYWAIT_H
#define XP_CAPTURE_PYWAIT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "src/runfmt_py.h"

struct pywait_budget {
	uint64_t per_sec;           /* reads a second at most */
	uint64_t tokens;            /* reads left, times 1e9 */
	uint64_t at;                /* ns, when tokens were last added */
};

void pywait_budget_init(struct pywait_budget *b, uint64_t per_sec, uint64_t now);
/* Whether a read may be made now (one is taken if so). */
bool pywait_take(struct pywait_budget *b, uint64_t now);
/* Parses the text of /proc/.../syscall into w's syscall, sp and pc: 1 if
 * the thread is off CPU (in a system call, or -1: blocked outside one), 0
 * if it is running, -EBADMSG if the text is neither. */
int pywait_parse(const char *text, struct xp_pywait *w);
/* Reads it for thread tid of pid once (open, read, close): 1 blocked (w's
 * syscall, sp, pc set), 0 running, -errno when unreadable. */
int pywait_read(pid_t pid, uint32_t tid, struct xp_pywait *w);

struct pywait_cache;

/* NULL: no memory. */
struct pywait_cache *pywait_cache_new(uint64_t per_sec, uint64_t now);
/* Thread tid of pid was just read with Python chain chain (a hash): 1 if
 * it stood still since the thread's previous read and the kernel says the
 * thread is blocked (w's syscall, sp, pc set), else 0. */
int pywait_check(struct pywait_cache *c, pid_t pid, uint32_t tid, uint64_t chain, uint64_t now,
		 struct xp_pywait *w);
/* Reads made (pread calls), for the reader's own accounting. */
uint64_t pywait_reads(const struct pywait_cache *c);
void pywait_cache_free(struct pywait_cache *c);

#endif
