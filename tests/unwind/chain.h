/* chain.h - a known call chain for the offline unwinder's test:
 * chain_outer -> chain_middle -> chain_inner -> chain_capture. outer,
 * inner and capture have CFI and no frame pointer (a frame-pointer walk
 * loses their callers); middle has a frame pointer and no CFI (like a JIT
 * trampoline), so the walk must fall back to frame pointers there. */
#ifndef XP_TEST_UNWIND_CHAIN_H
#define XP_TEST_UNWIND_CHAIN_H

#include <stddef.h>
#include <stdint.h>

#include "src/runfmt.h"

/* Fills regs and copies up to cap bytes of the stack from the innermost
 * function's sp (never past stack_end) into buf. Returns the chain depth. */
int chain_outer(struct xp_user_regs_copy *regs, uint8_t *buf, size_t cap, uint64_t stack_end);
int chain_middle(struct xp_user_regs_copy *regs, uint8_t *buf, size_t cap, uint64_t stack_end);
int chain_inner(struct xp_user_regs_copy *regs, uint8_t *buf, size_t cap, uint64_t stack_end);

#endif
