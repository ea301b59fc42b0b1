/* load.c - run directory -> SQLite rows, symbolized; see load.h.
 *
 * The hot path is one CPU sample: its raw stack is first looked up whole in
 * a cache keyed by a 128-bit hash of (pid, IPs), which hits for the vast
 * majority of samples of a real program; only a miss resolves IPs to frames
 * (cached per module offset) and walks the stack prefix tree. Every distinct
 * string, frame and stack node is inserted once, when first seen.
 */
#include "load.h"
#include "launch.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db_schema.h"
#include "gpu_ingest.h"
#include "kallsyms.h"
#include "mappings.h"
#include "runmeta.h"
#include "runnames.h"
#include "gtid.h"
#include "perfmap.h"
#include "pysplice.h"
#include "pystacks.h"
#include "pystacks_db.h"
#include "runfile.h"
#include "runfmt_gpu.h"
#include "runfmt_py.h"
#include "stacktree.h"
#include "strtab.h"
#include "symbolize.h"
#include "unwind.h"
#include "utf8.h"
#include "u64map.h"

#define MAX_STREAMS 4096            /* *.xpr files per run */
#define PROGRESS_EVERY 65536        /* records between progress calls */
#define NAME_MAX_LEN 1024           /* longest symbol name kept */

/* ipcache key tags (top byte of k1): what k2 means */
#define TAG_MODULE  (1ull << 56)    /* k1: module id, k2: file offset */
#define TAG_JIT     (2ull << 56)    /* k1: pid, k2: address (perf map) */
#define TAG_KERNEL  (3ull << 56)    /* k2: kernel address */
#define TAG_UNKNOWN (4ull << 56)    /* k1: pid, k2: address with no mapping */
#define TAG_PYTHON  (5ull << 56)    /* k1: code index (pystacks.h), k2: instruction offset */

/* An ipcache value is a frame id, or with CHAIN set an inline chain:
 * (start in L->chains) << 5 | frame count */
#define CHAIN (1ull << 62)

enum { STMT_STRING, STMT_FRAME, STMT_STACK, STMT_SAMPLE, STMT_TASK, STMT_MAPPING,
       STMT_MODULE, STMT_LOSS, STMT_META, STMT_COUNT, STMT_WARNING, STMT_THREAD,
       STMT_PROCESS, STMT_ENV, STMT_LAUNCH, STMT_SWITCH, NSTMT };

static const char *const stmt_sql[NSTMT] = {
	[STMT_STRING] = "INSERT INTO StringIds(id, value) VALUES (?, ?)",
	[STMT_FRAME] = "INSERT INTO xp_frames(id, symbol, module, kind) VALUES (?, ?, ?, ?)",
	[STMT_STACK] = "INSERT INTO xp_stacks(id, parent, frame, depth) VALUES (?, ?, ?, ?)",
	[STMT_SAMPLE] = "INSERT INTO xp_samples(ts, pid, tid, cpu, stack_id, period)"
			" VALUES (?, ?, ?, ?, ?, ?)",
	[STMT_TASK] = "INSERT INTO xp_tasks(ts, event, pid, tid, ppid, ptid, name)"
		      " VALUES (?, ?, ?, ?, ?, ?, ?)",
	[STMT_MAPPING] = "INSERT INTO xp_mappings(pid, start, end, pgoff, ts, from_proc, module)"
			 " VALUES (?, ?, ?, ?, ?, ?, ?)",
	[STMT_MODULE] = "INSERT INTO xp_modules(id, path, build_id, status) VALUES (?, ?, ?, ?)",
	[STMT_LOSS] = "INSERT INTO xp_losses(ts, kind, reason, count, source) VALUES (?, ?, ?, ?, ?)",
	[STMT_META] = "INSERT INTO META_DATA_EXPORT(name, value) VALUES (?, ?)",
	[STMT_COUNT] = "INSERT INTO xp_record_counts(stream, kind, records) VALUES (?, ?, ?)",
	[STMT_WARNING] = "INSERT INTO xp_warnings(file, offset, message) VALUES (?, ?, ?)",
	[STMT_THREAD] = "INSERT INTO ThreadNames(nameId, priority, globalTid) VALUES (?, 0, ?)",
	[STMT_PROCESS] = "INSERT INTO PROCESSES(globalPid, pid, name) VALUES (?, ?, ?)",
	[STMT_ENV] = "INSERT INTO TARGET_INFO_SYSTEM_ENV(name, value) VALUES (?, ?)",
	[STMT_LAUNCH] = XP_LAUNCH_INSERT_SQL,
	[STMT_SWITCH] = "INSERT INTO xp_switches(ts, duration, pid, tid, cpu, prev_state, stack_id)"
			" VALUES (?, ?, ?, ?, ?, ?, ?)",
};

struct node_info {
	uint16_t depth;             /* frames from the root, this one included */
	uint16_t resolved;          /* of which symbolized */
};

struct loader {
	sqlite3 *db;
	const struct xp_load_opts *o;
	struct xp_load_result *res;
	sqlite3_stmt *st[NSTMT];
	struct xp_strtab *strs;
	struct xp_u64map frames;    /* (symbol << 3 | kind, module) -> frame id */
	int64_t next_frame;
	uint8_t *frame_resolved;    /* by frame id: bit 0 symbolized, then enum xp_pyrole << 1 */
	size_t frame_cap;
	struct xp_stacktree tree;
	struct node_info *nodes;    /* by stack node id */
	size_t node_cap;
	struct xp_u64map ipcache;   /* TAG_* keys -> frame id */
	struct xp_u64map rawstacks; /* 128-bit hash of (pid, IPs) -> stack id */
	struct xp_mappings *maps;
	struct xp_symbolizer *sym;
	struct xp_unwinder *uw;     /* dwarf-mode stack copies */
	uint64_t walked[2 * XP_MAX_STACK_DEPTH]; /* kernel IPs + unwound user IPs */
	struct xp_kallsyms *ksyms;
	struct xp_u64map perfmaps;  /* pid -> index + 1 in pmaps, or UINT64_MAX: none */
	struct xp_perfmap **pmaps;
	size_t npmaps;
	struct xp_u64map pm_inodes; /* (dev, inode) -> index + 1 in pmaps, 0: unusable */
	struct xp_perfmap_budget pm_budget; /* what the run's maps may still take */
	struct xp_u64map threads;   /* (pid, tid) -> comm string id */
	struct xp_u64map procs;     /* (pid, 0) -> name string id, 0 until named */
	uint64_t counts[128];       /* records per type in the current stream */
	uint64_t lost_records;
	uint64_t bytes_done, bytes_total;
	struct xp_read_budget budget; /* what the run's readers may still take */
	uint64_t *stream_records;   /* by stream: records pass 1 took, for pass 2 */
	int64_t kallsyms_bytes;     /* meta.json's size of the kallsyms copy, or -1 */
	const char *ksyms_cut;      /* why the copy is taken as truncated, or NULL */
	uint64_t ksyms_beyond;      /* kernel addresses past its last symbol */
	int64_t *chains;            /* frame ids of inline chains, root first */
	size_t nchains, chains_cap;
	char (*inl)[XP_INLINE_NAME_LEN]; /* scratch for inline names */
	int64_t kernel_module, unknown_module, jit_module;
	struct xp_pystore *py;      /* Python stacks of launches (pystacks.h) */
	uint32_t stream_pid;        /* header pid of the stream being read */
	int64_t gap_frame;          /* the gap frame of pysplice.h, 0 until needed */
	int64_t py_native[2 * XP_MAX_STACK_DEPTH * (XP_INLINE_MAX + 1)]; /* splice scratch */
	uint8_t py_role[2 * XP_MAX_STACK_DEPTH * (XP_INLINE_MAX + 1)];
	unsigned py_nnative;
	int64_t py_out[2 * XP_MAX_STACK_DEPTH * (XP_INLINE_MAX + 1) + XP_PY_MAX_FRAMES + 1];
	int collecting;             /* stack_id collects user frames into py_native */
	char name[NAME_MAX_LEN + 64];
};

