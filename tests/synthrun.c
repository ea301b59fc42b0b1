/* synthrun.c - synthetic run directories over the real fixture ELF files;
 * see synthrun.h. Deterministic: the same fixture and seed give the same
 * bytes, except the stream header's created_ns. */
#include "synthrun.h"

#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pyfixture.h"
#include "src/runfile.h"
#include "src/runfmt_gpu.h"
#include "src/runfmt_py.h"

static int load_elf(struct xp_synth *s, int which, const char *path)
{
	struct xp_synth_elf *e = &s->elf[which];
	const void *bid;
	Elf_Scn *scn = NULL;
	size_t nph;
	int fd, len, err = -ENOEXEC;
	Elf *elf;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		goto out;
	if (elf_getphdrnum(elf, &nph))
		goto out;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			e->text_vaddr = ph.p_vaddr;
			e->text_offset = ph.p_offset;
			e->text_memsz = ph.p_memsz;
		}
	}
	len = dwelf_elf_gnu_build_id(elf, &bid);
	if (len > 0 && len <= 20) {
		memcpy(e->build_id, bid, (size_t)len);
		e->build_id_len = (size_t)len;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_size || !(name = elf_strptr(elf, sh.sh_link, sym.st_name)))
				continue;
			if (strncmp(name, "xp_", 3) && strncmp(name, "_ZN2xp", 6) && strcmp(name, "main") &&
			    strcmp(name, "_PyEval_EvalFrameDefault"))
				continue;
			if (s->nfuncs == XP_SYNTH_MAX_FUNCS)
				break;
			snprintf(s->funcs[s->nfuncs].name, sizeof(s->funcs[0].name), "%s", name);
			s->funcs[s->nfuncs].vaddr = sym.st_value;
			s->funcs[s->nfuncs].size = sym.st_size;
			s->funcs[s->nfuncs].in_lib = which;
			s->nfuncs++;
		}
	}
	err = e->text_memsz ? 0 : -ENOEXEC;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

int xp_synth_load_elves(struct xp_synth *s)
{
	int err;

	s->nfuncs = 0;
	err = load_elf(s, 0, s->exe);
	if (!err)
		err = load_elf(s, 1, s->lib);
	return err;
}

const struct xp_synth_func *xp_synth_func(const struct xp_synth *s, const char *name)
{
	for (int i = 0; i < s->nfuncs; i++)
		if (!strcmp(s->funcs[i].name, name))
			return &s->funcs[i];
	return NULL;
}

/* The mapping of each ELF's text segment, page aligned as mmap makes it. */
static uint64_t map_addr(const struct xp_synth *s, int which)
{
	uint64_t base = which ? XP_SYNTH_LIB_BASE : XP_SYNTH_EXE_BASE;

	return base + (s->elf[which].text_vaddr & ~0xfffull);
}

static uint64_t map_pgoff(const struct xp_synth *s, int which)
{
	return s->elf[which].text_offset & ~0xfffull;
}

static uint64_t map_len(const struct xp_synth *s, int which)
{
	return (s->elf[which].text_memsz + (s->elf[which].text_vaddr & 0xfff) + 0xfff) & ~0xfffull;
}

static uint64_t vaddr_to_ip(const struct xp_synth *s, int which, uint64_t vaddr)
{
	uint64_t file_off = vaddr - s->elf[which].text_vaddr + s->elf[which].text_offset;

	return map_addr(s, which) + (file_off - map_pgoff(s, which));
}

uint64_t xp_synth_ip(const struct xp_synth *s, const char *name, uint64_t off)
{
	const struct xp_synth_func *f = xp_synth_func(s, name);

	return f ? vaddr_to_ip(s, f->in_lib, f->vaddr + off) : 0;
}

uint64_t xp_synth_return_ip(const struct xp_synth *s, const char *name)
{
	const struct xp_synth_func *f = xp_synth_func(s, name);

	return f ? vaddr_to_ip(s, f->in_lib, f->vaddr + f->size) : 0;
}

