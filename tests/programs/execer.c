/* execer.c PROGRAM [ARGS] - spins in before_exec, then execs PROGRAM in
 * the same process: both images must be sampled under one pid, and
 * xpcap must exit with PROGRAM's status. */
#include <unistd.h>

#include "spin.h"

__attribute__((noinline)) static void before_exec(void)
{
	spin_for(0.3);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	before_exec();
	execv(argv[1], argv + 1);
	return 127;
}
