/* secretspin.c - holds a line on its stack while it spins and naps, for
 * the test of privileged tasks (record_test.py privileged). Run plainly it
 * holds a public marker; a setuid copy reads a file that only its owner
 * may read; -nodump first makes itself non-dumpable (prctl). It prints its
 * ids so the test knows the setuid bit took effect.
 *   secretspin SECONDS                # holds "xpsec-public-marker"
 *   secretspin SECONDS FILE           # holds FILE's first line
 *   secretspin SECONDS -nodump        # holds "xpsec-nodump-marker"
 *   secretspin SECONDS -redump        # the same, dumpable again halfway
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "spin.h"

/* main's line stays live in the frame above: within any stack copy. Runs
 * 2/3 of SECONDS on a CPU (what 2 ms spins and 1 ms naps give an idle
 * machine), as many samples under any load (spin.h) */
__attribute__((noinline)) static void hold(const char *line, double seconds)
{
	struct timespec nap = { 0, 1000000 };
	double end = spin_cpu_now() + seconds * 2 / 3;

	while (spin_cpu_now() < end) {
		spin_for(0.002);
		nanosleep(&nap, NULL);   /* off-CPU intervals too */
		spin_sink += (unsigned char)line[0];
	}
}

int main(int argc, char **argv)
{
	char line[64];
	int redump;
	FILE *f;

	if (argc < 2)
		return 2;
	memset(line, 0, sizeof(line));
	redump = argc > 2 && !strcmp(argv[2], "-redump");
	if (argc > 2 && (!strcmp(argv[2], "-nodump") || redump)) {
		if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
			return 3;
		snprintf(line, sizeof(line), "%s-%s", "xpsec", "nodump-marker");
	} else if (argc > 2) {
		f = fopen(argv[2], "r");
		if (!f || !fgets(line, sizeof(line), f)) {
			perror(argv[2]);
			return 3;
		}
		fclose(f);
		line[strcspn(line, "\n")] = '\0';
	} else {
		snprintf(line, sizeof(line), "%s-%s", "xpsec", "public-marker");
	}
	printf("uid=%d euid=%d held=%zu\n", (int)getuid(), (int)geteuid(), strlen(line));
	fflush(stdout);
	if (redump) {
		/* what it held so far must not leave with the samples read later */
		hold(line, atof(argv[1]) / 2);
		if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
			return 3;
		hold(line, atof(argv[1]) / 2);
		return 0;
	}
	hold(line, atof(argv[1]));
	return 0;
}
