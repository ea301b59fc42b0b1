/* diffname.h - a folded launch stack (root first, ';' between frames) named
 * the way `xpcorr report` names a launch stack, for `xpcorr diff`, which
 * matches two runs' stacks by their folded text: the leaf-most Python frame
 * and the framework operation under it lead ("train.py:42 forward ›
 * aten::addmm | at::native::k<…>() <- ..."), else the framework thread that
 * launched it ("autograd backward: MmBackward0 › aten::mm | ..."); then the
 * first frames of the caller's code, leaf first, past the CUDA layers.
 *
 *   char name[1024];
 *   xp_diff_stack_name("main;train.py:42 forward;at::_ops::addmm::call(...);k_launch",
 *                      4, 1, name, sizeof(name));
 */
#ifndef XP_DIFFNAME_H
#define XP_DIFFNAME_H

#include <stddef.h>

/* frames: native frames shown; brief: C++ names short (elidename.h), as in
 * text reports. name is always NUL-terminated. */
void xp_diff_stack_name(const char *folded, unsigned frames, int brief, char *name, size_t len);

#endif
