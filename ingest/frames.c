/* frames.c - addresses to frames: kernel symbols, perf maps (JIT, Python
 * 3.12+), ELF symbols and inline chains of user modules, each frame
 * interned once (loader.h). */
#include "ingest/loader.h"

#include "src/array.h"

/* has_line: a Python line's frame, whose line is part of what it is. A
 * new frame's classes (symbolized, Python role, the recorder's own) are
 * kept by id for the stacks built on it. */
static int frame_id(struct loader *L, const char *symbol, int64_t module, enum xp_frame_kind kind,
		    int has_line, int line, int64_t *id)
{
	struct xp_frame_key f = { 0, module, kind, has_line, has_line ? line : 0 };
	int fresh, err = xp_loader_intern_str(L, symbol, &f.symbol);

	if (!err)
		err = xp_loader_written(L, xp_stackwriter_frame(L->w, &f, id, &fresh));
	if (err || !fresh)
		return err;
	if (xp_array__reserve((void **)&L->frame_resolved, &L->frame_cap, (size_t)*id + 1, 1, 4096) ||
	    xp_array__reserve((void **)&L->frame_own, &L->own_cap, (size_t)*id + 1, 1, 4096))
		return -ENOMEM;
	L->frame_own[*id] = (uint8_t)xp_own_frame(kind, symbol, xp_stackwriter_text(L->w, module));
	L->frame_resolved[*id] = (uint8_t)((kind == XP_FRAME_USER || kind == XP_FRAME_KERNEL ||
					    kind == XP_FRAME_JIT || kind == XP_FRAME_INLINED ||
					    kind == XP_FRAME_PYTHON) |
					   xp_pyrole_of(kind, symbol) << 1);
	return 0;
}

int xp_loader_frame_id(struct loader *L, const char *symbol, int64_t module,
		    enum xp_frame_kind kind, int64_t *id)
{
	return frame_id(L, symbol, module, kind, 0, 0, id);
}

int xp_loader_pyline_id(struct loader *L, const char *qualname, int64_t file, int line,
			int64_t *id)
{
	return frame_id(L, qualname, file, XP_FRAME_PYTHON, 1, line < 0 ? -1 : line, id);
}

static const char *base_name(const char *path)
{
	if (!*path || (path[0] == '/' && path[1] == '/'))
		return "[anon]";    /* "//anon" as perf writes anonymous memory */
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

int xp_loader_kernel_frame(struct loader *L, uint64_t ip, int64_t *id)
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
		err = xp_loader_intern_str(L, L->name, &module);
		if (err)
			return err;
	}
	if (name) {
		xp_demangle(name, L->name, NAME_MAX_LEN);   /* Rust/C++ in modules */
		err = xp_loader_frame_id(L, L->name, module, XP_FRAME_KERNEL, id);
	} else {
		L->ksyms_beyond += xp_kallsyms_beyond(L->ksyms, ip);
		snprintf(L->name, sizeof(L->name), "0x%" PRIx64, ip);
		err = xp_loader_frame_id(L, L->name, module, XP_FRAME_KERNEL_UNRESOLVED, id);
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
	struct xp_perfmap *pm = NULL;
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
		return xp_loader_warn(L, path, 0, "%s: %s; its JIT frames stay unresolved", path,
			    xp_run_file_strerror(fd));
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return xp_loader_warn(L, path, 0, "%s: %s; its JIT frames stay unresolved", path,
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
		return xp_loader_warn(L, path, 0, "%s: the run's perf maps take more than %llu MiB or %llu"
			    " lines in all; its JIT frames stay unresolved", path,
			    (unsigned long long)(XP_PERFMAP_RUN_BYTES >> 20),
			    (unsigned long long)XP_PERFMAP_RUN_LINES);
	if (err)
		return xp_loader_warn(L, path, 0, "%s: %s; its JIT frames stay unresolved", path,
			    strerror(-err));
	if (xp_perfmap_skipped(pm))
		err = xp_loader_warn(L, path, 0, "%s: %zu lines that do not parse were skipped", path,
			   xp_perfmap_skipped(pm));
	if (xp_array__reserve((void **)&L->pmaps, &L->pmaps_cap, L->npmaps + 1, sizeof(*L->pmaps),
			      8)) {
		xp_perfmap_free(pm);
		return -ENOMEM;
	}
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
	if (xp_array__reserve((void **)&L->chains, &L->chains_cap, L->nchains + (size_t)n + 1,
			      sizeof(*L->chains), 64))
		return -ENOMEM;
	L->chains[L->nchains++] = *ref;
	for (int i = n; i-- > 0;) {
		int64_t f;

		err = xp_loader_frame_id(L, L->inl[i], module, XP_FRAME_INLINED, &f);
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
uint64_t xp_loader_mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A user IP to a frame id (or an inline chain, see CHAIN). is_return: a caller frame, whose IP is the return
 * address after the call, which may be the first byte of the next function:
 * look up ip - 1 as perf does, so the calling function is found. */
int xp_loader_user_frame(struct loader *L, uint32_t pid, uint64_t ts, uint64_t ip,
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
	t0 = xp_loader_mono_ns();
	err = resolve_user_frame(L, pid, m, status, path, addr, k2, id);
	L->res->symbolize_ns += xp_loader_mono_ns() - t0;
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

		err = xp_loader_intern_str(L, path, &module);
		if (err)
			return err;
		if (xp_symbolizer_lookup(L->sym, m->module, k2, L->name, NAME_MAX_LEN) == 0) {
			err = xp_loader_frame_id(L, L->name, module, XP_FRAME_USER, id);
			if (!err)
				err = inline_chain(L, m->module, k2, module, id);
		} else {
			/* never guess: the module and the offset in it */
			snprintf(L->name, sizeof(L->name), "%s+0x%" PRIx64, base_name(path), k2);
			err = xp_loader_frame_id(L, L->name, module, XP_FRAME_UNRESOLVED, id);
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
			err = xp_loader_frame_id(L, L->name, L->jit_module, XP_FRAME_JIT, id);
		} else if (m) {
			int64_t module;

			err = xp_loader_intern_str(L, path && *path ? path : "[anon]", &module);
			if (err)
				return err;
			snprintf(L->name, sizeof(L->name), "%s+0x%" PRIx64,
				 base_name(path ? path : ""), addr - m->start + m->pgoff);
			err = xp_loader_frame_id(L, L->name, module, XP_FRAME_UNRESOLVED, id);
		} else {
			snprintf(L->name, sizeof(L->name), "[unknown]+0x%" PRIx64, addr);
			err = xp_loader_frame_id(L, L->name, L->unknown_module, XP_FRAME_UNRESOLVED, id);
		}
	}
	return err;
}

