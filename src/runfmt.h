/* runfmt.h - the raw run format: the contract between capture and ingest.
 *
 * A run directory holds meta.json and binary record streams (*.xpr). Each
 * stream starts with struct xp_file_header, then records, each a struct
 * xp_record_header followed by its payload. Records are 8-byte aligned and
 * their size includes the header, so a reader skips types it does not know.
 * All integers are little-endian, all timestamps CLOCK_MONOTONIC nanoseconds
 * (the clock of bpf_ktime_get_ns). Documented for users in xpcap-run(5).
 *
 * The structs below are shared by the BPF programs, the injection library and
 * the readers: fixed-width types only, explicit padding, no pointers.
 *
 *   struct xp_record_header *h = ...;
 *   if (h->type == XP_REC_SAMPLE) { const struct xp_sample *s = (void *)(h + 1); }
 */
#ifndef XP_RUNFMT_H
#define XP_RUNFMT_H

#ifdef __bpf__
#include <linux/types.h>
typedef __u8 uint8_t;
typedef __u16 uint16_t;
typedef __u32 uint32_t;
typedef __u64 uint64_t;
typedef __s32 int32_t;
typedef __s64 int64_t;
#else
#include <stdint.h>
#endif

#define XP_MAGIC "XPCAPRAW"         /* 8 bytes, no terminator on disk */
#define XP_FORMAT_VERSION 1
#define XP_RECORD_ALIGN 8
#define XP_RECORD_MAX (1u << 20)    /* larger sizes are corruption, not data */
#define XP_COMM_LEN 16
#define XP_BUILD_ID_MAX 20
#define XP_MAX_STACK_DEPTH 127      /* frames per user or kernel stack */

/* Clock ids as in <time.h>; every stream written today uses MONOTONIC. */
#define XP_CLOCK_MONOTONIC 1

enum xp_stream_kind {
	XP_STREAM_CPU = 1,          /* cpu.xpr: written by xpcap from BPF and perf */
	XP_STREAM_GPU = 2,          /* gpu-<pid>.xpr: written by the injection library */
};

struct xp_file_header {
	char magic[8];              /* XP_MAGIC */
	uint32_t version;           /* XP_FORMAT_VERSION of the writer */
	uint32_t header_size;       /* sizeof this struct as written; readers skip the rest */
	uint32_t stream;            /* enum xp_stream_kind */
	uint32_t clock;             /* XP_CLOCK_* of every ts in the stream */
	uint32_t pid;               /* GPU stream: writing process (root pid namespace if known); CPU: 0 */
	uint32_t flags;             /* reserved, 0 */
	uint64_t created_ns;        /* when the writer opened the stream */
};

struct xp_record_header {
	uint32_t type;              /* enum xp_record_type */
	uint32_t size;              /* bytes including this header, multiple of 8 */
};

/* Record types. 1-31: CPU stream. 32-95: GPU stream. 96+: shared. */
enum xp_record_type {
	XP_REC_SAMPLE = 1,          /* struct xp_sample: periodic CPU sample */
	XP_REC_FORK = 2,            /* struct xp_task: a new task */
	XP_REC_EXIT = 3,            /* struct xp_task: a task ended */
	XP_REC_COMM = 4,            /* struct xp_comm: a task's name changed (or exec) */
	XP_REC_EXEC = 5,            /* struct xp_exec: execve succeeded, with the path */
	XP_REC_MMAP = 6,            /* struct xp_mmap: an executable mapping */
	XP_REC_LAUNCH = 7,          /* struct xp_launch: marker uprobe hit (CUDA API entry) */
	XP_REC_SWITCH = 8,          /* struct xp_switch: a thread's off-CPU interval */
	XP_REC_LOST = 96,           /* struct xp_lost: records that could not be written */
	XP_REC_ZBLOCK = 97,         /* struct xp_zblock: a zstd-compressed run of records */
};

/* How a stack was read; bits in xp_stack.flags. */
#define XP_STACK_USER_ERR   (1u << 0)   /* user stack read failed (depth 0 then) */
#define XP_STACK_KERNEL_ERR (1u << 1)   /* kernel stack read failed */
#define XP_STACK_USER_TRUNC (1u << 2)   /* user stack hit the depth limit */
#define XP_STACK_HAS_USER_COPY (1u << 3) /* struct xp_user_regs_copy + stack bytes follow the IPs */
/* the copy stops just past the innermost Python evaluation's C frame, on
 * purpose: the interpreter's frames above it are in the launch's Python
 * stack (the injection library's launch records, 3.11+) */
#define XP_STACK_COPY_TO_PYTHON (1u << 4)
/* In-process launch stacks of a Python thread (cupti/stackreuse.h):
 * KEYED, a copy that stands for its key (xp_user_regs_copy.key), the key's
 * first launch or a check; BORROWED, no bytes (size 0): the launch went
 * through the same native frames as the latest KEYED copy of its key in
 * this stream, which an unwinder gives it */
#define XP_STACK_KEYED (1u << 5)
#define XP_STACK_BORROWED (1u << 6)

/* Stacks as recorded: IPs, leaf first. Followed in the record by
 * kernel_depth u64 kernel IPs, then user_depth u64 user IPs, then, with
 * XP_STACK_HAS_USER_COPY (dwarf mode), struct xp_user_regs_copy and its
 * size bytes of user stack memory from sp upwards, for offline unwinding. */
struct xp_stack {
	uint16_t user_depth;        /* number of user IPs */
	uint16_t kernel_depth;      /* number of kernel IPs */
	uint32_t flags;             /* XP_STACK_* */
};

