/* forker.c - forks; parent and child both spin 1 s of CPU (spin.h), so
 * both processes of the tree must be sampled. */
#include <sys/wait.h>
#include <unistd.h>

#include "spin.h"

int main(void)
{
	int status = 0;
	pid_t pid = fork();

	if (pid < 0)
		return 1;
	spin_for(1.0);
	if (pid == 0)
		_exit(0);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
