/* waitend.h - waiting for the end of a recording: the command's exit
 * (SIGCHLD), the --duration timer, attached processes going away (pidfds)
 * and the signals that stop xpcap, all through one poll(). Signals are
 * blocked and read from a signalfd, so nothing runs in a signal handler.
 *   struct waitend w;
 *   waitend_open(&w);                       // before any thread or child
 *   waitend_set_child(&w, pid); waitend_arm_timer(&w, 10.0);
 *   while ((ev = waitend_next(&w)) == WAITEND_INTERRUPT) puts("again to stop");
 *   waitend_close(&w);
 */
#ifndef XP_CAPTURE_WAITEND_H
#define XP_CAPTURE_WAITEND_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "record.h"

enum waitend_event {
	WAITEND_EXIT,           /* the command exited: exited, code, child_signo set */
	WAITEND_DURATION,       /* the timer fired */
	WAITEND_TARGETS_GONE,   /* every watched pid exited */
	WAITEND_INTERRUPT,      /* first SIGINT while the command runs; it was
				 * forwarded unless it came from the terminal */
	WAITEND_SIGNAL,         /* stop now: stop_signo set (SIGTERM, SIGHUP, 2nd SIGINT) */
	WAITEND_WRITE_FAILED,   /* the fd of waitend_watch_fd became readable */
	WAITEND_ERROR,          /* poll failed */
};

struct waitend {
	int sigfd, timerfd;
	int failfd;                     /* borrowed: writing failed, or -1 */
	sigset_t old_mask;
	bool blocked;
	pid_t child;                    /* 0: none, or reaped */
	int pidfds[REC_MAX_PIDS];
	unsigned npids, alive;
	int interrupts;
	bool exited;                    /* the child's status is known */
	int code;                       /* its status as a shell reports it */
	int child_signo;                /* signal that killed it, or 0 */
	int stop_signo;                 /* WAITEND_SIGNAL: the signal that stops us */
};

/* Blocks SIGINT, SIGTERM, SIGHUP, SIGCHLD and opens the signalfd. */
int waitend_open(struct waitend *w);
void waitend_set_child(struct waitend *w, pid_t child);
/* seconds <= 0: no timer. */
int waitend_arm_timer(struct waitend *w, double seconds);
/* An eventfd that says writing the run failed: WAITEND_WRITE_FAILED once. */
void waitend_watch_fd(struct waitend *w, int fd);
/* Attached processes: WAITEND_TARGETS_GONE once all have exited. */
void waitend_watch_pids(struct waitend *w, const pid_t *pids, unsigned n);
enum waitend_event waitend_next(struct waitend *w);
/* Non-blocking: true if the child has exited (status fields set). */
bool waitend_reap(struct waitend *w);
/* Closes the fds and restores the signal mask; safe on a zeroed struct
 * after waitend_open failed. */
void waitend_close(struct waitend *w);

#endif
