/* abort.c - spins a little, then abort()s: xpcap must exit 134 and the
 * run must hold the samples taken before. */
#include <stdlib.h>

#include "spin.h"

int main(void)
{
	spin_for(0.3);
	abort();
}