int xp_synth_write_text(const char *dir, const char *name, const char *text)
{
	char path[4096];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	if (fputs(text, f) < 0)
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

int xp_synth_open_stream(struct xp_writer **w, const char *dir, const char *prefix, uint32_t kind,
			 uint32_t pid)
{
	char path[4096];

	if (pid)
		snprintf(path, sizeof(path), "%s/%s-%u.xpr", dir, prefix, pid);
	else
		snprintf(path, sizeof(path), "%s/%s.xpr", dir, prefix);
	unlink(path);           /* a writer makes its file anew */
	return xp_writer_open(w, path, kind, pid);
}

int xp_synth_add_comm(struct xp_writer *w, uint64_t ts, uint32_t pid, uint32_t tid,
		    const char *name)
{
	struct xp_comm c = { .ts = ts, .pid = pid, .tid = tid };

	memcpy(c.comm, name, strnlen(name, sizeof(c.comm)));
	return xp_writer_append(w, XP_REC_COMM, &c, sizeof(c), NULL, 0);
}

int xp_synth_add_mmap(struct xp_writer *w, uint64_t ts, uint32_t pid, uint64_t addr,
		    uint64_t len, uint64_t pgoff, const char *path, const uint8_t *bid,
		    size_t bid_len, uint32_t flags)
{
	struct xp_mmap m = {
		.ts = ts, .pid = pid, .tid = pid, .addr = addr, .len = len, .pgoff = pgoff,
		.prot = 5, .flags = flags | (bid_len ? XP_MMAP_HAS_BUILD_ID : 0),
		.build_id_size = (uint8_t)bid_len, .path_len = (uint16_t)strlen(path),
	};

	if (bid_len)
		memcpy(m.build_id, bid, bid_len);
	return xp_writer_append(w, XP_REC_MMAP, &m, sizeof(m), path, strlen(path) + 1);
}

int xp_synth_map_fixture(const struct xp_synth *s, struct xp_writer *w, uint64_t ts,
		       uint32_t pid, int exe_too)
{
	int err = 0;

	if (exe_too)
		err = xp_synth_add_mmap(w, ts, pid, map_addr(s, 0), map_len(s, 0), map_pgoff(s, 0), s->exe,
			       s->elf[0].build_id, s->elf[0].build_id_len, XP_MMAP_FROM_PROC);
	if (!err)
		err = xp_synth_add_mmap(w, ts, pid, map_addr(s, 1), map_len(s, 1), map_pgoff(s, 1), s->lib,
			       s->elf[1].build_id, s->elf[1].build_id_len, XP_MMAP_FROM_PROC);
	return err;
}

int xp_synth_add_sample(struct xp_writer *w, uint64_t ts, uint32_t pid, uint32_t tid,
		      uint32_t cpu, const char *comm, const uint64_t *kips, unsigned nk,
		      const uint64_t *uips, unsigned nu)
{
	struct xp_sample smp = { .ts = ts, .pid = pid, .tid = tid, .cpu = cpu,
				 .period_ns = 10101010 };
	uint64_t ips[2 * XP_MAX_STACK_DEPTH];

	memcpy(smp.comm, comm, strnlen(comm, sizeof(smp.comm)));
	smp.stack.kernel_depth = (uint16_t)nk;
	smp.stack.user_depth = (uint16_t)nu;
	if (nk)
		memcpy(ips, kips, nk * sizeof(*ips));
	memcpy(ips + nk, uips, nu * sizeof(*ips));
	return xp_writer_append(w, XP_REC_SAMPLE, &smp, sizeof(smp), ips,
				(nk + nu) * sizeof(*ips));
}

/* Kernel symbols of the synthetic runs: ascending, text and data mixed. */
const char xp_synth_kallsyms[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81001000 T do_syscall_64\n"
	"ffffffff81002000 t __x64_sys_futex\n"
	"ffffffff81003000 T futex_wait\n"
	"ffffffff81004000 T schedule\n"
	"ffffffff81005000 D some_data\n"
	"ffffffffc0100000 t nvidia_ioctl\t[nvidia]\n";

#define K_SYSCALL 0xffffffff81001040ull
#define K_FUTEX   0xffffffff81002010ull
#define K_WAIT    0xffffffff81003020ull
#define K_SCHED   0xffffffff81004008ull
#define K_NVIDIA  0xffffffffc0100100ull

static int write_meta(const char *dir, uint64_t samples, uint64_t lost)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "{\n"
		 "  \"tool\": \"xpcap\",\n"
		 "  \"tool_version\": \"0.1.0\",\n"
		 "  \"format_version\": %d,\n"
		 "  \"command\": \"xptarget --steps 3\",\n"
		 "  \"hostname\": \"synth-host\",\n"
		 "  \"kernel_release\": \"6.1.0-synthetic\",\n"
		 "  \"cpu_count\": 4,\n"
		 "  \"sample_frequency_hz\": 99,\n"
		 "  \"start_monotonic_ns\": 1000000000,\n"
		 "  \"stop_monotonic_ns\": 3500000000,\n"
		 "  \"start_realtime_ns\": 1763800000000000000,\n"
		 "  \"stop_realtime_ns\": 1763800002500000000,\n"
		 "  \"exit\": { \"code\": 0, \"signal\": null },\n"
		 "  \"records\": {\n"
		 "    \"sample\": { \"written\": %llu, \"lost\": { \"ringbuf_full\": %llu, \"stack\": 0 } },\n"
		 "    \"mmap\": { \"written\": 9, \"lost\": { \"ringbuf_full\": 0 } }\n"
		 "  }\n"
		 "}\n", XP_FORMAT_VERSION, (unsigned long long)samples, (unsigned long long)lost);
	return xp_synth_write_text(dir, "meta.json", text);
}

