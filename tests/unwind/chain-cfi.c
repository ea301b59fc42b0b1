/* chain-cfi.c - built with CFI and without frame pointers (see chain.h). */
#include "chain.h"

/* Reads the stack as raw memory: the frames above hold sanitizer red zones
 * that an instrumented copy would report. */
__attribute__((noinline, no_sanitize_address))
static int chain_capture(struct xp_user_regs_copy *regs, uint8_t *buf, size_t cap,
			 uint64_t stack_end)
{
	uint64_t ip, sp, bp;
	size_t n;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	n = stack_end - sp < cap ? (size_t)(stack_end - sp) : cap;
	n &= ~(size_t)7;
	for (size_t i = 0; i < n; i += 8)
		*(uint64_t *)(buf + i) = *(volatile const uint64_t *)(sp + i);
	*regs = (struct xp_user_regs_copy){ .ip = ip, .sp = sp, .bp = bp, .size = (uint32_t)n };
	return 1;
}

/* "+ 1" after each call: no tail calls, every function keeps its frame */
__attribute__((noinline))
int chain_inner(struct xp_user_regs_copy *regs, uint8_t *buf, size_t cap, uint64_t stack_end)
{
	return chain_capture(regs, buf, cap, stack_end) + 1;
}

__attribute__((noinline))
int chain_outer(struct xp_user_regs_copy *regs, uint8_t *buf, size_t cap, uint64_t stack_end)
{
	return chain_middle(regs, buf, cap, stack_end) + 1;
}
