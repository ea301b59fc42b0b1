/* stopsig.c - the ending signals caught while a run is ingested; see stopsig.h. */
#include "cmd/stopsig.h"

#include <string.h>

static const int stop_signals[XP_STOPSIG_COUNT] = {
	SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGUSR1, SIGUSR2,
};
static volatile int stop_flag;
static volatile sig_atomic_t stop_signo;

static void on_stop(int sig)
{
	stop_signo = sig;
	stop_flag = 1;
}

void xp_stopsig_catch(struct xp_stopsig *s)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	stop_flag = 0;
	stop_signo = 0;
	for (int i = 0; i < XP_STOPSIG_COUNT; i++) {
		sigaction(stop_signals[i], NULL, &s->old[i]);
		/* one the user ignores (nohup's SIGHUP) would not have ended
		 * the command: it stays ignored and the ingest goes on */
		if (s->old[i].sa_handler != SIG_IGN)
			sigaction(stop_signals[i], &sa, NULL);
	}
}

void xp_stopsig_restore(const struct xp_stopsig *s)
{
	for (int i = 0; i < XP_STOPSIG_COUNT; i++)
		sigaction(stop_signals[i], &s->old[i], NULL);
}

const volatile int *xp_stopsig_flag(void)
{
	return &stop_flag;
}

int xp_stopsig_caught(void)
{
	return stop_signo;
}

void xp_stopsig_reraise(void)
{
	if (stop_signo)
		raise(stop_signo);
}