int xp_synth_write_golden(const struct xp_synth *s, const char *dir)
{
	static const uint8_t stale_bid[20] = { 0xab, 0xab, 0xab, 0xab, 0xab, 0xab, 0xab };
	struct xp_writer *w = NULL;
	char perfmap[512];
	uint64_t ts = 1000000000, u[8], k[4];
	struct xp_task fork_rec = { .ts = ts + 5, .pid = 1000, .ppid = 1000, .tid = 1001,
				    .ptid = 1000 };
	struct xp_lost lost = { .ts = ts + 2000000000, .kind = XP_REC_SAMPLE,
				.reason = XP_LOST_RINGBUF_FULL, .count = 3 };
	int err;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	err = xp_synth_open_stream(&w, dir, "cpu", XP_STREAM_CPU, 0);
	if (err)
		return err;
	/* process 1000: the fixture, two threads */
	err = xp_synth_add_comm(w, ts, 1000, 1000, "xptarget");
	if (!err)
		err = xp_synth_map_fixture(s, w, ts, 1000, 1);
	if (!err)
		err = xp_writer_append(w, XP_REC_FORK, &fork_rec, sizeof(fork_rec), NULL, 0);
	if (!err)
		err = xp_synth_add_comm(w, ts + 6, 1000, 1001, "worker");
	/* process 2000: a Python interpreter with a perf map over anonymous code */
	if (!err)
		err = xp_synth_add_comm(w, ts, 2000, 2000, "python3");
	if (!err)
		err = xp_synth_map_fixture(s, w, ts, 2000, 0);
	if (!err)
		err = xp_synth_add_mmap(w, ts, 2000, XP_SYNTH_JIT_BASE, 0x10000, 0, "//anon", NULL, 0, 0);
	/* process 3000: maps a file whose build id no longer matches the disk */
	if (!err)
		err = xp_synth_add_comm(w, ts, 3000, 3000, "stale");
	if (!err)
		err = xp_synth_add_mmap(w, ts, 3000, XP_SYNTH_STALE_BASE, 0x4000, 0, s->lib, stale_bid,
			       sizeof(stale_bid), XP_MMAP_FROM_PROC);
	for (int rep = 0; rep < 3 && !err; rep++) {
		ts += 10000000;
		/* main -> xp_run -> xp_parse -> xp_compute (leaf): 1 + rep samples */
		u[0] = xp_synth_ip(s, "xp_compute", 4);
		u[1] = xp_synth_return_ip(s, "xp_parse");
		u[2] = xp_synth_return_ip(s, "xp_run");
		u[3] = xp_synth_return_ip(s, "main");
		for (int i = 0; i <= rep && !err; i++)
			err = xp_synth_add_sample(w, ts + (uint64_t)i, 1000, 1000, 0, "xptarget", NULL, 0, u, 4);
		/* ... -> xp::Widget::draw -> xp_lib_middle -> xp_lib_leaf, in a futex */
		u[0] = xp_synth_ip(s, "xp_lib_leaf", 2);
		u[1] = xp_synth_return_ip(s, "xp_lib_middle");
		u[2] = xp_synth_return_ip(s, "_ZN2xp6Widget4drawEi");
		u[3] = xp_synth_return_ip(s, "xp_parse");
		u[4] = xp_synth_return_ip(s, "xp_run");
		u[5] = xp_synth_return_ip(s, "main");
		k[0] = K_SCHED;
		k[1] = K_WAIT + 1;
		k[2] = K_FUTEX + 1;
		k[3] = K_SYSCALL + 1;
		if (!err)
			err = xp_synth_add_sample(w, ts + 100, 1000, 1001, 1, "worker", k, 4, u, 6);
		/* worker: an IP outside every mapping, then a driver ioctl */
		u[0] = 0x12345678;
		u[1] = xp_synth_return_ip(s, "xp_idle");
		k[0] = K_NVIDIA;
		if (!err)
			err = xp_synth_add_sample(w, ts + 200, 1000, 1001, 1, "worker", k, 1, u, 2);
		/* python: py::train:train.py -> py::step:model.py -> xp_lib_leaf */
		u[0] = xp_synth_ip(s, "xp_lib_leaf", 8);
		u[1] = XP_SYNTH_JIT_BASE + 0x100 + 1;
		u[2] = XP_SYNTH_JIT_BASE + 0x200 + 1;
		u[3] = XP_SYNTH_JIT_BASE + 0x900 + 1;     /* not in the perf map */
		if (!err)
			err = xp_synth_add_sample(w, ts + 300, 2000, 2000, 2, "python3", NULL, 0, u, 4);
		/* stale: not guessed, module + offset */
		u[0] = XP_SYNTH_STALE_BASE + 0x1020;
		u[1] = XP_SYNTH_STALE_BASE + 0x1100 + 1;
		if (!err)
			err = xp_synth_add_sample(w, ts + 400, 3000, 3000, 3, "stale", NULL, 0, u, 2);
	}
	if (!err) {
		/* a CUDA launch from xp_parse (uprobe stack) and an off-CPU interval */
		struct { struct xp_launch l; uint64_t ips[3]; } launch = {
			.l = { .ts = ts + 500, .correlation_id = 77, .pid = 1000, .tid = 1000,
			       .cpu = 0, .cbid = 211, .stack = { .user_depth = 3 } },
			.ips = { xp_synth_ip(s, "xp_parse", 2), xp_synth_return_ip(s, "xp_run"),
				 xp_synth_return_ip(s, "main") },
		};
		struct { struct xp_switch w; uint64_t ips[3]; } sw = {
			.w = { .ts = ts + 600, .duration_ns = 5000000, .pid = 1000, .tid = 1001,
			       .cpu = 1, .prev_state = 1, .stack = { .kernel_depth = 1, .user_depth = 2 } },
			.ips = { K_SCHED, xp_synth_ip(s, "xp_idle", 3), xp_synth_return_ip(s, "main") },
		};

		err = xp_writer_append(w, XP_REC_LAUNCH, &launch, sizeof(launch), NULL, 0);
		if (!err)
			err = xp_writer_append(w, XP_REC_SWITCH, &sw, sizeof(sw), NULL, 0);
	}
	if (!err)
		err = xp_writer_append(w, XP_REC_LOST, &lost, sizeof(lost), NULL, 0);
	err = xp_writer_close(w) ?: err;
	if (err)
		return err;
	snprintf(perfmap, sizeof(perfmap),
		 "%llx 80 py::step:model.py\n%llx 100 py::train:train.py\nnot a line\n",
		 (unsigned long long)XP_SYNTH_JIT_BASE + 0xc0, (unsigned long long)XP_SYNTH_JIT_BASE + 0x180);
	err = xp_synth_write_text(dir, "perf-2000.map", perfmap);
	if (!err)
		err = xp_synth_write_text(dir, "kallsyms", xp_synth_kallsyms);
	if (!err)
		err = write_meta(dir, 15, 3);
	return err;
}

