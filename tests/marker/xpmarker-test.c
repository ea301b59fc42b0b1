/* xpmarker-test.c - libxpmarker-test.so: a stand-in for the CUPTI injection
 * library that exports only the correlation marker, shaped as marker.h
 * requires (not inlined, a 5-byte nop first so the uprobe is optimizable).
 *   xpcap record --cupti-lib libxpmarker-test.so -- marker-caller 100
 */
#include <stdint.h>

__attribute__((visibility("default"), noinline, patchable_function_entry(5, 0)))
void xpcap_correlation_marker(uint64_t correlation_id, uint32_t cbid)
{
	/* the uprobe reads the arguments; keep them live and the call real */
	__asm__ volatile("" : : "r"(correlation_id), "r"(cbid) : "memory");
}
