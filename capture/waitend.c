/* waitend.c - see waitend.h. */
#include "capture/waitend.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "capture/target.h"

int xp_waitend_open(struct xp_waitend *w)
{
	sigset_t set;

	memset(w, 0, sizeof(*w));
	w->sigfd = w->timerfd = w->failfd = -1;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	/* blocked before any thread or child exists, so all inherit it (the
	 * child unblocks before exec) */
	if (sigprocmask(SIG_BLOCK, &set, &w->old_mask))
		return -errno;
	w->blocked = true;
	w->sigfd = signalfd(-1, &set, SFD_CLOEXEC);
	return w->sigfd < 0 ? -errno : 0;
}

void xp_waitend_watch_fd(struct xp_waitend *w, int fd)
{
	w->failfd = fd;
}

void xp_waitend_set_child(struct xp_waitend *w, pid_t child)
{
	w->child = child;
}

int xp_waitend_arm_timer(struct xp_waitend *w, double seconds)
{
	struct itimerspec it = { 0 };

	/* seconds <= 0 disarms a timer armed before (and forgets its expiry) */
	if (seconds <= 0)
		return w->timerfd >= 0 && timerfd_settime(w->timerfd, 0, &it, NULL) ? -errno : 0;
	if (w->timerfd < 0)
		w->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (w->timerfd < 0)
		return -errno;
	it.it_value.tv_sec = (time_t)seconds;
	it.it_value.tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9);
	if (!it.it_value.tv_sec && !it.it_value.tv_nsec)
		it.it_value.tv_nsec = 1;
	return timerfd_settime(w->timerfd, 0, &it, NULL) ? -errno : 0;
}

void xp_waitend_watch_pids(struct xp_waitend *w, const pid_t *pids, unsigned n)
{
	w->npids = w->alive = n < XP_RECORD_MAX_PIDS ? n : XP_RECORD_MAX_PIDS;
	for (unsigned i = 0; i < w->npids; i++) {
		w->pidfds[i] = (int)syscall(SYS_pidfd_open, pids[i], 0);
		if (w->pidfds[i] < 0 && errno == ESRCH)
			w->alive--;     /* already gone since it was checked */
	}
}

bool xp_waitend_reap(struct xp_waitend *w)
{
	int status;

	if (w->child <= 0 || waitpid(w->child, &status, WNOHANG) != w->child)
		return false;
	w->exited = true;
	w->code = target_exit_code(status);
	w->child_signo = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	w->child = 0;
	return true;
}

/* One signal from the signalfd; -1 when there is nothing to act on. */
static int on_signal(struct xp_waitend *w)
{
	struct signalfd_siginfo si;

	if (read(w->sigfd, &si, sizeof(si)) != sizeof(si))
		return -1;
	if (si.ssi_signo == SIGCHLD)
		return xp_waitend_reap(w) ? XP_WAITEND_EXIT : -1;
	if (si.ssi_signo == SIGINT && w->child > 0 && ++w->interrupts == 1) {
		/* a terminal's Ctrl-C already reached the command's process
		 * group (SI_KERNEL); forward only a SIGINT sent with kill() */
		if (si.ssi_code != SI_KERNEL)
			kill(w->child, SIGINT);
		return XP_WAITEND_INTERRUPT;
	}
	w->stop_signo = (int)si.ssi_signo;
	return XP_WAITEND_SIGNAL;
}

enum xp_waitend_event xp_waitend_next(struct xp_waitend *w)
{
	struct pollfd pfd[3 + XP_RECORD_MAX_PIDS];

	for (;;) {
		nfds_t n = 0;
		int ev;

		if (w->npids && !w->alive)
			return XP_WAITEND_TARGETS_GONE;
		pfd[n++] = (struct pollfd){ .fd = w->sigfd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = w->timerfd, .events = POLLIN };
		for (unsigned i = 0; i < w->npids; i++)
			pfd[n++] = (struct pollfd){ .fd = w->pidfds[i], .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = w->failfd, .events = POLLIN };
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			return XP_WAITEND_ERROR;
		}
		if (pfd[1].revents)
			return XP_WAITEND_DURATION;
		if (pfd[n - 1].revents) {
			w->failfd = -1;         /* once */
			return XP_WAITEND_WRITE_FAILED;
		}
		for (unsigned i = 0; i < w->npids; i++) {
			if (w->pidfds[i] >= 0 && pfd[2 + i].revents) {
				close(w->pidfds[i]);
				w->pidfds[i] = -1;
				w->alive--;
			}
		}
		if (pfd[0].revents && (ev = on_signal(w)) >= 0)
			return (enum xp_waitend_event)ev;
	}
}

void xp_waitend_close(struct xp_waitend *w)
{
	if (w->sigfd >= 0)
		close(w->sigfd);
	if (w->timerfd >= 0)
		close(w->timerfd);
	for (unsigned i = 0; i < w->npids; i++)
		if (w->pidfds[i] >= 0)
			close(w->pidfds[i]);
	w->sigfd = w->timerfd = -1;
	w->npids = 0;
	if (w->blocked)
		sigprocmask(SIG_SETMASK, &w->old_mask, NULL);
	w->blocked = false;
}
