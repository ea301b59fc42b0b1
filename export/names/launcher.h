/* launcher.h - who launched GPU work whose stack has no Python frame: a
 * thread of the framework (autograd's backward engine, NCCL/c10d, XLA's
 * runtime), a native thread of the program, or a stack copy that ended
 * before it reached the Python code. The report names such sites by it
 * ("autograd backward: AddmmBackward0") and its footer gives the reason
 * with its remedy.
 *
 *   struct xp_launcher_scan sc;
 *   xp_launcher_begin(&sc);
 *   for each frame, leaf first: xp_launcher_frame(&sc, kind, sym, module);
 *   enum xp_launcher who = xp_launcher_end(&sc);     // sc.what: "AddmmBackward0"
 */
#ifndef XP_LAUNCHER_H
#define XP_LAUNCHER_H

#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>

enum xp_launcher {
	XP_LAUNCHER_PYTHON,         /* a Python frame is on the stack */
	XP_LAUNCHER_AUTOGRAD,       /* PyTorch's autograd engine thread (backward) */
	XP_LAUNCHER_NCCL,           /* NCCL, c10d's ProcessGroupNCCL or DDP's reducer */
	XP_LAUNCHER_XLA,            /* XLA's runtime (JAX, torch_xla) */
	XP_LAUNCHER_TRUNCATED,      /* the Python runtime is there, or the stack does not
				     * reach a thread's start: the copy ended too soon */
	XP_LAUNCHER_NATIVE,         /* a native thread of the program, from its start */
	XP_LAUNCHER_NONE,           /* no stack */
	XP_LAUNCHER_WAITED,         /* a thread without Python, placed by ingest at the line
				     * its Python thread waited in (ingest/waitlines.h) */
	XP_LAUNCHER_KINDS
};

struct xp_launcher_scan {
	int python, autograd, nccl, xla, interpreter, frames;
	int waited;                 /* the note of a launch placed at a waiting line */
	int rooted;                 /* the root-most frame starts a thread or the program */
	char what[96];              /* after end: the autograd node, NCCL call or the
				     * native thread's function ("" if unknown) */
	char node[96];              /* the leaf-most autograd node seen */
	char root_fn[96];           /* the root-most function of the program seen */
	char bucket[24];            /* "bucket 2" from a DDP note frame, else "" */
	char backward[120];         /* the note "‹backward: AddmmBackward0›" of a backward
				     * launch (ingest/backward.h), else "" */
};

/* Whether a frame is ingest's note of a backward launch's autograd node,
 * "‹backward: AddmmBackward0›"; the node's name into node (may be NULL). */
int xp_backward_note(int kind, const char *sym, char *node, size_t len);

void xp_launcher_begin(struct xp_launcher_scan *s);
/* One frame, leaf first (sym and module may be NULL). */
void xp_launcher_frame(struct xp_launcher_scan *s, int kind, const char *sym, const char *module);
enum xp_launcher xp_launcher_end(struct xp_launcher_scan *s);
/* "autograd backward", "NCCL", "XLA runtime", ...: a site's prefix. */
const char *xp_launcher_label(enum xp_launcher who);
/* "autograd", "nccl", ...: the key in json. */
const char *xp_launcher_key(enum xp_launcher who);
/* Why GPU work launched so has no Python frame, and what to do about it,
 * into buf; inproc: the run's launch stacks were the library's 64 KiB copies. */
void xp_launcher_why(enum xp_launcher who, int inproc, char *buf, size_t len);
/* GPU ns of rows (a prepared statement yielding (stack_id, gpu_ns), bound,
 * not stepped; stepped to the end, not finalized) by who launched them,
 * into ns[XP_LAUNCHER_KINDS]. 0, -EIO. */
int xp_launcher_shares(sqlite3 *db, sqlite3_stmt *rows, int64_t *ns);
/* The run's launch stacks were copied by the injection library. */
int xp_launcher_inproc(sqlite3 *db);

#endif
