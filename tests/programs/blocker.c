/* blocker.c - blocks in known functions for known times, for the off-CPU
 * test: wait_on_pipe() reads a pipe that a helper thread writes after
 * PIPE_MS, sleep_a_while() sleeps SLEEP_MS in nanosleep, each ROUNDS times.
 * The blocked time it measured itself is written to the file given:
 *   blocker out.txt        # out.txt: "wait_on_pipe NS\nsleep_a_while NS\n"
 * The blocking syscalls are one call below the named functions, so the
 * frame-pointer walk (libc has no frame pointers) still shows them. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 5
#define PIPE_MS 80
#define SLEEP_MS 60

static int fds[2];

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void ms_sleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000l };

	while (nanosleep(&ts, &ts))
		;
}

static void *writer(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		ms_sleep(PIPE_MS);
		if (write(fds[1], "x", 1) != 1)
			break;
	}
	return NULL;
}

__attribute__((noinline)) static void do_read(void)
{
	char c;

	if (read(fds[0], &c, 1) != 1)
		perror("read");
}

__attribute__((noinline)) void wait_on_pipe(void)
{
	do_read();
	__asm__ volatile("" ::: "memory");   /* keep the call a call */
}

__attribute__((noinline)) static void do_sleep(void)
{
	ms_sleep(SLEEP_MS);
}

__attribute__((noinline)) void sleep_a_while(void)
{
	do_sleep();
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	long long t, in_pipe = 0, in_sleep = 0;
	pthread_t th;
	FILE *f;

	if (pipe(fds) || pthread_create(&th, NULL, writer, NULL))
		return 1;
	for (int i = 0; i < ROUNDS; i++) {
		t = now_ns();
		wait_on_pipe();
		in_pipe += now_ns() - t;
	}
	pthread_join(th, NULL);
	for (int i = 0; i < ROUNDS; i++) {
		t = now_ns();
		sleep_a_while();
		in_sleep += now_ns() - t;
	}
	f = fopen(argc > 1 ? argv[1] : "/dev/stdout", "w");
	if (!f)
		return 1;
	fprintf(f, "wait_on_pipe %lld\nsleep_a_while %lld\n", in_pipe, in_sleep);
	return fclose(f) ? 1 : 0;
}