static int db_fail(struct loader *L, const char *what)
{
	snprintf(L->res->error, sizeof(L->res->error), "database: %s: %s", what,
		 sqlite3_errmsg(L->db));
	return -EIO;
}

static int step(struct loader *L, int which)
{
	sqlite3_stmt *s = L->st[which];
	int rc = sqlite3_step(s);

	sqlite3_reset(s);
	if (rc != SQLITE_DONE)
		return db_fail(L, stmt_sql[which]);
	return 0;
}

/* Records a warning (kept in xp_warnings and, for the first few, in res). */
static int warn(struct loader *L, const char *file, uint64_t offset, const char *fmt, ...)
{
	char raw[XP_LOAD_MSG_LEN], msg[XP_LOAD_MSG_LEN], name[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* paths of a received run, and a message cut inside a character */
	xp_utf8_sanitize(msg, sizeof(msg), raw, strlen(raw));
	xp_utf8_sanitize(name, sizeof(name), file, strlen(file));
	file = name;
	if (L->res->nwarnings < XP_LOAD_WARNINGS_KEPT)
		snprintf(L->res->warnings[L->res->nwarnings], XP_LOAD_MSG_LEN, "%s", msg);
	L->res->nwarnings++;
	sqlite3_bind_text(L->st[STMT_WARNING], 1, file, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(L->st[STMT_WARNING], 2, (int64_t)offset);
	sqlite3_bind_text(L->st[STMT_WARNING], 3, msg, -1, SQLITE_TRANSIENT);
	return step(L, STMT_WARNING);
}

static int intern(struct loader *L, const char *s, size_t len, int64_t *id)
{
	char *clean = NULL;
	int fresh, err;

	/* names from a received run (symbols, paths, perf maps, a name cut at
	 * NAME_MAX_LEN) reach the database as valid UTF-8: U+FFFD for the rest */
	if (!xp_utf8_valid(s, len)) {
		clean = malloc(3 * len + 1);
		if (!clean)
			return -ENOMEM;
		len = xp_utf8_sanitize(clean, 3 * len + 1, s, len);
		s = clean;
	}
	err = xp_strtab_intern(L->strs, s, len, id, &fresh);
	if (!err && fresh) {
		sqlite3_bind_int64(L->st[STMT_STRING], 1, *id);
		sqlite3_bind_text(L->st[STMT_STRING], 2, s, (int)len, SQLITE_STATIC);
		err = step(L, STMT_STRING);
	}
	free(clean);
	return err;
}

static int intern_str(struct loader *L, const char *s, int64_t *id)
{
	return intern(L, s, strlen(s), id);
}

static int frame_id(struct loader *L, const char *symbol, int64_t module,
		    enum xp_frame_kind kind, int64_t *id)
{
	int64_t sym;
	uint64_t *slot;
	int fresh, err;

	err = intern_str(L, symbol, &sym);
	if (err)
		return err;
	err = xp_u64map_upsert(&L->frames, (uint64_t)sym << 3 | kind, (uint64_t)module,
			       &slot, &fresh);
	if (err)
		return err;
	if (!fresh) {
		*id = (int64_t)*slot;
		return 0;
	}
	*id = *slot = (uint64_t)L->next_frame++;
	if ((size_t)*id >= L->frame_cap) {
		size_t cap = L->frame_cap ? L->frame_cap * 2 : 4096;
		uint8_t *p = realloc(L->frame_resolved, cap);

		if (!p)
			return -ENOMEM;
		L->frame_resolved = p;
		L->frame_cap = cap;
	}
	L->frame_resolved[*id] = (uint8_t)((kind == XP_FRAME_USER || kind == XP_FRAME_KERNEL ||
					    kind == XP_FRAME_JIT || kind == XP_FRAME_INLINED ||
					    kind == XP_FRAME_PYTHON) |
					   xp_pyrole_of(kind, symbol) << 1);
	sqlite3_bind_int64(L->st[STMT_FRAME], 1, *id);
	sqlite3_bind_int64(L->st[STMT_FRAME], 2, sym);
	sqlite3_bind_int64(L->st[STMT_FRAME], 3, module);
	sqlite3_bind_int(L->st[STMT_FRAME], 4, kind);
	return step(L, STMT_FRAME);
}

static const char *base_name(const char *path)
{
	if (!*path || (path[0] == '/' && path[1] == '/'))
		return "[anon]";    /* "//anon" as perf writes anonymous memory */
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

static int kernel_frame(struct loader *L, uint64_t ip, int64_t *id)
{
	const char *mod = NULL, *name;
	uint64_t *slot;
	int64_t module = L->kernel_module;
	int fresh, err;

	err = xp_u64map_upsert(&L->ipcache, TAG_KERNEL, ip, &slot, &fresh);
	if (err)
		return err;
	if (!fresh) {
		*id = (int64_t)*slot;
		return 0;
	}
	name = xp_kallsyms_lookup(L->ksyms, ip, &mod);
	if (mod) {
		snprintf(L->name, sizeof(L->name), "[%s]", mod);
		err = intern_str(L, L->name, &module);
		if (err)
			return err;
	}
	if (name) {
		xp_demangle(name, L->name, NAME_MAX_LEN);   /* Rust/C++ in modules */
		err = frame_id(L, L->name, module, XP_FRAME_KERNEL, id);
	} else {
		L->ksyms_beyond += xp_kallsyms_beyond(L->ksyms, ip);
		snprintf(L->name, sizeof(L->name), "0x%" PRIx64, ip);
		err = frame_id(L, L->name, module, XP_FRAME_KERNEL_UNRESOLVED, id);
	}
	if (err)
		return err;
	/* the slot pointer may have moved if frame_id grew nothing; re-find */
	*xp_u64map_find(&L->ipcache, TAG_KERNEL, ip) = (uint64_t)*id;
	return 0;
}

/* Parses the perf map open on fd, within the run's budget: 0 and *out,
 * -E2BIG, -errno. */
static int perfmap_parse_fd(struct loader *L, int fd, struct xp_perfmap **out)
{
	FILE *f = fdopen(fd, "r");
	int err;

	if (!f) {
		err = -errno;
		close(fd);
		return err;
	}
	err = xp_perfmap_parse_budget(out, f, &L->pm_budget);
	fclose(f);
	return err;
}

/* The run's perf-PID.map of pid, loaded on first use, or NULL. One file
 * hard-linked under several pids is parsed once and shared. */
static int perfmap_of(struct loader *L, uint32_t pid, struct xp_perfmap **out)
{
	struct xp_perfmap *pm = NULL, **arr;
	char path[4096];
	uint64_t *slot, *same;
	struct stat st;
	int fresh, err, fd;

	*out = NULL;
	err = xp_u64map_upsert(&L->perfmaps, pid, 0, &slot, &fresh);
	if (err)
		return err;
	if (!fresh) {
		if (*slot != UINT64_MAX)
			*out = L->pmaps[*slot - 1];
		return 0;
	}
	*slot = UINT64_MAX;
	snprintf(path, sizeof(path), "%s/perf-%" PRIu32 ".map", L->o->run_dir, pid);
	fd = xp_run_file_open(path);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return warn(L, path, 0, "%s: %s; its JIT frames stay unresolved", path,
			    xp_run_file_strerror(fd));
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return warn(L, path, 0, "%s: %s; its JIT frames stay unresolved", path,
			    strerror(-err));
	}
	err = xp_u64map_upsert(&L->pm_inodes, (uint64_t)st.st_dev, (uint64_t)st.st_ino, &same,
			       &fresh);
	if (err) {
		close(fd);
		return err;
	}
	if (!fresh) {
		close(fd);
		if (*same)
			*out = L->pmaps[*same - 1];
		*xp_u64map_find(&L->perfmaps, pid, 0) = *same ? *same : UINT64_MAX;
		return 0;
	}
	*same = 0;          /* until it parses: a link to a bad map is bad too */
	err = perfmap_parse_fd(L, fd, &pm);
	if (err == -ENOMEM)
		return err;
	if (err == -E2BIG)
		return warn(L, path, 0, "%s: the run's perf maps take more than %llu MiB or %llu"
			    " lines in all; its JIT frames stay unresolved", path,
			    (unsigned long long)(XP_PERFMAP_RUN_BYTES >> 20),
			    (unsigned long long)XP_PERFMAP_RUN_LINES);
	if (err)
		return warn(L, path, 0, "%s: %s; its JIT frames stay unresolved", path,
			    strerror(-err));
	if (xp_perfmap_skipped(pm))
		err = warn(L, path, 0, "%s: %zu lines that do not parse were skipped", path,
			   xp_perfmap_skipped(pm));
	arr = realloc(L->pmaps, (L->npmaps + 1) * sizeof(*arr));
	if (!arr) {
		xp_perfmap_free(pm);
		return -ENOMEM;
	}
	L->pmaps = arr;
	L->pmaps[L->npmaps++] = pm;
	*xp_u64map_find(&L->perfmaps, pid, 0) = L->npmaps;
	*xp_u64map_find(&L->pm_inodes, (uint64_t)st.st_dev, (uint64_t)st.st_ino) = L->npmaps;
	*out = pm;
	return err;
}

/* If functions are inlined at off, replaces *ref (the enclosing function's
 * frame) by a chain: the function, then the inlined ones, outermost first. */
static int inline_chain(struct loader *L, uint32_t mod, uint64_t off, int64_t module,
			int64_t *ref)
{
	int n = xp_symbolizer_inlines(L->sym, mod, off, L->inl, XP_INLINE_MAX);
	size_t start = L->nchains;
	int err;

	if (n <= 0)
		return 0;
	if (L->nchains + (size_t)n + 1 > L->chains_cap) {
		size_t cap = (L->chains_cap + (size_t)n + 1) * 2;
		int64_t *c = realloc(L->chains, cap * sizeof(*c));

		if (!c)
			return -ENOMEM;
		L->chains = c;
		L->chains_cap = cap;
	}
	L->chains[L->nchains++] = *ref;
	for (int i = n; i-- > 0;) {
		int64_t f;

		err = frame_id(L, L->inl[i], module, XP_FRAME_INLINED, &f);
		if (err)
			return err;
		L->chains[L->nchains++] = f;
	}
	*ref = (int64_t)(CHAIN | (uint64_t)start << 5 | (uint64_t)(n + 1));
	return 0;
}

static int resolve_user_frame(struct loader *L, uint32_t pid, const struct xp_mapping *m,
			      enum xp_module_status status, const char *path, uint64_t addr,
			      uint64_t k2, int64_t *id);

/* CLOCK_MONOTONIC ns: what symbolizing and unwinding cost, for info */
static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A user IP to a frame id (or an inline chain, see CHAIN). is_return: a caller frame, whose IP is the return
 * address after the call, which may be the first byte of the next function:
 * look up ip - 1 as perf does, so the calling function is found. */
static int user_frame(struct loader *L, uint32_t pid, uint64_t ts, uint64_t ip,
		      int is_return, int64_t *id)
{
	const struct xp_mapping *m = xp_mappings_lookup(L->maps, pid, ts, ip);
	uint64_t addr = is_return && ip ? ip - 1 : ip;
	uint64_t k1, k2, *slot, t0;
	enum xp_module_status status = XP_MODULE_ANON;
	const char *path = NULL;
	int fresh, err;

	if (m) {
		status = xp_symbolizer_status(L->sym, m->module);
		path = xp_symbolizer_path(L->sym, m->module);
	}
	if (m && status != XP_MODULE_ANON) {
		k1 = TAG_MODULE | m->module;
		k2 = addr - m->start + m->pgoff;
	} else {
		k1 = (m ? TAG_JIT : TAG_UNKNOWN) | pid;
		k2 = addr;
	}
	err = xp_u64map_upsert(&L->ipcache, k1, k2, &slot, &fresh);
	if (err)
		return err;
	if (!fresh) {
		*id = (int64_t)*slot;
		return 0;
	}
	L->res->addresses++;
	t0 = mono_ns();
	err = resolve_user_frame(L, pid, m, status, path, addr, k2, id);
	L->res->symbolize_ns += mono_ns() - t0;
	if (err)
		return err;
	*xp_u64map_find(&L->ipcache, k1, k2) = (uint64_t)*id;
	return 0;
}

/* A cache miss of user_frame: the module's symbols, the JIT map, or
 * module+offset when neither names the address. */
static int resolve_user_frame(struct loader *L, uint32_t pid, const struct xp_mapping *m,
			      enum xp_module_status status, const char *path, uint64_t addr,
			      uint64_t k2, int64_t *id)
{
	struct xp_perfmap *pm;
	int err;

	if (m && status != XP_MODULE_ANON) {
		int64_t module;

		err = intern_str(L, path, &module);
		if (err)
			return err;
		if (xp_symbolizer_lookup(L->sym, m->module, k2, L->name, NAME_MAX_LEN) == 0) {
			err = frame_id(L, L->name, module, XP_FRAME_USER, id);
			if (!err)
				err = inline_chain(L, m->module, k2, module, id);
		} else {
			/* never guess: the module and the offset in it */
			snprintf(L->name, sizeof(L->name), "%s+0x%" PRIx64, base_name(path), k2);
			err = frame_id(L, L->name, module, XP_FRAME_UNRESOLVED, id);
		}
	} else {
		const char *name = NULL;

		err = perfmap_of(L, pid, &pm);
		if (err)
			return err;
		if (pm)
			name = xp_perfmap_lookup(pm, addr);
		if (name) {
			snprintf(L->name, sizeof(L->name), "%.*s", NAME_MAX_LEN, name);
			err = frame_id(L, L->name, L->jit_module, XP_FRAME_JIT, id);
		} else if (m) {
			int64_t module;

			err = intern_str(L, path && *path ? path : "[anon]", &module);
			if (err)
				return err;
			snprintf(L->name, sizeof(L->name), "%s+0x%" PRIx64,
				 base_name(path ? path : ""), addr - m->start + m->pgoff);
			err = frame_id(L, L->name, module, XP_FRAME_UNRESOLVED, id);
		} else {
			snprintf(L->name, sizeof(L->name), "[unknown]+0x%" PRIx64, addr);
			err = frame_id(L, L->name, L->unknown_module, XP_FRAME_UNRESOLVED, id);
		}
	}
	return err;
}

/* Adds frame under parent in the prefix tree, inserting the node if new. */
static int tree_add(struct loader *L, int64_t parent, int64_t frame, int64_t *node)
{
	int fresh, err = xp_stacktree_add(&L->tree, parent, frame, node, &fresh);
	struct node_info info = { 1, L->frame_resolved[frame] & 1 };

	if (err || !fresh)
		return err;
	if ((size_t)*node >= L->node_cap) {
		size_t cap = L->node_cap ? L->node_cap * 2 : 4096;
		struct node_info *p = realloc(L->nodes, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		L->nodes = p;
		L->node_cap = cap;
	}
	if (parent) {
		info.depth = (uint16_t)(L->nodes[parent].depth + 1);
		info.resolved = (uint16_t)(L->nodes[parent].resolved + info.resolved);
	}
	L->nodes[*node] = info;
	sqlite3_bind_int64(L->st[STMT_STACK], 1, *node);
	sqlite3_bind_int64(L->st[STMT_STACK], 2, parent);
	sqlite3_bind_int64(L->st[STMT_STACK], 3, frame);
	sqlite3_bind_int(L->st[STMT_STACK], 4, info.depth);
	return step(L, STMT_STACK);
}

/* A user frame of a stack under construction: into the tree, or, while a
 * launch's Python stack waits to be spliced in, into L->py_native. */
static int user_add(struct loader *L, int64_t *node, int64_t frame)
{
	if (!L->collecting)
		return tree_add(L, *node, frame, node);
	if (L->py_nnative >= sizeof(L->py_role))
		return 0;       /* cannot happen: 127 frames of at most 31 each */
	L->py_native[L->py_nnative] = frame;
	L->py_role[L->py_nnative++] = L->frame_resolved[frame] >> 1;
	return 0;
}

static int py_splice(struct loader *L, const struct xp_pystack_view *py, int64_t *node, int *how);

/* The stack id of kernel + user IPs (each leaf first), root first in the tree:
 * outermost user caller ... user leaf, then kernel entry ... kernel leaf.
 * A launch's Python stack (py, else NULL) goes into the user part (pysplice.h). */
static int stack_id(struct loader *L, uint32_t pid, uint64_t ts, const uint64_t *ips,
		    unsigned nk, unsigned nu, const struct xp_pystack_view *py, int64_t *id)
{
	int cacheable = !xp_mappings_time_dependent(L->maps, pid);
	uint64_t h1 = 0, h2 = 0, *slot = NULL;
	int64_t node = 0, frame;
	int fresh = 1, err, how = 0;

	if (cacheable) {
		h1 = xp_hash64(pid ^ ((uint64_t)nk << 32) ^ ((uint64_t)nu << 48)) ^
		     (py ? xp_hash64(~(uint64_t)py->id) : 0);
		h2 = xp_hash64(h1 + 0x9e3779b97f4a7c15ull);
		for (unsigned i = 0; i < nk + nu; i++) {
			h1 = xp_hash64(h1 ^ ips[i]);
			h2 = xp_hash64(h2 + ips[i] * 0x9e3779b97f4a7c15ull);
		}
		err = xp_u64map_upsert(&L->rawstacks, h1, h2, &slot, &fresh);
		if (err)
			return err;
		if (!fresh) {
			/* bit 62: a Python stack joined above a gap */
			if (*slot >> 62)
				xp_pystore_joined_gap(L->py, pid);
			*id = (int64_t)(*slot & ~(3ull << 62));
			return 0;
		}
	}
	L->collecting = py != NULL;
	L->py_nnative = 0;
	for (unsigned i = nu; i-- > 0;) {
		err = user_frame(L, pid, ts, ips[nk + i], i != 0, &frame);
		if (err)
			return err;
		if ((uint64_t)frame & CHAIN) {
			size_t start = ((uint64_t)frame & ~CHAIN) >> 5, n = (uint64_t)frame & 31;

			for (size_t j = 0; j < n && !err; j++)
				err = user_add(L, &node, L->chains[start + j]);
		} else {
			err = user_add(L, &node, frame);
		}
		if (err)
			return err;
	}
	L->collecting = 0;
	if (py && (err = py_splice(L, py, &node, &how)))
		return err;
	if (how == XP_SPLICE_GAP)
		xp_pystore_joined_gap(L->py, pid);
	for (unsigned i = nk; i-- > 0;) {
		err = kernel_frame(L, ips[i], &frame);
		if (err)
			return err;
		err = tree_add(L, node, frame, &node);
		if (err)
			return err;
	}
	*id = node;
	if (cacheable)
		*xp_u64map_find(&L->rawstacks, h1, h2) = (uint64_t)node |
			(uint64_t)(how == XP_SPLICE_GAP) << 62;
	return 0;
}

/* The frame of a Python line, "train.py:42 forward" in module
 * /app/train.py (the code's file as recorded), cached per code and offset. */
static int py_frame(struct loader *L, const struct xp_pyframe_ref *f, int64_t *id)
{
	uint64_t k1 = TAG_PYTHON | f->code, k2 = f->code == XP_PYCODE_NONE ? 0 : f->offset, *slot;
	char name[XP_PYNAME_MAX];
	const char *file;
	int64_t module;
	int fresh, err = xp_u64map_upsert(&L->ipcache, k1, k2, &slot, &fresh);

	if (err)
		return err;
	if (!fresh) {
		*id = (int64_t)*slot;
		return 0;
	}
	xp_pystore_frame_name(L->py, f->code, f->offset, name, sizeof(name), &file);
	err = intern_str(L, file, &module);
	if (!err)
		err = frame_id(L, name, module, XP_FRAME_PYTHON, id);
	if (err)
		return err;
	*xp_u64map_find(&L->ipcache, k1, k2) = (uint64_t)*id;
	return 0;
}

/* The user frames collected in L->py_native with the Python stack spliced
 * in (pysplice.h), into the tree under *node. */
static int py_splice(struct loader *L, const struct xp_pystack_view *py, int64_t *node, int *how)
{
	int64_t frames[XP_PY_MAX_FRAMES];
	uint8_t entry[XP_PY_MAX_FRAMES];
	struct xp_splice_in in = { L->py_native, L->py_role, L->py_nnative, frames, entry,
				   py->n < XP_PY_MAX_FRAMES ? py->n : XP_PY_MAX_FRAMES,
				   py->truncated, 0 };
	unsigned n;
	int err = 0;

	for (unsigned i = 0; i < in.npy && !err; i++) {
		err = py_frame(L, &py->frames[i], &frames[i]);
		entry[i] = py->frames[i].entry;
	}
	if (!err && !L->gap_frame)
		err = frame_id(L, "[native frames not unwound]", L->unknown_module, XP_FRAME_GAP,
			       &L->gap_frame);
	in.gap = L->gap_frame;
	n = err ? 0 : xp_pysplice(&in, L->py_out, how);
	for (unsigned i = 0; i < n && !err; i++)
		err = tree_add(L, *node, L->py_out[i], node);
	return err;
}

static int thread_seen(struct loader *L, uint32_t pid, uint32_t tid, const char *comm,
		       int override)
{
	char name[XP_COMM_LEN + 1];
	uint64_t *slot;
	int64_t id;
	int fresh, err;

	err = xp_u64map_upsert(&L->threads, pid, tid, &slot, &fresh);
	if (err || (!fresh && !override))
		return err;
	memcpy(name, comm, XP_COMM_LEN);
	name[XP_COMM_LEN] = '\0';
	err = intern_str(L, name, &id);
	if (err)
		return err;
	*xp_u64map_find(&L->threads, pid, tid) = (uint64_t)id;
	/* a process is named after its main thread, else its first thread */
	err = xp_u64map_upsert(&L->procs, pid, 0, &slot, &fresh);
	if (err)
		return err;
	if (fresh || tid == pid || *slot == 0)
		*slot = (uint64_t)id;
	return 0;
}

/* a record kind of the CPU streams, by the one name table (runnames.h) */
static const char *kind_name(uint32_t type)
{
	const char *name = xp_rec_kind_name_in(type, XP_STREAM_CPU);

	return name ? name : "unknown";
}

static int task_row(struct loader *L, uint64_t ts, const char *event, uint32_t pid,
		    uint32_t tid, int64_t ppid, int64_t ptid, const char *name, int name_len)
{
	sqlite3_stmt *s = L->st[STMT_TASK];

	sqlite3_bind_int64(s, 1, (int64_t)ts);
	sqlite3_bind_text(s, 2, event, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 3, pid);
	sqlite3_bind_int64(s, 4, tid);
	if (ppid >= 0)
		sqlite3_bind_int64(s, 5, ppid);
	else
		sqlite3_bind_null(s, 5);
	if (ptid >= 0)
		sqlite3_bind_int64(s, 6, ptid);
	else
		sqlite3_bind_null(s, 6);
	if (name)
		sqlite3_bind_text(s, 7, name, name_len, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, 7);
	return step(L, STMT_TASK);
}

/* Pass 1: tasks and mappings. 1 handled, 0 not this pass, -EBADMSG malformed. */
static int pass1_record(struct loader *L, const struct xp_record_header *h)
{
	const void *p = xp_record_payload(h);
	uint32_t len = xp_record_payload_len(h);

	switch (h->type) {
	case XP_REC_FORK:
	case XP_REC_EXIT: {
		const struct xp_task *t = p;
		int err;

		if (len < sizeof(*t))
			return -EBADMSG;
		err = task_row(L, t->ts, h->type == XP_REC_FORK ? "fork" : "exit", t->pid,
			       t->tid, t->ppid, t->ptid, NULL, 0);
		if (!err && h->type == XP_REC_FORK)
			err = xp_mappings_fork(L->maps, t->pid, t->ppid, t->ts);
		return err ? err : 1;
	}
	case XP_REC_COMM: {
		const struct xp_comm *c = p;
		int err;

		if (len < sizeof(*c))
			return -EBADMSG;
		err = task_row(L, c->ts, "comm", c->pid, c->tid, -1, -1, c->comm,
			       (int)strnlen(c->comm, XP_COMM_LEN));
		if (!err)
			err = thread_seen(L, c->pid, c->tid, c->comm, 1);
		return err ? err : 1;
	}
	case XP_REC_EXEC: {
		const struct xp_exec *e = p;
		const char *path;
		int err;

		if (len < sizeof(*e) || !(path = xp_record_path(h, sizeof(*e), e->path_len)))
			return -EBADMSG;
		err = task_row(L, e->ts, "exec", e->pid, e->tid, -1, e->old_tid, path, -1);
		if (!err)
			err = xp_mappings_exec(L->maps, e->pid, e->ts);
		return err ? err : 1;
	}
	case XP_REC_MMAP: {
		const struct xp_mmap *m = p;
		sqlite3_stmt *s = L->st[STMT_MAPPING];
		const char *path;
		uint32_t module;
		int64_t path_id;
		size_t bid_len;
		int err;

		if (len < sizeof(*m) || !(path = xp_record_path(h, sizeof(*m), m->path_len)))
			return -EBADMSG;
		bid_len = (m->flags & XP_MMAP_HAS_BUILD_ID) ? m->build_id_size : 0;
		if (bid_len > XP_BUILD_ID_MAX)
			return -EBADMSG;
		err = xp_symbolizer_module(L->sym, path, m->build_id, bid_len, &module);
		if (err)
			return err;
		err = xp_mappings_add(L->maps, m->pid, m->ts, m->addr, m->len, m->pgoff, module,
				      !!(m->flags & XP_MMAP_FROM_PROC));
		if (err == -EINVAL)
			return -EBADMSG;
		if (err)
			return err;
		err = intern_str(L, path, &path_id);
		if (err)
			return err;
		sqlite3_bind_int64(s, 1, m->pid);
		sqlite3_bind_int64(s, 2, (int64_t)m->addr);
		sqlite3_bind_int64(s, 3, (int64_t)(m->addr + m->len));
		sqlite3_bind_int64(s, 4, (int64_t)m->pgoff);
		sqlite3_bind_int64(s, 5, (int64_t)m->ts);
		sqlite3_bind_int(s, 6, !!(m->flags & XP_MMAP_FROM_PROC));
		sqlite3_bind_int64(s, 7, module + 1);
		err = step(L, STMT_MAPPING);
		return err ? err : 1;
	}
	default:
		/* Python stacks, code objects and facts, for the launches of pass 2 */
		return xp_pystore_record(L->py, L->stream_pid, h);
	}
}

/* Pass 2: samples and losses. 1 handled, 0 not this pass, -EBADMSG malformed. */
/* A stack's IPs (kernel, then user), with the user part walked offline from
 * its dwarf-mode copy when that reaches further than the frame pointers
 * did: code built without them loses callers in a frame-pointer walk. */
static const uint64_t *stack_ips(struct loader *L, const struct xp_record_header *h,
				 size_t fixed, const struct xp_stack *st, uint32_t pid,
				 uint64_t ts, unsigned *nu)
{
	const uint64_t *ips = xp_record_stack_ips(h, fixed, st);
	struct xp_user_regs_copy regs;
	const uint8_t *bytes;
	unsigned nk = st->kernel_depth;
	uint64_t t0;
	int n;

	*nu = st->user_depth;
	if (!ips || !(st->flags & XP_STACK_HAS_USER_COPY) ||
	    xp_record_user_copy(h, fixed, st, &regs, &bytes))
		return ips;
	t0 = mono_ns();
	n = xp_unwind(L->uw, pid, ts, &regs, bytes, L->walked + nk, XP_MAX_STACK_DEPTH);
	L->res->unwind_ns += mono_ns() - t0;
	if (n <= (int)*nu)
		return ips;
	memcpy(L->walked, ips, nk * sizeof(*ips));
	*nu = (unsigned)n;
	L->res->stacks_unwound++;
	return L->walked;
}

static int pass2_record(struct loader *L, const struct xp_record_header *h)
{
	const void *p = xp_record_payload(h);
	uint32_t len = xp_record_payload_len(h);

	switch (h->type) {
	case XP_REC_SAMPLE: {
		const struct xp_sample *s = p;
		sqlite3_stmt *st = L->st[STMT_SAMPLE];
		const uint64_t *ips;
		unsigned nu;
		int64_t stack;
		int err;

		if (len < sizeof(*s) ||
		    !(ips = stack_ips(L, h, sizeof(*s), &s->stack, s->pid, s->ts, &nu)))
			return -EBADMSG;
		err = thread_seen(L, s->pid, s->tid, s->comm, 0);
		if (err)
			return err;
		err = stack_id(L, s->pid, s->ts, ips, s->stack.kernel_depth, nu, NULL, &stack);
		if (err)
			return err;
		if (stack) {
			L->res->sample_frames += L->nodes[stack].depth;
			L->res->sample_frames_resolved += L->nodes[stack].resolved;
		}
		sqlite3_bind_int64(st, 1, (int64_t)s->ts);
		sqlite3_bind_int64(st, 2, s->pid);
		sqlite3_bind_int64(st, 3, s->tid);
		sqlite3_bind_int64(st, 4, s->cpu);
		sqlite3_bind_int64(st, 5, stack);
		sqlite3_bind_int64(st, 6, s->period_ns);
		err = step(L, STMT_SAMPLE);
		L->res->samples++;
		return err ? err : 1;
	}
	case XP_REC_LAUNCH: {
		/* a CUDA API entry with its stack, for the correlate stage */
		const struct xp_launch *l = p;
		sqlite3_stmt *st = L->st[STMT_LAUNCH];
		struct xp_pystack_view py;
		const uint64_t *ips;
		unsigned nu;
		int64_t stack;
		int err, has_py;

		if (len < sizeof(*l) ||
		    !(ips = stack_ips(L, h, sizeof(*l), &l->stack, l->pid, l->ts, &nu)))
			return -EBADMSG;
		/* with the Python frames the library took at the same call */
		has_py = xp_pystore_launch(L->py, l->pid, l->correlation_id, &py);
		if (has_py < 0)
			return has_py;
		err = stack_id(L, l->pid, l->ts, ips, l->stack.kernel_depth, nu,
			       has_py ? &py : NULL, &stack);
		if (err)
			return err;
		xp_launch_bind(st, l, stack);
		return step(L, STMT_LAUNCH) ?: 1;
	}
	case XP_REC_SWITCH: {
		/* an off-CPU interval with the stack that went to sleep */
		const struct xp_switch *w = p;
		sqlite3_stmt *st = L->st[STMT_SWITCH];
		const uint64_t *ips;
		unsigned nu;
		int64_t stack;
		int err;

		if (len < sizeof(*w) ||
		    !(ips = stack_ips(L, h, sizeof(*w), &w->stack, w->pid, w->ts, &nu)))
			return -EBADMSG;
		err = stack_id(L, w->pid, w->ts, ips, w->stack.kernel_depth, nu, NULL, &stack);
		if (err)
			return err;
		sqlite3_bind_int64(st, 1, (int64_t)w->ts);
		sqlite3_bind_int64(st, 2, (int64_t)w->duration_ns);
		sqlite3_bind_int64(st, 3, w->pid);
		sqlite3_bind_int64(st, 4, w->tid);
		sqlite3_bind_int64(st, 5, w->cpu);
		sqlite3_bind_int64(st, 6, w->prev_state);
		sqlite3_bind_int64(st, 7, stack);
		return step(L, STMT_SWITCH) ?: 1;
	}
	case XP_REC_LOST: {
		const struct xp_lost *l = p;
		sqlite3_stmt *st = L->st[STMT_LOSS];

		if (len < sizeof(*l))
			return -EBADMSG;
		sqlite3_bind_int64(st, 1, (int64_t)l->ts);
		sqlite3_bind_text(st, 2, kind_name(l->kind), -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, xp_loss_reason_name(l->reason), -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, (int64_t)l->count);
		sqlite3_bind_text(st, 5, "record", -1, SQLITE_STATIC);
		return step(L, STMT_LOSS) ?: 1;
	}
	default:
		return 0;
	}
}

/* xp_gpu_sink_ops for the GPU loader: our string table and stack tree. */
static int64_t sink_string(void *ctx, const char *s)
{
	int64_t id;

	return intern_str(ctx, s, &id) ? -1 : id;
}

static int64_t sink_stack(void *ctx, uint32_t pid, uint64_t ts, const uint64_t *kips,
			  unsigned nk, const uint64_t *uips, unsigned nu)
{
	uint64_t ips[2 * XP_MAX_STACK_DEPTH];
	int64_t id;

	if (nk > XP_MAX_STACK_DEPTH || nu > XP_MAX_STACK_DEPTH)
		return -1;
	memcpy(ips, kips, nk * sizeof(*ips));
	memcpy(ips + nk, uips, nu * sizeof(*ips));
	return stack_id(ctx, pid, ts, ips, nk, nu, NULL, &id) ? -1 : id;
}

static const char *budget_hint(int err)
{
	return err == -E2BIG ? " (xpcorr ingest --max-records and --max-expand raise the budget)"
			     : "";
}

static struct xp_read_budget *sink_budget(void *ctx)
{
	return &((struct loader *)ctx)->budget;
}

static int is_gpu_stream(const char *name)
{
	return !strncmp(name, "gpu-", 4);
}

/* Whether the library wrote its clean-end status into the stream: without
 * it (SIGKILL, a crash past the signal handlers) the tail was never flushed. */
static int gpu_stream_stopped(sqlite3 *db, const char *file)
{
	sqlite3_stmt *s;
	int found = 1;      /* a failed query claims nothing */

	if (sqlite3_prepare_v2(db, "SELECT count(*) FROM xp_gpu_status WHERE source = ? AND code = ?",
			       -1, &s, NULL) != SQLITE_OK)
		return found;
	sqlite3_bind_text(s, 1, file, -1, SQLITE_STATIC);
	sqlite3_bind_int(s, 2, XP_GPU_ST_STOPPED);
	if (sqlite3_step(s) == SQLITE_ROW)
		found = sqlite3_column_int(s, 0) > 0;
	sqlite3_finalize(s);
	return found;
}

/* The CUPTI side: gpu-<pid>.xpr into the nsys-named GPU tables. A damaged
 * stream keeps its valid part and warns, unless strict. */
static int load_gpu_stream(struct loader *L, const char *path, const char *file)
{
	static const struct xp_gpu_sink_ops ops = { sink_string, sink_stack, sink_budget };
	struct xp_gpu_load_stats st = { 0 };
	char why[XP_LOAD_MSG_LEN];
	int err;

	err = xp_gpu_load_stream(L->db, path, &ops, L, &st, why, sizeof(why));
	L->res->gpu_streams++;
	if (err == -ENOMEM || err == -EIO || err == -EPROTO || (err && L->o->strict)) {
		snprintf(L->res->error, sizeof(L->res->error), "%s", why);
		return err;
	}
	if (err)
		return warn(L, file, 0, "%s; the records before it are kept%s", why,
			    budget_hint(err));
	return st.records && !gpu_stream_stopped(L->db, file)
		? warn(L, file, 0, "%s: no clean end (the process was killed or died before its exit"
		       " handlers ran): its GPU records since the library's last periodic flush"
		       " (at most %d ms) are missing; the %" PRIu64 " records before are kept", file,
		       XP_GPU_FLUSH_PERIOD_MS, st.records)
		: 0;
}

static int is_stream(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 4 && !strcmp(d->d_name + n - 4, ".xpr");
}

/* Reads one stream in one pass. A damaged tail (or a malformed record) is a
 * warning unless strict; an unusable header fails the load. */
static int load_stream(struct loader *L, const char *path, const char *file, int pass,
		       int index)
{
	struct xp_read_budget replay = { .records = L->stream_records[index],
					 .expand = L->budget.expand };
	struct xp_reader *r = NULL;
	const struct xp_record_header *h;
	uint64_t n = 0, last = 0, off;
	int err;

	memset(L->counts, 0, sizeof(L->counts));
	err = xp_reader_open(&r, path);
	if (err && strcmp(file, "cpu.xpr") && !L->o->strict && err != -ENOMEM && err != -EPROTO) {
		/* a launch-PID.xpr that is a link, a FIFO, a directory or damaged:
		 * one process's launch stacks, not the run (as gpu-PID.xpr) */
		if (pass == 1)
			err = r ? warn(L, file, 0, "%s at offset 0: %s; the stream is skipped", path,
				       xp_reader_error(r))
				: warn(L, file, 0, "cannot read %s: %s; the stream is skipped", path,
				       xp_run_file_strerror(err));
		else
			err = 0;
		xp_reader_close(r);
		return err;
	}
	if (err) {
		if (r && err != -ENOMEM && (err == -EBADMSG || err == -EPROTO))
			snprintf(L->res->error, sizeof(L->res->error),
				 "%s at offset 0: %s%s", path, xp_reader_error(r),
				 err == -EPROTO ? " (written by a newer xpcap; upgrade xpcorr)" : "");
		else
			snprintf(L->res->error, sizeof(L->res->error), "cannot read %s: %s",
				 path, xp_run_file_strerror(err));
		xp_reader_close(r);
		return err == -ENOENT || err == -EPROTO || err == -ENOMEM ? err : -EBADMSG;
	}
	/* pass 2 takes what pass 1 took of the run's budget, no more */
	xp_reader_set_budget(r, pass == 1 ? &L->budget : &replay);
	L->stream_pid = xp_reader_header(r)->pid;
	while ((err = xp_reader_next(r, &h)) > 0) {
		int handled = pass == 1 ? pass1_record(L, h) : pass2_record(L, h);

		L->counts[h->type < 128 ? h->type : 0]++;
		if (handled == -EBADMSG) {
			off = xp_reader_offset(r);
			if (L->o->strict) {
				snprintf(L->res->error, sizeof(L->res->error),
					 "%s at offset %" PRIu64 ": malformed %s record", path,
					 off, kind_name(h->type));
				err = -EBADMSG;
				goto out;
			}
			if ((err = warn(L, file, off, "%s at offset %" PRIu64
						     ": malformed %s record skipped", path, off,
						     kind_name(h->type))))
				goto out;
		} else if (handled < 0) {
			err = handled;
			goto out;
		}
		if (L->o->cancel && *L->o->cancel) {
			snprintf(L->res->error, sizeof(L->res->error), "interrupted");
			err = -ECANCELED;
			goto out;
		}
		if (++n - last >= PROGRESS_EVERY && L->o->progress) {
			last = n;
			L->o->progress(L->o->progress_ctx, L->bytes_done + xp_reader_offset(r),
				       L->bytes_total);
		}
	}
	if (err < 0) {
		off = xp_reader_offset(r);
		if (err == -ENOMEM || err == -EIO) {
			snprintf(L->res->error, sizeof(L->res->error), "%s at offset %" PRIu64
				 ": %s", path, off, xp_reader_error(r));
			goto out;
		}
		if (L->o->strict) {
			snprintf(L->res->error, sizeof(L->res->error), "%s at offset %" PRIu64
				 ": %s%s", path, off, xp_reader_error(r), budget_hint(err));
			err = err == -E2BIG ? err : -EBADMSG;
			goto out;
		}
		/* keep what came before; say once (pass 1) what was cut */
		err = pass == 1 ? warn(L, file, off, "%s at offset %" PRIu64 ": %s; the records"
				       " before it are kept%s", path, off, xp_reader_error(r),
				       budget_hint(err)) : 0;
		if (err)
			goto out;
	}
	err = 0;
	if (pass == 2) {
		for (uint32_t t = 0; t < 128 && !err; t++) {
			if (!L->counts[t])
				continue;
			sqlite3_bind_text(L->st[STMT_COUNT], 1, file, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(L->st[STMT_COUNT], 2, kind_name(t), -1, SQLITE_STATIC);
			sqlite3_bind_int64(L->st[STMT_COUNT], 3, (int64_t)L->counts[t]);
			err = step(L, STMT_COUNT);
		}
	}
out:
	if (pass == 1)
		L->stream_records[index] = n;
	L->bytes_done += xp_reader_offset(r);
	xp_reader_close(r);
	return err;
}

static int meta_pair(void *ctx, const char *key, const char *value)
{
	struct loader *L = ctx;
	char name[1100];
	const char *last = strrchr(key, '.');
	int err;

	snprintf(name, sizeof(name), "meta.%s", key);
	sqlite3_bind_text(L->st[STMT_META], 1, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(L->st[STMT_META], 2, value, -1, SQLITE_TRANSIENT);
	err = step(L, STMT_META);
	if (err)
		return err;
	if (!strcmp(key, "kallsyms_bytes") && value[0] >= '0' && value[0] <= '9')
		L->kallsyms_bytes = strtoll(value, NULL, 10);
	/* system facts also where nsys keeps them */
	if (!strcmp(key, "hostname") || !strcmp(key, "kernel_release") ||
	    !strcmp(key, "cpu_count") || !strcmp(key, "sample_frequency_hz")) {
		sqlite3_bind_text(L->st[STMT_ENV], 1, key, -1, SQLITE_TRANSIENT);
		sqlite3_bind_text(L->st[STMT_ENV], 2, value, -1, SQLITE_TRANSIENT);
		err = step(L, STMT_ENV);
		if (err)
			return err;
	}
	/* "records.sample.lost.ringbuf_full": 12 -> a loss counted by the capture */
	if (!strncmp(key, "records.", 8) && last && strtoll(value, NULL, 10) > 0) {
		char kind[256];
		const char *lost = strstr(key + 8, ".lost.");

		if (!lost || lost + 5 != last)
			return 0;
		uint32_t reason = xp_loss_reason_of_meta_key(last + 1);

		snprintf(kind, sizeof(kind), "%.*s", (int)(lost - (key + 8)), key + 8);
		sqlite3_bind_null(L->st[STMT_LOSS], 1);
		sqlite3_bind_text(L->st[STMT_LOSS], 2, kind, -1, SQLITE_TRANSIENT);
		/* one loss, one name: meta.json's "stack" is the records' "stack_unreadable" */
		sqlite3_bind_text(L->st[STMT_LOSS], 3, reason ? xp_loss_reason_name(reason) : last + 1,
				  -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(L->st[STMT_LOSS], 4, strtoll(value, NULL, 10));
		sqlite3_bind_text(L->st[STMT_LOSS], 5, "meta.json", -1, SQLITE_STATIC);
		return step(L, STMT_LOSS);
	}
	return 0;
}

/* Options first, then the environment (a report that ingests on its own
 * has no options for it), then the defaults. */
static void budget_init(struct loader *L)
{
	const char *env;
	char *end;

	L->budget.records = L->o->max_records;
	L->budget.expand = L->o->max_expand;
	if (!L->budget.records && (env = getenv("XPCORR_MAX_RECORDS")) &&
	    (L->budget.records = strtoull(env, &end, 10), *end))
		L->budget.records = 0;
	if (!L->budget.expand && (env = getenv("XPCORR_MAX_EXPAND"))) {
		unsigned long v = strtoul(env, &end, 10);

		L->budget.expand = !*end && v <= UINT32_MAX ? (uint32_t)v : 0;
	}
	if (!L->budget.records)
		L->budget.records = XP_READ_RECORDS_DEFAULT;
	if (!L->budget.expand)
		L->budget.expand = XP_READ_EXPAND_DEFAULT;
}

static int load_meta(struct loader *L)
{
	char path[4096];
	json_t *j = NULL;
	int line, err;
	int64_t ver;

	snprintf(path, sizeof(path), "%s/meta.json", L->o->run_dir);
	err = xp_meta_load(&j, path, &line);
	if (err == -ENOENT)
		return warn(L, "meta.json", 0, "%s: missing; run facts and capture losses unknown",
			    path);
	if (err == -EBADMSG)
		return warn(L, "meta.json", 0, "%s at line %d: not valid JSON; ignored", path, line);
	if (err)
		return warn(L, "meta.json", 0, "%s: %s; ignored", path, xp_run_file_strerror(err));
	ver = xp_meta_int(j, "format_version", 0);
	if (ver > XP_FORMAT_VERSION) {
		snprintf(L->res->error, sizeof(L->res->error), "%s: run format version %" PRId64
			 " is newer than this xpcorr reads (%d); upgrade xpcorr", path, ver,
			 XP_FORMAT_VERSION);
		json_decref(j);
		return -EPROTO;
	}
	err = xp_meta_flatten(j, meta_pair, L);
	json_decref(j);
	return err;
}

static int load_kallsyms(struct loader *L)
{
	char path[4096];
	int err;

	snprintf(path, sizeof(path), "%s/kallsyms", L->o->run_dir);
	err = xp_kallsyms_load(&L->ksyms, path);
	if (err == -ENOENT)
		return 0;   /* told in info: kernel frames stay addresses */
	if (err == -ENOMEM)
		return err;
	if (err)
		return warn(L, "kallsyms", 0, "%s: %s; kernel frames stay addresses", path,
			    err == -E2BIG ? "larger than a kernel's symbols (256 MiB, 4M symbols)"
					  : xp_run_file_strerror(err));
	if (xp_kallsyms_skipped(L->ksyms) > 0 && xp_kallsyms_count(L->ksyms) == 0)
		return warn(L, "kallsyms", 0, "%s: no text symbols", path);
	/* a copy cut short (xpcap killed while writing it) must not lend its
	 * last symbol to every address above: told in finish(), with a count */
	if (!xp_kallsyms_complete(L->ksyms))
		L->ksyms_cut = "it ends in the middle of a line";
	else if (L->kallsyms_bytes >= 0 &&
		 (uint64_t)L->kallsyms_bytes != xp_kallsyms_bytes(L->ksyms))
		L->ksyms_cut = "its size is not the one meta.json gives (kallsyms_bytes)";
	if (L->ksyms_cut)
		xp_kallsyms_set_truncated(L->ksyms);
	return 0;
}

static const char *status_name(enum xp_module_status s)
{
	switch (s) {
	case XP_MODULE_OK: return "ok";
	case XP_MODULE_MISSING: return "missing";
	case XP_MODULE_NOT_ELF: return "not_elf";
	case XP_MODULE_BUILD_ID_MISMATCH: return "build_id_mismatch";
	case XP_MODULE_ANON: return "anon";
	default: return "unused";
	}
}

/* Final rows: modules, threads, processes, summary facts. */
static int finish(struct loader *L)
{
	char val[64], hex[2 * XP_BUILD_ID_MAX + 1];
	int err = 0;

	for (uint32_t i = 0; i < xp_symbolizer_count(L->sym) && !err; i++) {
		const char *path = xp_symbolizer_path(L->sym, i);
		const uint8_t *bid = NULL;
		size_t bid_len;
		int64_t path_id;

		err = intern_str(L, path, &path_id);
		if (err)
			break;
		sqlite3_bind_int64(L->st[STMT_MODULE], 1, i + 1);
		sqlite3_bind_int64(L->st[STMT_MODULE], 2, path_id);
		bid_len = xp_symbolizer_build_id(L->sym, i, &bid);
		for (size_t b = 0; b < bid_len; b++)
			snprintf(hex + 2 * b, 3, "%02x", bid[b]);
		if (bid_len)
			sqlite3_bind_text(L->st[STMT_MODULE], 3, hex, (int)(2 * bid_len),
					  SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(L->st[STMT_MODULE], 3);
		sqlite3_bind_text(L->st[STMT_MODULE], 4, status_name(xp_symbolizer_status(L->sym, i)),
				  -1, SQLITE_STATIC);
		err = step(L, STMT_MODULE);
	}
	for (size_t i = 0; i < L->threads.cap && !err; i++) {
		const struct xp_u64map_entry *e = &L->threads.slots[i];

		if (!e->used)
			continue;
		sqlite3_bind_int64(L->st[STMT_THREAD], 1, (int64_t)e->value);
		sqlite3_bind_int64(L->st[STMT_THREAD], 2, xp_gtid(e->k1, e->k2));
		err = step(L, STMT_THREAD);
	}
	for (size_t i = 0; i < L->procs.cap && !err; i++) {
		const struct xp_u64map_entry *e = &L->procs.slots[i];

		if (!e->used)
			continue;
		sqlite3_bind_int64(L->st[STMT_PROCESS], 1, xp_gpid(e->k1));
		sqlite3_bind_int64(L->st[STMT_PROCESS], 2, (int64_t)e->k1);
		sqlite3_bind_text(L->st[STMT_PROCESS], 3, xp_strtab_get(L->strs, (int64_t)e->value),
				  -1, SQLITE_STATIC);
		err = step(L, STMT_PROCESS);
	}
	if (!err && L->ksyms_cut)
		err = warn(L, "kallsyms", 0, "%s/kallsyms: truncated (%s): %" PRIu64 " kernel"
			   " addresses past its last symbol stay addresses", L->o->run_dir,
			   L->ksyms_cut, L->ksyms_beyond);
	if (!err)
		err = xp_pystore_save(L->db, L->py);
	if (err == -EIO)
		return db_fail(L, "xp_python_processes");
	L->res->stacks = (uint64_t)xp_stacktree_count(&L->tree);
	L->res->frames = (uint64_t)(L->next_frame - 1);
	L->res->strings = xp_strtab_count(L->strs);
	{
		const struct { const char *k; uint64_t v; } facts[] = {
			{ "xp_schema_version", XP_DB_SCHEMA_VERSION },
			{ "xp.sample_frames", L->res->sample_frames },
			{ "xp.sample_frames_resolved", L->res->sample_frames_resolved },
			{ "xp.kallsyms_symbols", xp_kallsyms_count(L->ksyms) },
			{ "xp.kallsyms_truncated", L->ksyms_cut != NULL },
			{ "xp.kernel_addresses_past_kallsyms", L->ksyms_beyond },
			{ "xp.stack_copies", xp_unwinder_stats(L->uw)->copies },
			{ "xp.stacks_unwound", L->res->stacks_unwound },
			{ "xp.symbolized_addresses", L->res->addresses },
			{ "xp.symbolize_ns", L->res->symbolize_ns },
			{ "xp.unwind_ns", L->res->unwind_ns },
			{ "xp.warnings", L->res->nwarnings },
		};

		for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]) && !err; i++) {
			snprintf(val, sizeof(val), "%" PRIu64, facts[i].v);
			sqlite3_bind_text(L->st[STMT_META], 1, facts[i].k, -1, SQLITE_STATIC);
			sqlite3_bind_text(L->st[STMT_META], 2, val, -1, SQLITE_TRANSIENT);
			err = step(L, STMT_META);
		}
	}
	return err;
}

static void loader_free(struct loader *L)
{
	for (int i = 0; i < NSTMT; i++)
		sqlite3_finalize(L->st[i]);
	xp_strtab_free(L->strs);
	xp_u64map_free(&L->frames);
	free(L->frame_resolved);
	xp_stacktree_free(&L->tree);
	free(L->nodes);
	xp_u64map_free(&L->ipcache);
	xp_u64map_free(&L->rawstacks);
	xp_mappings_free(L->maps);
	xp_unwinder_free(L->uw);
	xp_symbolizer_free(L->sym);
	xp_kallsyms_free(L->ksyms);
	xp_u64map_free(&L->perfmaps);
	xp_u64map_free(&L->pm_inodes);
	for (size_t i = 0; i < L->npmaps; i++)
		xp_perfmap_free(L->pmaps[i]);
	free(L->pmaps);
	free(L->chains);
	free(L->inl);
	xp_u64map_free(&L->threads);
	xp_u64map_free(&L->procs);
	free(L->stream_records);
	xp_pystore_free(L->py);
}

int xp_load_run(sqlite3 *db, const struct xp_load_opts *o, struct xp_load_result *res)
{
	struct loader *L = calloc(1, sizeof(*L));
	struct dirent **names = NULL;
	char path[4096];
	int n = 0, err = 0, has_cpu = 0;

	memset(res, 0, sizeof(*res));
	if (!L)
		return -ENOMEM;
	L->db = db;
	L->o = o;
	L->res = res;
	L->next_frame = 1;
	L->kallsyms_bytes = -1;
	L->pm_budget = (struct xp_perfmap_budget){ XP_PERFMAP_RUN_BYTES, XP_PERFMAP_RUN_LINES };
	budget_init(L);
	xp_stacktree_init(&L->tree);
	L->strs = xp_strtab_new();
	L->maps = xp_mappings_new();
	L->sym = xp_symbolizer_new(o->symfs);
	L->uw = L->maps && L->sym ? xp_unwinder_new(L->maps, L->sym) : NULL;
	L->inl = calloc(XP_INLINE_MAX, sizeof(*L->inl));
	L->py = xp_pystore_new();
	if (!L->strs || !L->maps || !L->sym || !L->uw || !L->inl || !L->py) {
		err = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < NSTMT; i++) {
		if (sqlite3_prepare_v2(db, stmt_sql[i], -1, &L->st[i], NULL) != SQLITE_OK) {
			err = db_fail(L, stmt_sql[i]);
			goto out;
		}
	}
	if ((err = intern_str(L, "[kernel.kallsyms]", &L->kernel_module)) ||
	    (err = intern_str(L, "[unknown]", &L->unknown_module)) ||
	    (err = intern_str(L, "[jit]", &L->jit_module)))
		goto out;
	n = scandir(o->run_dir, &names, is_stream, alphasort);
	if (n < 0) {
		err = -errno;
		n = 0;
		snprintf(res->error, sizeof(res->error), "cannot read %s: %s", o->run_dir,
			 strerror(-err));
		goto out;
	}
	if (n > MAX_STREAMS) {
		snprintf(res->error, sizeof(res->error), "%s: %d streams, more than %d",
			 o->run_dir, n, MAX_STREAMS);
		err = -E2BIG;
		goto out;
	}
	L->stream_records = calloc((size_t)n + 1, sizeof(*L->stream_records));
	if (!L->stream_records) {
		err = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		struct stat st;

		has_cpu |= !strcmp(names[i]->d_name, "cpu.xpr");
		snprintf(path, sizeof(path), "%s/%s", o->run_dir, names[i]->d_name);
		/* lstat: a link is not read, its target's size is not ours */
		if (!lstat(path, &st) && S_ISREG(st.st_mode))
			L->bytes_total += 2 * (uint64_t)st.st_size;
	}
	if (!has_cpu) {
		snprintf(res->error, sizeof(res->error), "%s/cpu.xpr: no such file (not a run"
			 " directory?)", o->run_dir);
		err = -ENOENT;
		goto out;
	}
	if ((err = load_meta(L)) || (err = load_kallsyms(L)))
		goto out;
	for (int pass = 1; pass <= 3; pass++) {
		for (int i = 0; i < n; i++) {
			const char *file = names[i]->d_name;

			if ((pass == 3) != is_gpu_stream(file))
				continue;
			snprintf(path, sizeof(path), "%s/%s", o->run_dir, file);
			err = pass == 3 ? load_gpu_stream(L, path, file)
					: load_stream(L, path, file, pass, i);
			if (err)
				goto out;
		}
	}
	err = finish(L);
out:
	if (err == -ENOMEM && !res->error[0])
		snprintf(res->error, sizeof(res->error), "out of memory");
	else if (err && !res->error[0])
		snprintf(res->error, sizeof(res->error), "%s", strerror(-err));
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	loader_free(L);
	free(L);
	return err;
}
