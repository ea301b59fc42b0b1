/* exit7.c - spins a little, then exit(7): xpcap must exit 7 too. */
#include <stdlib.h>

#include "spin.h"

int main(void)
{
	spin_for(0.3);
	exit(7);
}
