/* waitend.h - waiting for the end of a recording: the command's exit
 * (SIGCHLD), the --duration timer, attached processes going away (pidfds)
 * and the signals that stop xpcap, all through one poll(). Signals are
 * blocked and read from a signalfd, so nothing runs in a signal handler.
 *   struct xp_waitend w;
 *   xp_waitend_open(&w);                       // before any thread or child
 *   xp_waitend_set_child(&w, pid); xp_waitend_arm_timer(&w, 10.0);
 *   while ((ev = xp_waitend_next(&w)) == XP_WAITEND_INTERRUPT) puts("again to stop");
 *   xp_waitend_close(&w);
 */
#ifndef XP_CAPTURE_WAITEND_H
#define XP_CAPTURE_WAITEND_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "capture/record.h"

enum xp_waitend_event {
	XP_WAITEND_EXIT,           /* the command exited: exited, code, child_signo set */
	XP_WAITEND_DURATION,       /* the timer fired */
	XP_WAITEND_TARGETS_GONE,   /* every watched pid exited */
	XP_WAITEND_INTERRUPT,      /* first SIGINT while the command runs; it was
				 * forwarded unless it came from the terminal */
	XP_WAITEND_SIGNAL,         /* stop now: stop_signo set (SIGTERM, SIGHUP, 2nd SIGINT) */
	XP_WAITEND_WRITE_FAILED,   /* the fd of xp_waitend_watch_fd became readable */
	XP_WAITEND_ERROR,          /* poll failed */
};

struct xp_waitend {
	int sigfd, timerfd;
	int failfd;                     /* borrowed: writing failed, or -1 */
	sigset_t old_mask;
	bool blocked;
	pid_t child;                    /* 0: none, or reaped */
	int pidfds[XP_RECORD_MAX_PIDS];
	unsigned npids, alive;
	int interrupts;
	bool exited;                    /* the child's status is known */
	int code;                       /* its status as a shell reports it */
	int child_signo;                /* signal that killed it, or 0 */
	int stop_signo;                 /* XP_WAITEND_SIGNAL: the signal that stops us */
};

/* Blocks SIGINT, SIGTERM, SIGHUP, SIGCHLD and opens the signalfd. */
int xp_waitend_open(struct xp_waitend *w);
void xp_waitend_set_child(struct xp_waitend *w, pid_t child);
/* seconds <= 0: no timer (a timer armed before is disarmed); arming again
 * replaces the earlier expiry. */
int xp_waitend_arm_timer(struct xp_waitend *w, double seconds);
/* An eventfd that says writing the run failed: XP_WAITEND_WRITE_FAILED once. */
void xp_waitend_watch_fd(struct xp_waitend *w, int fd);
/* Attached processes: XP_WAITEND_TARGETS_GONE once all have exited. */
void xp_waitend_watch_pids(struct xp_waitend *w, const pid_t *pids, unsigned n);
enum xp_waitend_event xp_waitend_next(struct xp_waitend *w);
/* Non-blocking: true if the child has exited (status fields set). */
bool xp_waitend_reap(struct xp_waitend *w);
/* Closes the fds and restores the signal mask; safe on a zeroed struct
 * after xp_waitend_open failed. */
void xp_waitend_close(struct xp_waitend *w);

#endif
