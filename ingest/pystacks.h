/* pystacks.h - the Python side of launch stacks as ingest reads it from the
 * run (runfmt_py.h): code objects, the Python stack of each launch, each
 * process's interpreter, and the counts that say how many launches had a
 * Python stack and why the others had none. Filled in the first pass over
 * the streams, asked in the second; record order matters only within a
 * stream, where a launch that names an earlier copy (XP_PYSTACK_BORROWED)
 * takes the frames of its key's latest stack before it.
 *
 *   struct xp_pystore *ps = xp_pystore_new();
 *   xp_pystore_record(ps, stream_pid, h);           // pass 1, every record
 *   struct xp_pystack_view v;
 *   if (xp_pystore_launch(ps, pid, corr, &v) == 1)  // pass 2, every launch
 *       for (unsigned i = 0; i < v.n; i++)
 *           xp_pystore_frame(ps, v.frames[i].code, v.frames[i].offset, &file, &qualname, &line);
 */
#ifndef XP_PYSTACKS_H
#define XP_PYSTACKS_H

#include <stddef.h>
#include <stdint.h>

#include "src/runfmt.h"

#define XP_PYCODE_NONE UINT32_MAX   /* a frame whose code object was not recorded */

struct xp_pystore;

struct xp_pyframe_ref {
	uint32_t code;              /* index of the code object, or XP_PYCODE_NONE */
	uint32_t offset;            /* instruction offset, bytes */
	uint8_t entry;              /* XP_PYFRAME_ENTRY was set */
};

struct xp_pystack_view {
	const struct xp_pyframe_ref *frames;  /* innermost first; valid until the next launch call */
	unsigned n;
	int truncated;              /* XP_PYSTACK_TRUNCATED */
	int sampled;                /* read by xpcap for a CPU sample: the native stack
				     * may be broken beyond the interpreter's frames
				     * (no frame pointers), see stacks.c */
	int bounded;                /* the launch's native copy stopped at the innermost
				     * Python evaluation (XP_STACK_COPY_TO_PYTHON): set
				     * by the launch's reader, not the store */
	uint32_t id;                /* the distinct stack's number (equal stacks, equal ids) */
};

/* What one process's launches had (one row of xp_python_processes). */
struct xp_pyproc_stats {
	uint32_t pid;
	uint32_t hexversion;        /* the interpreter's PY_VERSION_HEX, 0 if none was found */
	int has_info;               /* an XP_REC_PYINFO came */
	int supported;              /* XP_PYINFO_SUPPORTED */
	char reason[256];           /* the library's words when not supported */
	uint64_t launches;          /* XP_REC_LAUNCH records */
	uint64_t with_python;       /* of which with a Python stack */
	uint64_t joined_gap;        /* of those, joined above a gap (pysplice.h) */
	uint64_t lost_unsupported;  /* XP_LOST_PY_UNSUPPORTED */
	uint64_t lost_no_thread;    /* XP_LOST_PY_NO_THREAD */
	uint64_t lost_unreadable;   /* XP_LOST_PY_UNREADABLE */
	uint64_t lost_other;        /* Python stacks lost for another reason (ring full, write) */
	uint64_t stacks;            /* XP_REC_PYSTACK records */
	uint64_t codes;             /* XP_REC_PYCODE records (the library's) */
	/* CPU samples: xpcap's frame reader (XP_REC_PYSAMPLE, pyframes.xpr) */
	int sampler_info;           /* an XP_REC_PYINFO of the reader came */
	int sampler_supported;      /* ... and it read this process's frames */
	char sampler_reason[400];   /* how it read them, or why not */
	uint64_t snapshots;         /* XP_REC_PYSAMPLE records */
	uint64_t samples;           /* CPU samples of the process (off-CPU intervals are
				     * counted apart, pywaits.h) */
	uint64_t python_samples;    /* of which on a thread the reader saw run Python */
	uint64_t sampled_with;      /* of those, given a chain read within one period */
};

/* A launch-side row: the library or launches said something. */
static inline int xp_pyproc_has_launch_side(const struct xp_pyproc_stats *p)
{
	return p->has_info || p->launches || p->stacks || p->codes ||
	       p->lost_unsupported || p->lost_no_thread || p->lost_unreadable || p->lost_other;
}

/* Launches on a thread that runs Python: with a stack, or lost for
 * unreadable frames or for want of room (unsupported interpreters and
 * threads without a thread state are not). */
static inline uint64_t xp_pyproc_on_python_threads(const struct xp_pyproc_stats *p)
{
	return p->with_python + p->lost_unreadable + p->lost_other;
}

struct xp_pystore *xp_pystore_new(void);
void xp_pystore_free(struct xp_pystore *s);
/* One record of a stream written by stream_pid (its header's pid): takes
 * XP_REC_PYSTACK, PYCODE, PYINFO, and counts XP_REC_LOST of kind PYSTACK.
 * 1 taken, 0 not one of those, -EBADMSG malformed, -ENOMEM. */
int xp_pystore_record(struct xp_pystore *s, uint32_t stream_pid,
		      const struct xp_record_header *h);
/* Whether the records that follow come from xpcap's frame reader (a CPU
 * stream: pyframes.xpr) rather than the injection library (its launch
 * streams). */
void xp_pystore_stream(struct xp_pystore *s, int from_reader);
/* Whether any Python record came (nothing else needs asking otherwise). */
int xp_pystore_any(const struct xp_pystore *s);
/* The Python stack of the launch (pid, corr), counted for pid: 1 and *v,
 * 0 none, -ENOMEM. */
int xp_pystore_launch(struct xp_pystore *s, uint32_t pid, uint64_t corr,
		      struct xp_pystack_view *v);
/* The chain xpcap's reader took of thread (pid, tid) for a CPU sample at
 * ts or an off-CPU interval from ts to off_until (else 0; a sample is
 * counted for pid, an interval is not): the first read inside the
 * interval (the thread ran nothing in it), else the read nearest to ts within window ns either side (or the
 * reader's median period for the thread, where longer). 1 and *v, 0 none,
 * -ENOMEM. */
int xp_pystore_sampled(struct xp_pystore *s, uint32_t pid, uint32_t tid, uint64_t ts,
		       uint64_t off_until, uint64_t window, struct xp_pystack_view *v);
/* Counts a launch of pid whose Python stack was joined above a gap. */
void xp_pystore_joined_gap(struct xp_pystore *s, uint32_t pid);
/* The code's file as recorded, its qualified name (NUL bytes shown as '?')
 * and the line of the instruction at offset (-1: its line table has none):
 * 0, or -ENOENT for XP_PYCODE_NONE. The strings live as long as s. */
int xp_pystore_frame(const struct xp_pystore *s, uint32_t code, uint32_t offset,
		     const char **file, const char **qualname, int *line);
size_t xp_pystore_nprocs(const struct xp_pystore *s);
const struct xp_pyproc_stats *xp_pystore_proc(const struct xp_pystore *s, size_t i);

#endif
