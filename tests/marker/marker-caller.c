/* marker-caller.c - calls xpcap_correlation_marker N times with known ids
 * (1000+i, cbid 0x80000000|i%7) from a known function, for the uprobe test.
 *   marker-caller 100
 */
#include <stdint.h>
#include <stdlib.h>

#include "marker.h"

void xpcap_correlation_marker(uint64_t correlation_id, uint32_t cbid);

__attribute__((noinline)) void launch_kernel_like(uint64_t i)
{
	xpcap_correlation_marker(1000 + i, XP_CBID(1, i % 7));
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;

	for (int i = 0; i < n; i++)
		launch_kernel_like((uint64_t)i);
	return 0;
}
