/* hotspots.c - CPU-bound test target: hot_a does three times the work of
 * hot_b, alternating, so samples must split 3:1; then it dlopen()s
 * libhotlib.so (a mapping that appears after start) and spins in lib_spin
 * for 0.5 s. The seconds are CPU time the process ran, not wall time: as
 * many samples under any load (see spin.h).
 *   hotspots /path/to/libhotlib.so [seconds]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define UNIT 200000

static volatile unsigned long sink;

__attribute__((noinline)) void hot_a(void)
{
	for (unsigned long i = 0; i < 3 * UNIT; i++)
		sink += i ^ (sink >> 3);
}

__attribute__((noinline)) void hot_b(void)
{
	for (unsigned long i = 0; i < UNIT; i++)
		sink += i ^ (sink >> 3);
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 2 ? atof(argv[2]) : 2.0, end;
	void (*lib_spin)(double);
	void *lib;

	if (argc < 2) {
		fprintf(stderr, "usage: hotspots LIB [seconds]\n");
		return 2;
	}
	end = cpu_s() + seconds;
	while (cpu_s() < end) {
		hot_a();
		hot_b();
	}
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "hotspots: %s\n", dlerror());
		return 1;
	}
	lib_spin = (void (*)(double))dlsym(lib, "lib_spin");
	if (!lib_spin)
		return 1;
	lib_spin(0.5);
	dlclose(lib);
	return 0;
}
