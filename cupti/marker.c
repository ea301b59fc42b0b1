/* marker.c - xpcap_correlation_marker, the function xpcap's uprobe fires on
 * (contract in src/marker.h).
 *
 * Written in assembly so that its first instruction is exactly one 5-byte
 * nop (0f 1f 44 00 00): the kernel then optimizes the uprobe into a jump
 * instead of an int3 trap, about 4x cheaper per hit (DESIGN.md). gcc's
 * patchable_function_entry emits five 1-byte nops instead, which does not
 * qualify. Being an out-of-line asm function the compiler can neither
 * inline the call nor drop it; the uprobe reads correlation_id from rdi and
 * cbid from rsi, so the body only returns.
 *   xpcap_correlation_marker(cbdata->correlationId, XP_CBID(is_driver, cbid));
 * tests/test-cupti-exports.sh checks the first instruction with objdump. */
#include "cupti/xpcupti.h"

#if !defined(__x86_64__)
#error "the marker is written for x86-64"
#endif

__asm__(
	"	.text\n"
	"	.globl xpcap_correlation_marker\n"
	"	.type xpcap_correlation_marker, @function\n"
	"	.p2align 4\n"
	"xpcap_correlation_marker:\n"
	"	.cfi_startproc\n"
	"	.byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"   /* nopl 0x0(%rax,%rax,1) */
	"	ret\n"
	"	.cfi_endproc\n"
	"	.size xpcap_correlation_marker, .-xpcap_correlation_marker\n");
