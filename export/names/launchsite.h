/* launchsite.h - a launch stack named in a few words, the way the report's
 * sites read: the innermost Python line and the framework operation under
 * it ("train.py:42 forward › aten::addmm"; a backward launch ingest put
 * under its forward launch, "model.py:42 Block.forward › aten::linear
 * ‹backward: AddmmBackward0›"), else who launched it from a
 * thread with no Python ("autograd backward: AddmmBackward0 › aten::mm"),
 * else the innermost function of the program's own code ("launch_alpha()").
 * A runtime thread's launch that ingest placed at the line its Python
 * thread waited in (ingest/waitlines.h) says so: "train.py:59 main
 * ‹launched while it waited›".
 * Computed once per stack and kept: a trace names millions of events with
 * a few hundred stacks.
 *
 *   struct xp_sites *s;
 *   if (xp_sites_new(db, &s) == 0) {
 *           puts(xp_sites_get(s, stack_id));        // NULL: out of memory or a database error
 *           xp_sites_free(s);
 *   }
 */
#ifndef XP_LAUNCHSITE_H
#define XP_LAUNCHSITE_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

struct xp_sites;

/* 0, -EIO or -ENOMEM. */
int xp_sites_new(sqlite3 *db, struct xp_sites **out);
/* The site of an xp_stacks id ("?" for a stack with no frame); valid until
 * xp_sites_free. NULL on an error (out of memory, database). */
const char *xp_sites_get(struct xp_sites *s, int64_t stack_id);
void xp_sites_free(struct xp_sites *s);
/* The sites' own stack walker, for a caller that walks stacks itself
 * between xp_sites_get calls (never during one): one list of kernel names
 * read and one cache of frames, where a second walker would read both
 * again (0.1 s each at 1M kernels). Valid until xp_sites_free. */
struct xp_stackwalk *xp_sites_walk(struct xp_sites *s);
/* Sites named from here on by the innermost Python line of the program's
 * own files (outside site-packages and the standard library), where there
 * is one: `with torch.cuda.graph(g):` in the program, not torch's
 * graphs.py under it. */
void xp_sites_prefer_own(struct xp_sites *s);
/* Sites named from here on as the idle view names host causes
 * (framename.h): a perf-map frame "data.py:? load", a native function
 * "function (module)". */
void xp_sites_host_names(struct xp_sites *s);

/* "aten::mul.Tensor" of a PyTorch dispatcher frame "at::_ops::mul_Tensor::call(...)"
 * (an overload name starts upper-case), in op; 0 if sym is no such frame. */
int xp_framework_op(const char *sym, char *op, size_t len);

#endif
