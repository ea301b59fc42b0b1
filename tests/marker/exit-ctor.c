/* exit-ctor.c - a library that needs libtorch_cpu.so (tests/marker/
 * fake-torch.c) and whose constructor ends the program: exit() while the
 * dlopen that loads it (and libtorch_cpu) still holds glibc's loader lock.
 * It waits EXIT_CTOR_MS first (default 300), time for the injection
 * library's threads to see libtorch_cpu mapped and reach for it. */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

uint64_t _ZN2at15sequence_number4peekEv(void);

__attribute__((constructor)) static void exit_now(void)
{
	const char *ms = getenv("EXIT_CTOR_MS");
	long n = ms ? atol(ms) : 300;

	nanosleep(&(struct timespec){ n / 1000, n % 1000 * 1000000L }, NULL);
	/* a call into libtorch_cpu keeps it NEEDED under --as-needed (0 here) */
	exit(3 + (int)_ZN2at15sequence_number4peekEv());
}