static uint64_t lcg(uint64_t *state)
{
	*state = *state * 6364136223846793005ull + 1442695040888963407ull;
	return *state >> 33;
}

#define POOL 4096

int xp_synth_write_bench(const struct xp_synth *s, const char *dir, uint64_t n,
			 uint64_t seed)
{
	static const uint32_t tids[4][2] = { { 1000, 1000 }, { 1000, 1001 }, { 1000, 1002 },
					     { 2000, 2000 } };
	static const char *const comms[4] = { "trainer", "loader", "loader", "python3" };
	struct xp_writer *w = NULL;
	uint64_t (*pool)[40] = NULL, k[3] = { K_SCHED, K_WAIT + 1, K_SYSCALL + 1 };
	uint8_t depth[POOL];
	uint64_t state = seed ? seed : 1, ts = 1000000000;
	int err;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	if (!s->nfuncs)
		return -ENOEXEC;
	pool = calloc(POOL, sizeof(*pool));
	if (!pool)
		return -ENOMEM;
	/* stacks share their outer frames, as in a real program: each pool
	 * entry extends a random earlier one (or starts anew) */
	for (int i = 0; i < POOL; i++) {
		int d = 10 + (int)(lcg(&state) % 31), from = i ? (int)(lcg(&state) % (unsigned)i) : 0;
		int keep = i && lcg(&state) % 4 ? depth[from] * 3 / 4 : 0;

		depth[i] = (uint8_t)d;
		if (keep > d)
			keep = d;
		/* root side is at the end of the array (leaf first) */
		for (int j = 0; j < keep; j++)
			pool[i][d - 1 - j] = pool[from][depth[from] - 1 - j];
		for (int j = 0; j < d - keep; j++) {
			const struct xp_synth_func *f = &s->funcs[lcg(&state) % (unsigned)s->nfuncs];
			uint64_t off = f->size > 8 ? lcg(&state) % (f->size - 1) + 1 : 1;

			pool[i][j] = vaddr_to_ip(s, f->in_lib, f->vaddr + off);
		}
	}
	err = xp_synth_open_stream(&w, dir, "cpu", XP_STREAM_CPU, 0);
	if (err)
		goto out;
	for (int t = 0; t < 4 && !err; t++)
		err = xp_synth_add_comm(w, ts, tids[t][0], tids[t][1], comms[t]);
	if (!err)
		err = xp_synth_map_fixture(s, w, ts, 1000, 1);
	if (!err)
		err = xp_synth_map_fixture(s, w, ts, 2000, 1);
	for (uint64_t i = 0; i < n && !err; i++) {
		/* skewed reuse: a few hot stacks, a long tail */
		uint64_t r = lcg(&state);
		int p = (int)((r % 100 < 70 ? r % 64 : r % POOL));
		int t = (int)(lcg(&state) % 4);

		ts += 250000;
		err = xp_synth_add_sample(w, ts, tids[t][0], tids[t][1], (uint32_t)t, comms[t], k,
				 i % 8 == 0 ? 3 : 0, pool[p], depth[p]);
	}
	err = xp_writer_close(w) ?: err;
	if (!err)
		err = xp_synth_write_text(dir, "kallsyms", xp_synth_kallsyms);
	if (!err)
		err = write_meta(dir, n, 0);
out:
	free(pool);
	return err;
}

/* ---- the scale run: CPU samples plus the GPU side (bench/scale-bench) ---- */

