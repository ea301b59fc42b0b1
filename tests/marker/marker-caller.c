/* marker-caller.c - calls xpcap_correlation_marker N times with known ids
 * (1000+i, cbid 0x80000000|i%7) from a known function, for the uprobe test.
 * The calls are made 16 KiB below main's frame, so that a dwarf-mode stack
 * copy of the default 8192 bytes is never cut short by the stack's top.
 *   marker-caller 100
 */
#include <stdint.h>
#include <stdlib.h>

#include "src/marker.h"

void xpcap_correlation_marker(uint64_t correlation_id, uint32_t cbid);

__attribute__((noinline)) void launch_kernel_like(uint64_t i)
{
	xpcap_correlation_marker(1000 + i, XP_CBID(1, i % 7));
}

__attribute__((noinline)) static void launch_all(int n)
{
	volatile char room[16384];

	/* touch every page: BPF cannot fault a never-used stack page in */
	for (unsigned i = 0; i < sizeof(room); i += 64)
		room[i] = 0;
	for (int i = 0; i < n; i++)
		launch_kernel_like((uint64_t)i);
	room[sizeof(room) - 1] = room[0];
}

int main(int argc, char **argv)
{
	launch_all(argc > 1 ? atoi(argv[1]) : 100);
	return 0;
}
