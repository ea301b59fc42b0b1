/* forkmany.c N - forks N children at once; each spins 50 ms and exits with
 * its index mod 3; the parent reaps them all and exits 0 if every status
 * came back. Every child must be followed (fork, samples, exit). */
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spin.h"

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 50, bad = 0;

	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			spin_for(0.05);
			_exit(i % 3);
		}
	}
	for (int i = 0; i < n; i++) {
		int status;

		if (wait(&status) < 0 || !WIFEXITED(status))
			bad++;
	}
	return bad ? 1 : 0;
}