#define SCALE_THREADS 32            /* 24 in the trainer, 8 in python */
#define SCALE_LAUNCHERS 4           /* threads that call CUDA */
#define SCALE_KERNELS 200           /* distinct kernel names */
#define SCALE_SITES 256             /* distinct launching stacks */
#define SCALE_GRAPH_EVERY 50        /* every 50th launch replays a graph */
#define SCALE_GRAPH_NODES 8

enum { SS_LAUNCH = 1, SS_GRAPH = 2, SS_EXE = 3, SS_KERNEL0 = 16 };

struct scale_proc {
	uint32_t pid;
	struct xp_writer *gpu;      /* gpu-<pid>.xpr */
	uint64_t corr;              /* last correlation id */
};

static uint32_t scale_tid(int t)
{
	return t < 24 ? 1000 + (uint32_t)t : 2000 + (uint32_t)(t - 24);
}

static const char *scale_comm(int t)
{
	static const char names[3][16] = { "trainer", "loader", "python3" };

	return names[t < 3 ? 0 : t < 24 ? 1 : 2];
}

static int scale_gpu_open(struct scale_proc *p, const char *dir, const char *exe)
{
	struct xp_gpu_process proc = { .ts = 999000000, .pid = p->pid, .ns_pid = p->pid, .ppid = 1,
				       .init_tid = p->pid, .cupti_version = 130001,
				       .driver_version = 13000, .cuda_version = 13000,
				       .clock_method = XP_GPU_CLOCK_CALLBACK, .ns_depth = 1,
				       .exe_name = SS_EXE };
	char name[32];
	int err;

	err = xp_synth_open_stream(&p->gpu, dir, "gpu", XP_STREAM_GPU, p->pid);
	for (int i = 0; !err && i < SCALE_KERNELS + 3; i++) {
		const char *s = i == 0 ? "cudaLaunchKernel" : i == 1 ? "cudaGraphLaunch" : i == 2 ? exe :
			name;
		uint32_t id = i == 0 ? SS_LAUNCH : i == 1 ? SS_GRAPH : i == 2 ? SS_EXE :
			(uint32_t)(SS_KERNEL0 + i - 3);
		struct xp_gpu_string g = { .id = id };

		/* mangled as nvcc does: _Z8gemm_042PfS_i is gemm_042(float*, float*, int) */
		snprintf(name, sizeof(name), "_Z8gemm_%03dPfS_i", i - 3);
		g.len = (uint32_t)strlen(s);
		err = xp_writer_append(p->gpu, XP_REC_GPU_STRING, &g, sizeof(g), s, g.len);
	}
	if (!err)
		err = xp_writer_append(p->gpu, XP_REC_GPU_PROCESS, &proc, sizeof(proc), NULL, 0);
	return err;
}

static int scale_kernel(struct xp_writer *g, uint64_t start, uint64_t corr, unsigned k,
			uint32_t graph, uint64_t node)
{
	/* each kernel name has its own typical duration, 2 us .. 200 us */
	struct xp_gpu_kernel r = { .start = start, .correlation_id = corr, .graph_id = graph,
				   .graph_node_id = node, .context = 1, .stream = graph ? 14 : 7,
				   .grid = { 128, 1, 1 }, .block = { 256, 1, 1 }, .registers = 32,
				   .dynamic_shared = 1024, .name = SS_KERNEL0 + k };

	r.end = start + 2000 + (k * 7919u) % 198000 + (corr * 31) % 500;
	return xp_writer_append(g, XP_REC_GPU_KERNEL, &r, sizeof(r), NULL, 0);
}

/* One CUDA call at ts on thread t: the API record, its kernels (a graph
 * replay every SCALE_GRAPH_EVERY calls), and the uprobe launch record unless
 * it was lost (5%) or claims another thread (0.1%). */
static int scale_launch(struct scale_proc *p, struct xp_writer *cpu, uint64_t ts, uint32_t tid,
			const uint64_t *site, unsigned depth, uint64_t r)
{
	uint64_t corr = ++p->corr;
	int graph = corr % SCALE_GRAPH_EVERY == 0;
	struct xp_gpu_api a = { .start = ts - 2000, .end = ts + 6000, .correlation_id = corr,
				.pid = p->pid, .tid = tid, .cbid = graph ? 311 : 211,
				.name = graph ? SS_GRAPH : SS_LAUNCH };
	struct { struct xp_launch l; uint64_t ips[XP_MAX_STACK_DEPTH]; } rec = {
		.l = { .ts = ts - 1000, .correlation_id = corr, .pid = p->pid,
		       .tid = r % 1000 == 7 ? tid + 1 : tid, .cpu = tid % 4, .cbid = a.cbid,
		       .stack = { .user_depth = (uint16_t)depth } } };
	int err = xp_writer_append(p->gpu, XP_REC_GPU_API, &a, sizeof(a), NULL, 0);

	for (int n = 0; !err && n < (graph ? SCALE_GRAPH_NODES : 1); n++)
		err = scale_kernel(p->gpu, ts + 20000 + 3000ull * (uint64_t)n, corr,
				   (unsigned)((graph ? corr / SCALE_GRAPH_EVERY + (uint64_t)n : r) %
					      SCALE_KERNELS),
				   graph ? (uint32_t)(1 + corr / SCALE_GRAPH_EVERY % 4) : 0,
				   graph ? (uint64_t)n + 1 : 0);
	if (err || r % 100 < 5)
		return err;
	memcpy(rec.ips, site, depth * sizeof(*site));
	return xp_writer_append(cpu, XP_REC_LAUNCH, &rec.l, sizeof(rec.l), rec.ips,
				depth * sizeof(*site));
}

