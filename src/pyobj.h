/* pyobj.h - reading a CPython interpreter's objects with process_vm_readv,
 * fault-free, in this process or another: what both frame walkers share
 * (cupti/pyframes.c in the launching process, capture/pyreader.c from
 * xpcap). A code object becomes an XP_REC_PYCODE payload (runfmt_py.h);
 * 3.13's published _Py_DebugOffsets are checked against the table.
 *
 *   struct xp_pyproc pp = { pid, hexversion, &table[minor - 10], types... };
 *   struct xp_pycode_src src;
 *   if (!xp_pycode_probe(&pp, code, &src)) {          // src.need: payload bytes at most
 *       void *buf = room_for(src.need);
 *       len = xp_pycode_fill(&pp, &src, id, buf);    // bytes, or -errno
 *   }
 */
#ifndef XP_PYOBJ_H
#define XP_PYOBJ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "src/pyoffsets.h"

#define XP_PYCODE_RECORD_MAX (256u << 10)  /* larger code records are not made */
#define XP_PYSTR_MAX_BYTES 4096u           /* UTF-8 bytes kept of a filename or name */

struct xp_pyproc {
	pid_t pid;                      /* whose memory */
	uint32_t hexversion;            /* PY_VERSION_HEX */
	const struct xp_py_offsets *o;
	uintptr_t code_type, unicode_type, bytes_type, frame_type;  /* type objects' addresses */
};

/* n bytes of pid's memory at src: 0, or -EFAULT (unmapped, refused, short). */
int xp_py_peek(pid_t pid, void *dst, uintptr_t src, size_t n);

/* A plausible user-space object pointer: above the first 64 KiB, 8-aligned. */
static inline int xp_py_sane(uintptr_t p)
{
	return p >= 0x10000 && p < 0x800000000000ull && !(p & 7);
}

struct xp_pystr {
	uintptr_t data;                 /* characters or UTF-8 bytes */
	uint64_t n;                     /* characters (or bytes when kind == 0) to read */
	int kind;                       /* 0: UTF-8/ASCII bytes; 1, 2, 4: code units */
	uint32_t bound;                 /* UTF-8 bytes it takes at most (cut) */
};

/* What a code object's record is made from, read once. */
struct xp_pycode_src {
	struct xp_pystr file, name;
	uintptr_t table;                /* the line table's bytes */
	uint64_t table_len;
	int32_t first_line;
	uint32_t need;                  /* payload bytes at most, 8-aligned */
};

/* The code object at code: its strings and line table found and checked.
 * 0, -EFAULT (unreadable), -EINVAL (not what the offsets say), -EMSGSIZE
 * (a record larger than XP_PYCODE_RECORD_MAX). */
int xp_pycode_probe(const struct xp_pyproc *pp, uintptr_t code, struct xp_pycode_src *s);
/* The XP_REC_PYCODE payload (struct xp_pycode, strings, table; not padded)
 * into dst (src->need bytes): its length, or -EFAULT. */
int xp_pycode_fill(const struct xp_pyproc *pp, const struct xp_pycode_src *s, uint64_t id,
		   void *dst);

/* 3.13: every offset the interpreter publishes in its _Py_DebugOffsets (at
 * the start of _PyRuntime, at runtime) that the table has must be equal.
 * 0, or -1 with the reason in why ("Python 3.13.0: ..."). vs: the version. */
int xp_py_check_debug_offsets(const struct xp_pyproc *pp, uintptr_t runtime, const char *vs,
			      char *why, size_t len);

#endif
