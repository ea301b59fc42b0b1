/* xpmarker-test.c - libxpmarker-test.so: a stand-in for the CUPTI injection
 * library that exports only the correlation marker, shaped as marker.h
 * requires: never inlined, and a single 5-byte nop as first instruction so
 * the kernel can optimize the uprobe (patchable_function_entry would emit
 * five 1-byte nops, which it cannot). Naked: the arguments stay in rdi/rsi
 * for the uprobe and nothing else runs.
 *   xpcap record --cupti-lib libxpmarker-test.so -- marker-caller 100
 */
#include <stdint.h>

__attribute__((visibility("default"), noinline, naked))
void xpcap_correlation_marker(uint64_t correlation_id, uint32_t cbid)
{
	(void)correlation_id;
	(void)cbid;
	__asm__ volatile(".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n\t"   /* nopl 0x0(%rax,%rax,1) */
			 "ret");
}