int xp_synth_write_scale(const struct xp_synth *s, const char *dir, uint64_t n, uint64_t seed)
{
	struct scale_proc procs[2] = { { .pid = 1000 }, { .pid = 2000 } };
	struct xp_writer *w = NULL;
	uint64_t (*pool)[40] = NULL, k[3] = { K_SCHED, K_WAIT + 1, K_SYSCALL + 1 };
	uint8_t depth[POOL];
	uint64_t state = seed ? seed : 1, ts = 1000000000, launches = 0;
	int err = 0;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	if (!s->nfuncs)
		return -ENOEXEC;
	pool = calloc(POOL, sizeof(*pool));
	if (!pool)
		return -ENOMEM;
	/* deep stacks sharing their outer frames, as in xp_synth_write_bench */
	for (int i = 0; i < POOL; i++) {
		int d = 10 + (int)(lcg(&state) % 31), from = i ? (int)(lcg(&state) % (unsigned)i) : 0;
		int keep = i && lcg(&state) % 4 ? depth[from] * 3 / 4 : 0;

		depth[i] = (uint8_t)d;
		if (keep > d)
			keep = d;
		for (int j = 0; j < keep; j++)
			pool[i][d - 1 - j] = pool[from][depth[from] - 1 - j];
		for (int j = 0; j < d - keep; j++) {
			const struct xp_synth_func *f = &s->funcs[lcg(&state) % (unsigned)s->nfuncs];
			uint64_t off = f->size > 8 ? lcg(&state) % (f->size - 1) + 1 : 1;

			pool[i][j] = vaddr_to_ip(s, f->in_lib, f->vaddr + off);
		}
	}
	err = xp_synth_open_stream(&w, dir, "cpu", XP_STREAM_CPU, 0);
	for (int i = 0; i < 2 && !err; i++)
		err = scale_gpu_open(&procs[i], dir, s->exe);
	for (int t = 0; t < SCALE_THREADS && !err; t++)
		err = xp_synth_add_comm(w, ts, t < 24 ? 1000 : 2000, scale_tid(t), scale_comm(t));
	if (!err)
		err = xp_synth_map_fixture(s, w, ts, 1000, 1);
	if (!err)
		err = xp_synth_map_fixture(s, w, ts, 2000, 1);
	for (uint64_t i = 0; i < n && !err; i++) {
		uint64_t r = lcg(&state);
		/* the launching threads (0, 1, 2 and python's 24) are the busiest: 40% */
		int l = (int)(r / 10 % SCALE_LAUNCHERS);
		int t = r % 10 < 4 ? (l < 3 ? l : 24) : (int)(r / 10 % SCALE_THREADS);
		int p = (int)(r % 100 < 70 ? lcg(&state) % 64 : lcg(&state) % POOL);

		ts += 31250;        /* 32 threads at 1 kHz */
		/* one CUDA call per 10 samples, on a launching thread, around this time */
		if (i % 10 == 5) {
			int lt = (int)(launches++ % SCALE_LAUNCHERS);
			uint32_t tid = lt < 3 ? scale_tid(lt) : scale_tid(24);
			int site = (int)(lcg(&state) % SCALE_SITES);

			err = scale_launch(&procs[lt < 3 ? 0 : 1], w, ts, tid, pool[site], depth[site],
					   lcg(&state));
		}
		if (!err)
			err = xp_synth_add_sample(w, ts, t < 24 ? 1000 : 2000, scale_tid(t), (uint32_t)t % 4,
					 scale_comm(t), k,
					 i % 8 == 0 ? 3 : 0, pool[p], depth[p]);
	}
	err = xp_writer_close(w) ?: err;
	for (int i = 0; i < 2; i++) {
		/* the clean end the library writes at exit */
		struct xp_gpu_status done = { .ts = ts, .code = XP_GPU_ST_STOPPED };

		if (!err)
			err = xp_writer_append(procs[i].gpu, XP_REC_GPU_STATUS, &done, sizeof(done),
					       NULL, 0);
		err = xp_writer_close(procs[i].gpu) ?: err;
	}
	if (!err)
		err = xp_synth_write_text(dir, "kallsyms", xp_synth_kallsyms);
	if (!err)
		err = write_meta(dir, n, 0);
	free(pool);
	return err;
}

/* ---- a Python program's launches (launch-PID.xpr with Python stacks) ---- */

#define PY_PID 4000
#define PY_MAX 8                    /* Python frames per stack here */