#define XP_USER_COPY_MAX 65528      /* largest user stack copy, bytes */

/* The user registers a CFI unwinder starts from (x86-64: rip, rsp, rbp)
 * and how many bytes of stack memory from sp follow; size can be less
 * than requested when the stack ends sooner (what could be read). */
struct xp_user_regs_copy {
	uint64_t ip;                /* user instruction pointer */
	uint64_t sp;                /* user stack pointer: address of the first byte copied */
	uint64_t bp;                /* user frame pointer */
	uint32_t size;              /* bytes of stack that follow, multiple of 8, <= XP_USER_COPY_MAX */
	uint32_t key;               /* XP_STACK_KEYED or _BORROWED: the key's id; else 0 */
};

struct xp_sample {
	uint64_t ts;                /* ns, when the sample fired */
	uint32_t pid;               /* process (tgid), root pid namespace */
	uint32_t tid;               /* thread */
	uint32_t cpu;               /* CPU it ran on */
	uint32_t period_ns;         /* sampling period in force */
	char comm[XP_COMM_LEN];     /* thread name at the sample */
	struct xp_stack stack;      /* then the IPs */
};

struct xp_task {                /* same fields as PERF_RECORD_FORK/EXIT */
	uint64_t ts;                /* ns */
	uint32_t pid;               /* process of the new or exiting task */
	uint32_t ppid;              /* its parent process */
	uint32_t tid;               /* the new or exiting task */
	uint32_t ptid;              /* parent task */
};

#define XP_COMM_EXEC 1u         /* xp_comm.flags: name set by exec */

struct xp_comm {
	uint64_t ts;                /* ns */
	uint32_t pid;
	uint32_t tid;
	uint32_t flags;             /* XP_COMM_* */
	uint32_t pad;               /* 0 */
	char comm[XP_COMM_LEN];     /* new name, NUL padded */
};

struct xp_exec {
	uint64_t ts;                /* ns */
	uint32_t pid;
	uint32_t tid;
	uint32_t old_tid;           /* tid before exec (a non-leader thread exec'd) */
	uint16_t path_len;          /* bytes of path that follow, without NUL */
	uint16_t pad;               /* 0 */
	/* char path[path_len], then NUL padding to 8 bytes */
};

#define XP_MMAP_HAS_BUILD_ID 1u /* xp_mmap.flags: build_id is valid */
#define XP_MMAP_FROM_PROC    2u /* taken from /proc/PID/maps, not a live event */

struct xp_mmap {
	uint64_t ts;                /* ns */
	uint32_t pid;
	uint32_t tid;
	uint64_t addr;              /* start address */
	uint64_t len;               /* bytes */
	uint64_t pgoff;             /* file offset of addr, bytes */
	uint32_t prot;              /* PROT_* */
	uint32_t flags;             /* XP_MMAP_* */
	uint8_t build_id_size;      /* bytes used in build_id */
	uint8_t build_id[XP_BUILD_ID_MAX];
	uint8_t pad[1];             /* 0 */
	uint16_t path_len;          /* bytes of path that follow, without NUL */
	/* char path[path_len], then NUL padding to 8 bytes */
};

struct xp_launch {
	uint64_t ts;                /* ns, at the marker call */
	uint64_t correlation_id;    /* CUPTI correlation id */
	uint32_t pid;
	uint32_t tid;
	uint32_t cpu;
	uint32_t cbid;              /* CUPTI callback id; high bit set for the driver domain */
	struct xp_stack stack;
};

struct xp_switch {
	uint64_t ts;                /* ns, when the thread went off CPU */
	uint64_t duration_ns;       /* how long it stayed off */
	uint32_t pid;
	uint32_t tid;
	uint32_t cpu;
	uint32_t prev_state;        /* task state when it left (0 = preempted) */
	struct xp_stack stack;
};

/* Which record kind a loss counter belongs to (xp_lost.kind and meta.json). */
enum xp_lost_reason {
	XP_LOST_RINGBUF_FULL = 1,   /* BPF ring buffer had no room */
	XP_LOST_PERF_LOST = 2,      /* perf side-band buffer overflowed */
	XP_LOST_STACK = 3,          /* stack could not be read (record kept) */
	XP_LOST_WRITE = 4,          /* disk write failed */
	XP_LOST_NO_MEMORY = 5,      /* BPF had no per-thread slot (off-CPU state) */
	XP_LOST_PRIVILEGED = 6,     /* the task was privileged (setuid, not dumpable, not the user's) */
};

struct xp_lost {
	uint64_t ts;                /* ns, when the loss was noticed */
	uint32_t kind;              /* enum xp_record_type that was lost */
	uint32_t reason;            /* enum xp_lost_reason */
	uint64_t count;             /* records lost since the previous xp_lost of this kind */
};

/* A run of whole records (never another zblock), compressed as one zstd
 * frame. Readers expand it in place of the record; the offset of anything
 * wrong inside is that of the zblock. */
#define XP_ZBLOCK_RAW_MAX (64u << 20)   /* larger raw_size is corruption */

struct xp_zblock {
	uint64_t raw_size;          /* bytes of records in the frame, 8 .. XP_ZBLOCK_RAW_MAX */
	uint32_t frame_size;        /* bytes of the zstd frame that follows (then zero padding to 8) */
	uint32_t pad;               /* 0 */
	/* uint8_t frame[frame_size] */
};

#define XP_ALIGN8(n) (((n) + 7u) & ~7u)

#endif
