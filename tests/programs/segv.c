/* segv.c - spins a little, then dies of SIGSEGV: xpcap must exit 139. */
#include <signal.h>

#include "spin.h"

int main(void)
{
	spin_for(0.3);
	raise(SIGSEGV);
	return 0;
}