struct py_site {
	struct xp_pyframe f[PY_MAX];
	unsigned n;
	const struct xp_pycode_fx *code[PY_MAX];
};

static const struct xp_pycode_fx *py_code(const struct xp_pyfixture *fx, const char *qual)
{
	const struct xp_pycode_fx *c = xp_pyfixture_find(fx, qual);
	const char *dot = strrchr(qual, '.');

	return c || !dot ? c : xp_pyfixture_find(fx, dot + 1);     /* 3.10: co_name */
}

/* The Python stack of the launches, innermost first: leaf <- Model.forward
 * (entered from C, as nn.Module.__call__ does) <- main <- <module>; from 3.11
 * a Python-to-Python call stays in one evaluator activation, in 3.10 every
 * frame has its own. */
static int py_site_build(const struct xp_pyfixture *fx, struct py_site *site)
{
	static const struct { const char *qual; int line; } want[] = {
		{ "leaf", XP_SYNTH_PY_LINE_LEAF }, { "Model.forward", XP_SYNTH_PY_LINE_FORWARD },
		{ "main", XP_SYNTH_PY_LINE_MAIN }, { "<module>", XP_SYNTH_PY_LINE_MODULE },
	};

	site->n = 0;
	for (unsigned i = 0; i < 4; i++) {
		const struct xp_pycode_fx *c = py_code(fx, want[i].qual);
		int64_t off = c ? xp_pyfixture_offset_of(c, want[i].line) : -1;

		if (off < 0)
			return -ENOENT;
		site->code[i] = c;
		site->f[i].code_id = 0x1000 + (uint64_t)(c - fx->codes);
		site->f[i].instr_offset = (uint32_t)off;
		site->f[i].flags = c->version == 0x030a || i == 1 || i == 3 ? XP_PYFRAME_ENTRY : 0;
		site->n++;
	}
	return 0;
}

static int py_code_rec(struct xp_writer *w, const struct xp_pycode_fx *c, uint64_t code_id)
{
	struct xp_pycode r = { .code_id = code_id, .pid = PY_PID, .first_line = c->first_line,
			       .py_version = c->version,
			       .filename_len = (uint16_t)strlen(c->filename),
			       .qualname_len = (uint16_t)strlen(c->qualname),
			       .linetable_len = (uint32_t)c->table_len };
	size_t n = r.filename_len + r.qualname_len + c->table_len;
	char *tail = malloc(n + 1);
	int err;

	if (!tail)
		return -ENOMEM;
	memcpy(tail, c->filename, r.filename_len);
	memcpy(tail + r.filename_len, c->qualname, r.qualname_len);
	memcpy(tail + r.filename_len + r.qualname_len, c->table, c->table_len);
	err = xp_writer_append(w, XP_REC_PYCODE, &r, sizeof(r), tail, n);
	free(tail);
	return err;
}

/* One launch: the API record and a kernel in gpu, the launch record with
 * its native stack (uips, leaf first) and, unless site is NULL, the Python
 * stack the library took at the same call. */
static int py_launch(struct scale_proc *p, struct xp_writer *w, uint64_t ts, uint32_t tid,
		     const uint64_t *uips, unsigned nu, const struct py_site *site, unsigned k)
{
	uint64_t corr = ++p->corr;
	struct xp_gpu_api a = { .start = ts - 2000, .end = ts + 6000, .correlation_id = corr,
				.pid = PY_PID, .tid = tid, .cbid = 211, .name = SS_LAUNCH };
	struct xp_launch l = { .ts = ts - 1000, .correlation_id = corr, .pid = PY_PID, .tid = tid,
			       .cbid = 211, .stack = { .user_depth = (uint16_t)nu } };
	struct xp_pystack ps = { .ts = l.ts, .correlation_id = corr, .pid = PY_PID, .tid = tid };
	int err = xp_writer_append(p->gpu, XP_REC_GPU_API, &a, sizeof(a), NULL, 0);

	if (!err)
		err = scale_kernel(p->gpu, ts + 20000, corr, k, 0, 0);
	if (!err)
		err = xp_writer_append(w, XP_REC_LAUNCH, &l, sizeof(l), uips, nu * sizeof(*uips));
	if (!err && site) {
		ps.nframes = (uint16_t)site->n;
		err = xp_writer_append(w, XP_REC_PYSTACK, &ps, sizeof(ps), site->f,
				       site->n * sizeof(site->f[0]));
	}
	return err;
}

