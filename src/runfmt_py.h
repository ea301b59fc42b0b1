/* runfmt_py.h - Python stacks at launches: the records the injection library
 * writes into run/launch-<pid>.xpr beside XP_REC_LAUNCH, and ingest reads.
 *
 * At a launch-class CUDA call on a thread that runs Python, the library walks
 * that thread's interpreter frame chain and writes one XP_REC_PYSTACK (the
 * frames, innermost first, each a code object id and the offset of the
 * instruction it was executing). Each code object is written once per process
 * as XP_REC_PYCODE (file, qualified name, first line, the interpreter's own
 * line table); ingest turns (code, offset) into a line offline. Interpreter
 * facts (version, whether the walker knows it, why not) go once per process
 * as XP_REC_PYINFO.
 *
 * CPU samples: xpcap reads the frame chain of every thread of each traced
 * Python process from outside (process_vm_readv), at the sampling rate, and
 * writes each thread's chain as an XP_REC_PYSAMPLE into run/pyframes.xpr
 * (the same layout as XP_REC_PYSTACK, correlation_id 0); ingest gives each
 * CPU sample (and off-CPU interval) the chain of its thread read nearest in
 * time. Its code objects are XP_REC_PYCODE with XP_PYCODE_ID_SAMPLER set in
 * their ids (never equal to the library's), its interpreter facts an
 * XP_REC_PYINFO with XP_PYINFO_SAMPLER. Shares the conventions of runfmt.h (8-byte aligned
 * records, little-endian, CLOCK_MONOTONIC ns).
 *
 *   const struct xp_pystack *ps = (void *)(h + 1);          // h->type == XP_REC_PYSTACK
 *   const struct xp_pyframe *f = (const void *)(ps + 1);    // ps->nframes of them
 */
#ifndef XP_RUNFMT_PY_H
#define XP_RUNFMT_PY_H

#include "src/runfmt.h"

enum xp_py_record_type {
	XP_REC_PYSTACK = 9,         /* struct xp_pystack + frames: Python frames at a launch */
	XP_REC_PYCODE = 10,         /* struct xp_pycode + strings + line table: a code object */
	XP_REC_PYINFO = 11,         /* struct xp_pyinfo: the process's interpreter */
	XP_REC_AUTOGRAD = 12,       /* struct xp_autograd [+ node type]: PyTorch autograd at a launch */
	XP_REC_AUTOGRAD_INFO = 13,  /* struct xp_autograd_info + reason: what the library found */
	XP_REC_PYSAMPLE = 20,       /* struct xp_pystack + frames: a thread's Python frames read
				     * by xpcap at a sampling tick (pyframes.xpr) */
	XP_REC_PYWAIT = 21,         /* struct xp_pywait: the call that thread was blocked
				     * in at that read (pyframes.xpr) */
};

/* Loss reasons for XP_REC_PYSTACK (xp_lost.kind = XP_REC_PYSTACK). */
enum xp_py_lost_reason {
	XP_LOST_PY_UNSUPPORTED = 7, /* interpreter version/build the walker does not know */
	XP_LOST_PY_NO_THREAD = 8,   /* the launching thread has no Python thread state */
	XP_LOST_PY_UNREADABLE = 9,  /* frame chain failed a check mid-walk: stack dropped */
};

#define XP_PY_MAX_FRAMES 128        /* deeper chains keep the innermost 128 */

#define XP_PYFRAME_ENTRY 1u         /* frame entered from C: the first frame run by one
				     * _PyEval_EvalFrameDefault call (3.11+: the frame
				     * above a C-stack shim / is_entry; 3.10: every frame) */

struct xp_pyframe {
	uint64_t code_id;           /* xp_pycode.code_id of the frame's code object */
	uint32_t instr_offset;      /* bytes from the start of the code's bytecode to the
				     * instruction being executed (3.10: f_lasti * 2) */
	uint32_t flags;             /* XP_PYFRAME_* */
};

#define XP_PYSTACK_TRUNCATED 1u     /* the chain was deeper than XP_PY_MAX_FRAMES */
/* no frames follow (nframes 0): the launch named an earlier copy of its
 * stack (XP_STACK_BORROWED), whose key covers its Python frames, so they
 * are those of the latest stack of the same key in this stream */
#define XP_PYSTACK_BORROWED 2u

struct xp_pystack {
	uint64_t ts;                /* ns, the same as the launch's */
	uint64_t correlation_id;    /* the XP_REC_LAUNCH it belongs to (same pid) */
	uint32_t pid;               /* as in xp_launch */
	uint32_t tid;
	uint16_t nframes;           /* frames that follow, innermost first */
	uint16_t flags;             /* XP_PYSTACK_* */
	uint32_t key;               /* the launch's stack key (xp_user_regs_copy.key) when
				     * it was XP_STACK_KEYED or _BORROWED, else 0 */
	/* struct xp_pyframe frames[nframes] */
};

