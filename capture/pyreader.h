/* pyreader.h - Python frames for CPU samples: a thread of xpcap that reads,
 * at the sampling rate, the interpreter frame chain of every thread of each
 * traced Python process from outside (process_vm_readv, as py-spy and
 * austin do; the target is never stopped), into run/pyframes.xpr:
 * XP_REC_PYSAMPLE per thread and tick, XP_REC_PYCODE once per code object,
 * XP_REC_PYINFO per process (how its frames were read, or why not;
 * runfmt_py.h), and with waits, XP_REC_PYWAIT where a thread read was
 * blocked (the call it waits in, pywait.h). Ingest gives each CPU sample
 * the chain of its thread read nearest in time and splices it in at the
 * interpreter's frames.
 *
 * The traced processes are the roots (the command, -p pids) and their
 * descendants, found in /proc every 250 ms. Under sudo the thread takes the
 * invoking user's credentials (its own, not the process's) before it reads
 * anything: the kernel then lets it read exactly the memory, maps and files
 * that user could (ptrace rules, dumpable, Yama); as root for root it drops
 * CAP_SYS_PTRACE (unless --record-privileged), so that a process that is
 * not dumpable stays unread, as the samplers drop its records.
 *
 *   struct pyreader_config c = { roots, nroots, freq, uid, gid, fd };
 *   pyreader_start(&p, &c);   // fd: pyframes.xpr, taken
 *   ...
 *   pyreader_stop(p);          // joins, writes, closes
 */
#ifndef XP_CAPTURE_PYREADER_H
#define XP_CAPTURE_PYREADER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct pyreader;

struct pyreader_config {
	const pid_t *roots;
	unsigned nroots;
	unsigned freq;                  /* reads per second of each thread (-F) */
	uid_t uid;                      /* the invoking user: read as them when */
	gid_t gid;                      /* running as root on their behalf */
	int fd;                         /* pyframes.xpr, open for writing */
	bool compress;                  /* zstd blocks (--compress) */
	bool record_privileged;         /* --record-privileged (plain root): also
					 * processes that are not dumpable */
	bool off;                       /* --no-python-frames: only say, per Python
					 * process, that its frames were not read */
	bool waits;                     /* waits come without a stack (perf switch
					 * records): after a thread's frames, the call
					 * it is blocked in (pywait.h) */
	bool roots_held;                /* the roots are a command held before its
					 * exec: no process yet is their descendant */
};

/* Starts the thread: 0 or -errno (fd closed either way). */
int pyreader_start(struct pyreader **out, const struct pyreader_config *c);
/* Stops and joins it, flushes and closes the stream: 0 or the first write
 * error. p may be NULL. */
int pyreader_stop(struct pyreader *p);

#endif