int xp_synth_write_python(const struct xp_synth *s, const char *dir, const char *fixture)
{
	struct scale_proc proc = { .pid = PY_PID };
	struct xp_writer *cpu = NULL, *w = NULL;
	struct xp_pyfixture *fx = NULL;
	struct py_site site;
	char path[4096], perfmap[1024];
	uint64_t ts = 1000000000, u[32];
	unsigned nu = 0, groups = 0, used = 0;
	int err;

	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	err = xp_pyfixture_load(&fx, fixture);
	if (!err)
		err = py_site_build(fx, &site);
	if (err)
		goto out;
	err = xp_synth_open_stream(&cpu, dir, "cpu", XP_STREAM_CPU, 0);
	if (!err)
		err = xp_synth_add_comm(cpu, ts, PY_PID, PY_PID, "python3");
	if (!err)
		err = xp_synth_add_comm(cpu, ts, PY_PID, PY_PID + 1, "pt_worker");
	if (!err)
		err = xp_synth_map_fixture(s, cpu, ts, PY_PID, 1);
	if (!err)
		err = xp_synth_add_mmap(cpu, ts, PY_PID, XP_SYNTH_JIT_BASE, 0x10000, 0, "//anon", NULL, 0, 0);
	err = xp_writer_close(cpu) ?: err;
	if (err)
		goto out;
	err = scale_gpu_open(&proc, dir, s->exe);
	if (!err)
		err = xp_synth_open_stream(&w, dir, "launch", XP_STREAM_CPU, PY_PID);
	if (!err) {
		struct xp_pyinfo info = { .ts = ts, .pid = PY_PID,
					  .py_hexversion = (uint32_t)site.code[0]->version << 16 | 0x01f0,
					  .flags = XP_PYINFO_SUPPORTED };

		err = xp_writer_append(w, XP_REC_PYINFO, &info, sizeof(info), NULL, 0);
	}
	/* each code object once, as the library writes them */
	for (unsigned i = 0; i < site.n && !err; i++)
		err = py_code_rec(w, site.code[i], site.f[i].code_id);
	/* the native stack of the Python thread, leaf first: the CUDA call, the
	 * framework's C++, then per evaluator activation (innermost first) its
	 * _PyEval_EvalFrameDefault, from 3.12 the perf trampoline that called it,
	 * and a C call between activations; the interpreter's main at the root */
	u[nu++] = xp_synth_ip(s, "xp_lib_leaf", 2);
	u[nu++] = xp_synth_return_ip(s, "xp_lib_middle");
	for (unsigned i = 0; i < site.n; i++)
		groups += !!(site.f[i].flags & XP_PYFRAME_ENTRY);
	for (unsigned g = 0; g < site.n && !err; g++) {
		if (!(site.f[g].flags & XP_PYFRAME_ENTRY))
			continue;
		u[nu++] = xp_synth_return_ip(s, "_PyEval_EvalFrameDefault");
		if (site.code[0]->version >= 0x030c) {
			used += (unsigned)snprintf(perfmap + used, sizeof(perfmap) - used,
						   "%llx 40 py::%s:%s\n",
						   (unsigned long long)XP_SYNTH_JIT_BASE + 0x100 * (g + 1),
						   site.code[g]->qualname, site.code[g]->filename);
			u[nu++] = XP_SYNTH_JIT_BASE + 0x100 * (g + 1) + 0x20;
		}
		if (--groups)
			u[nu++] = xp_synth_return_ip(s, "xp_parse");
	}
	u[nu++] = xp_synth_return_ip(s, "main");
	/* three launches from there, unwound all the way */
	for (int i = 0; i < 3 && !err; i++)
		err = py_launch(&proc, w, ts += 100000, PY_PID, u, nu, &site, 0);
	/* two whose unwind stopped in the framework (its module missing here) */
	for (int i = 0; i < 2 && !err; i++)
		err = py_launch(&proc, w, ts += 100000, PY_PID, u, 2, &site, 1);
	/* one on a thread without Python, one whose frames could not be read */
	if (!err) {
		uint64_t c[3] = { u[0], u[1], xp_synth_return_ip(s, "xp_idle") };
		struct xp_lost lost = { .ts = ts, .kind = XP_REC_PYSTACK,
					.reason = XP_LOST_PY_NO_THREAD, .count = 1 };

		err = py_launch(&proc, w, ts += 100000, PY_PID + 1, c, 3, NULL, 2);
		if (!err)
			err = xp_writer_append(w, XP_REC_LOST, &lost, sizeof(lost), NULL, 0);
		lost.reason = XP_LOST_PY_UNREADABLE;
		if (!err)
			err = py_launch(&proc, w, ts += 100000, PY_PID, u, nu, NULL, 3);
		if (!err)
			err = xp_writer_append(w, XP_REC_LOST, &lost, sizeof(lost), NULL, 0);
	}
	err = xp_writer_close(w) ?: err;
	if (!err) {
		struct xp_gpu_status done = { .ts = ts, .code = XP_GPU_ST_STOPPED };

		err = xp_writer_append(proc.gpu, XP_REC_GPU_STATUS, &done, sizeof(done), NULL, 0);
	}
	err = xp_writer_close(proc.gpu) ?: err;
	if (!err && used) {
		snprintf(path, sizeof(path), "perf-%u.map", PY_PID);
		err = xp_synth_write_text(dir, path, perfmap);
	}
	if (!err)
		err = xp_synth_write_text(dir, "kallsyms", xp_synth_kallsyms);
	if (!err)
		err = write_meta(dir, 0, 0);
out:
	xp_pyfixture_free(fx);
	return err;
}
