/* chain-nocfi.c - built with a frame pointer and no unwind tables (see chain.h). */
#include "chain.h"

__attribute__((noinline))
int chain_middle(struct xp_user_regs_copy *regs, uint8_t *buf, size_t cap, uint64_t stack_end)
{
	return chain_inner(regs, buf, cap, stack_end) + 1;
}