/* A normal user's waits have no stack (perf_event_paranoid 2 gives no
 * sample in the kernel): where a thread of a traced process was off CPU in
 * a system call when the reader read its frames, the reader also read
 * /proc/PID/task/TID/syscall and writes this after that XP_REC_PYSAMPLE
 * (same ts and thread). Ingest gives an off-CPU interval around ts pc as
 * its innermost native frame, under the Python frames of the same read. */
struct xp_pywait {
	uint64_t ts;                /* ns, the XP_REC_PYSAMPLE read of the thread */
	uint64_t pc;                /* user instruction pointer (the system call's return) */
	uint64_t sp;                /* user stack pointer */
	uint32_t pid;
	uint32_t tid;
	int32_t syscall;            /* system call number; -1: blocked outside one */
	uint32_t pad;               /* 0 */
};

struct xp_pycode {
	uint64_t code_id;           /* unique per process for the run (not reused when a
				     * code object dies and its address is reused) */
	uint32_t pid;
	uint32_t first_line;        /* co_firstlineno */
	uint16_t py_version;        /* 0x030a .. 0x030d: the line table's format */
	uint16_t filename_len;      /* UTF-8 bytes of co_filename, no NUL */
	uint16_t qualname_len;      /* UTF-8 bytes of co_qualname (3.10: co_name) */
	uint16_t pad;               /* 0 */
	uint32_t linetable_len;     /* bytes of co_linetable (3.10: co_linetable as well) */
	uint32_t pad2;              /* 0 */
	/* char filename[filename_len], char qualname[qualname_len],
	 * uint8_t linetable[linetable_len], then zero padding to 8 */
};

#define XP_PYINFO_SUPPORTED 1u      /* the walker knows this interpreter and is on */
#define XP_PYINFO_SAMPLER 2u        /* written by xpcap's frame reader (for CPU samples),
				     * not by the injection library; the reason says how
				     * it read the frames, or why it could not */

/* The code ids of xpcap's frame reader: apart from the library's. */
#define XP_PYCODE_ID_SAMPLER (1ull << 63)

struct xp_pyinfo {
	uint64_t ts;                /* ns, when the library looked */
	uint32_t pid;
	uint32_t py_hexversion;     /* PY_VERSION_HEX of the interpreter, 0 if none found */
	uint32_t flags;             /* XP_PYINFO_* */
	uint16_t reason_len;        /* bytes of a one-line reason that follow (why not supported) */
	uint16_t pad;               /* 0 */
	/* char reason[reason_len], then zero padding to 8 */
};

/* PyTorch's autograd at a launch (written after the launch's XP_REC_LAUNCH
 * and pystack). PyTorch numbers each autograd node as the forward op creates
 * it (per thread), and its engine runs the node in backward under that
 * number: a backward launch's node (seq, forward thread) names the forward
 * launches whose thread had just created that node (seq_next - 1 == seq). */
#define XP_AUTOGRAD_NODE 1u         /* a node ran on this thread: node_* and the type follow */
#define XP_AUTOGRAD_NODE_NAME_MAX 64 /* bytes of the node's type name kept */

struct xp_autograd {
	uint64_t correlation_id;    /* the XP_REC_LAUNCH it belongs to (same pid) */
	uint32_t tid;               /* the launch's */
	uint32_t flags;             /* XP_AUTOGRAD_* */
	uint64_t thread_id;         /* PyTorch's id of the launching thread
				     * (at::RecordFunction::currentThreadId), 0 when the
				     * thread has created no node */
	uint64_t seq_next;          /* at::sequence_number::peek(): the number the next
				     * node this thread creates takes */
	/* with XP_AUTOGRAD_NODE: struct xp_autograd_node, then its name */
};

/* The node that ran when the launch came (AddmmBackward0's apply). */
struct xp_autograd_node {
	uint64_t node_seq;          /* its sequence_nr (UINT64_MAX: AccumulateGrad, which
				     * no forward op made) */
	uint64_t node_thread;       /* thread_id of the thread that made it */
	uint16_t name_len;          /* bytes of its C++ type name that follow, as the ABI
				     * mangles it ("N5torch8autograd9generated14
				     * AddmmBackward0E"), then zero padding to 8 */
	uint16_t pad[3];            /* 0 */
};

#define XP_AUTOGRAD_INFO_ON 1u      /* libtorch's handles were found and the node's
				     * layout passed its checks: launches carry autograd */

struct xp_autograd_info {
	uint64_t ts;                /* when the library wrote this (the latest wins) */
	uint32_t pid;
	uint32_t flags;             /* XP_AUTOGRAD_INFO_* */
	uint64_t nodes;             /* backward launches whose node was read */
	uint64_t rejected;          /* node reads that failed the layout check */
	uint16_t reason_len;        /* bytes of a one-line reason that follow */
	uint16_t pad[3];
	/* char reason[reason_len], then zero padding to 8 */
};

#endif
