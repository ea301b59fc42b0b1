/* synthrun.h - write synthetic but realistic run directories, with xp_writer,
 * whose mappings point at REAL ELF files built by meson (tests/fixture): the
 * sample IPs fall inside known functions, so ingest symbolizes them for real.
 * Used by the unit and golden tests and by bench/ingest-bench.
 *
 *   struct xp_synth s = { .exe = "build/tests/xptarget",
 *                         .lib = "build/tests/libxptarget.so" };
 *   xp_synth_load_elves(&s);
 *   xp_synth_write_golden(&s, "/tmp/run");          // small, every feature
 *   xp_synth_write_bench(&s, "/tmp/big", 10000000, 1);  // N samples, deep stacks
 */
#ifndef XP_SYNTHRUN_H
#define XP_SYNTHRUN_H

#include <stddef.h>
#include <stdint.h>

#define XP_SYNTH_MAX_FUNCS 64

struct xp_synth_func {
	char name[64];
	uint64_t vaddr, size;       /* from .symtab */
	int in_lib;
};

struct xp_synth_elf {
	uint64_t text_vaddr;        /* executable PT_LOAD */
	uint64_t text_offset;
	uint64_t text_memsz;
	uint8_t build_id[20];
	size_t build_id_len;
};

struct xp_synth {
	const char *exe, *lib;      /* absolute paths of the fixture */
	struct xp_synth_elf elf[2]; /* 0: exe, 1: lib */
	struct xp_synth_func funcs[XP_SYNTH_MAX_FUNCS];
	int nfuncs;
};

/* Base addresses the synthetic processes map the fixture at. */
#define XP_SYNTH_EXE_BASE 0x555555554000ull
#define XP_SYNTH_LIB_BASE 0x7f1234560000ull
#define XP_SYNTH_JIT_BASE 0x7fff00000000ull
#define XP_SYNTH_STALE_BASE 0x7e0000000000ull

/* Reads symbols, build ids and text segments of exe and lib. 0 or -errno. */
int xp_synth_load_elves(struct xp_synth *s);
const struct xp_synth_func *xp_synth_func(const struct xp_synth *s, const char *name);
/* Address of name + off as mapped by the synthetic processes. */
uint64_t xp_synth_ip(const struct xp_synth *s, const char *name, uint64_t off);
/* The return address a call from name would push when name's call is its
 * last instruction: the first byte after name. Only ip - 1 finds name. */
uint64_t xp_synth_return_ip(const struct xp_synth *s, const char *name);

/* The small deterministic run behind the golden files. 0 or -errno. */
int xp_synth_write_golden(const struct xp_synth *s, const char *dir);
/* n samples over 4 threads of 2 processes, stacks of depth 10-40 drawn from
 * a pool of a few thousand (heavy reuse, as a real program). 0 or -errno. */
int xp_synth_write_bench(const struct xp_synth *s, const char *dir, uint64_t n,
			 uint64_t seed);

/* n samples of 32 threads in 2 processes (deep stacks, heavy reuse) and
 * the GPU side: one CUDA call per 10 samples on 4 launching threads, each
 * with its API record and kernel (200 names), a graph replay of 8 kernels
 * every 50th call, uprobe launch records of which 5% are lost and 0.1%
 * claim another thread. For bench/scale-bench. 0 or -errno. */
int xp_synth_write_scale(const struct xp_synth *s, const char *dir, uint64_t n,
			 uint64_t seed);

/* A Python program's launches: launch-4000.xpr with launch records whose
 * native stacks pass through _PyEval_EvalFrameDefault (and, from 3.12, perf
 * trampolines), the Python stacks taken at the same calls over the real
 * line tables of fixture (tests/pylines/lines-3.1x.txt), their code
 * objects, and the GPU side. Three launches unwound to main, two whose
 * unwind stopped in the framework, one on a thread without Python, one
 * whose Python frames were unreadable. The Python frames, innermost first:
 * leaf at line XP_SYNTH_PY_LINE_LEAF of sample.py, Model.forward, main,
 * <module>. 0 or -errno (-ENOENT: the fixture lacks those lines). */
#define XP_SYNTH_PY_LINE_LEAF 10
#define XP_SYNTH_PY_LINE_FORWARD 396
#define XP_SYNTH_PY_LINE_MAIN 448
#define XP_SYNTH_PY_LINE_MODULE 454
int xp_synth_write_python(const struct xp_synth *s, const char *dir, const char *fixture);

/* Building blocks of the writers (synthrun.c), for synthjob.c. */
struct xp_writer;
int xp_synth_write_text(const char *dir, const char *name, const char *text);
/* DIR/PREFIX.xpr (pid 0) or DIR/PREFIX-PID.xpr, made anew, open for writing. */
int xp_synth_open_stream(struct xp_writer **w, const char *dir, const char *prefix, uint32_t kind,
			 uint32_t pid);
int xp_synth_add_comm(struct xp_writer *w, uint64_t ts, uint32_t pid, uint32_t tid,
		      const char *name);
int xp_synth_add_mmap(struct xp_writer *w, uint64_t ts, uint32_t pid, uint64_t addr,
		      uint64_t len, uint64_t pgoff, const char *path, const uint8_t *bid,
		      size_t bid_len, uint32_t flags);
int xp_synth_map_fixture(const struct xp_synth *s, struct xp_writer *w, uint64_t ts,
			 uint32_t pid, int exe_too);
int xp_synth_add_sample(struct xp_writer *w, uint64_t ts, uint32_t pid, uint32_t tid,
			uint32_t cpu, const char *comm, const uint64_t *kips, unsigned nk,
			const uint64_t *uips, unsigned nu);
extern const char xp_synth_kallsyms[];

/* One rank of a synthetic distributed job, a run of its own as if recorded
 * on its own host (synthjob.c): the host's CLOCK_MONOTONIC reads the job's
 * true time + mono_off_ns, its wall clock is wrong by wall_err_ns (NTP).
 * Each step the rank computes (a gemm kernel, longer on the higher ranks:
 * the last is the straggler) and then all-reduces: the NCCL kernel ends at
 * the same true instant on every rank, within +-1 us. With gloo, the
 * all-reduce runs on the CPU instead and ends with the copy back to the GPU,
 * launched from c10d::ProcessGroupGloo::runLoop (a perf-map frame), at
 * that instant. 0 or -errno. */
struct xp_synth_rank {
	int rank, world;
	int gloo;                   /* collectives on gloo, not NCCL */
	uint32_t pid;
	const char *host;
	int64_t mono_off_ns, wall_err_ns;
	unsigned steps;
};
int xp_synth_write_job_rank(const struct xp_synth *s, const char *dir,
			    const struct xp_synth_rank *r);
/* One rank of a job whose GPU idle time has known causes (synthgaps.c):
 * steps of 10 ms, the last rank the straggler; the truth as JSON into
 * truth. py NULL: steps as NVTX ranges; "loop:FIXTURE": no NVTX, the
 * launches' Python stacks (over FIXTURE's line tables, tests/pylines) turn
 * in a loop; "flat:FIXTURE": the same at one line, no loop. 0 or -errno. */
int xp_synth_write_gaps_rank(const struct xp_synth *s, const char *dir, int rank, int world,
			     unsigned steps, const char *truth, const char *py);

#endif
