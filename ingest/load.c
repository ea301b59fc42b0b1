/* load.c - run directory -> SQLite rows, symbolized; see load.h.
 *
 * The hot path is one CPU sample: its raw stack is first looked up whole in
 * a cache keyed by a 128-bit hash of (pid, IPs), which hits for the vast
 * majority of samples of a real program; only a miss resolves IPs to frames
 * (cached per module offset) and walks the stack prefix tree. Every distinct
 * string, frame and stack node is inserted once, when first seen.
 *
 * This file is the driver: the loader made and freed, the streams listed
 * and read in three passes; loader.h says which file does each part.
 */
#include "ingest/loader.h"
#include "ingest/rangecut.h"

static int is_gpu_stream(const char *name)
{
	return !strncmp(name, "gpu-", 4);
}

static int is_stream(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 4 && !strcmp(d->d_name + n - 4, ".xpr");
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
	L->max_records = L->budget.records;
}

static void loader_free(struct loader *L)
{
	for (int i = 0; i < NSTMT; i++)
		sqlite3_finalize(L->st[i]);
	xp_stackwriter_close(L->w);
	free(L->frame_resolved);
	free(L->frame_own);
	free(L->nodes);
	xp_u64map_free(&L->ipcache);
	xp_u64map_free(&L->rawstacks);
	xp_mappings_free(L->maps);
	xp_unwinder_free(L->uw);
	xp_borrowed_free(L->borrowed);
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
	xp_pywaits_free(L->pyw);
	xp_agstore_free(L->ag);
}

/* The loader's tables and helpers (xp_load_run frees them): 0 or -ENOMEM. */
static int loader_alloc(struct loader *L)
{
	L->maps = xp_mappings_new();
	L->sym = xp_symbolizer_new(L->o->symfs);
	L->uw = L->maps && L->sym ? xp_unwinder_new(L->maps, L->sym) : NULL;
	L->inl = calloc(XP_INLINE_MAX, sizeof(*L->inl));
	L->py = xp_pystore_new();
	L->pyw = xp_pywaits_new();
	L->ag = xp_agstore_new();
	L->borrowed = xp_borrowed_new();
	return L->maps && L->sym && L->uw && L->inl && L->py && L->pyw && L->ag && L->borrowed ?
		0 : -ENOMEM;
}

/* The steps a load goes through, for the progress line (load.h's phase). */
static const char *const pass_what[] = { "reading tasks and mappings",
	"reading and symbolizing CPU samples and launches", "reading GPU records" };

static void announce(const struct xp_load_opts *o, const char *what)
{
	if (o->phase)
		o->phase(o->progress_ctx, what);
}

/* A GPU stream is read as a whole (gpu_load.c): its bytes count when it is done. */
static void gpu_stream_read(struct loader *L, const char *path)
{
	struct stat st;

	if (!L->o->progress)
		return;
	if (!lstat(path, &st) && S_ISREG(st.st_mode))
		L->bytes_done += (uint64_t)st.st_size;
	L->o->progress(L->o->progress_ctx, L->bytes_done, L->bytes_total);
}

/* The run's streams into *names (*n of them, sorted), their bytes into
 * L->bytes_total; a directory without cpu.xpr is no run. 0 or -errno. */
static int list_streams(struct loader *L, struct dirent ***names, int *n)
{
	const char *dir = L->o->run_dir;
	struct xp_load_result *res = L->res;
	char path[4096];
	int has_cpu = 0;

	*n = scandir(dir, names, is_stream, alphasort);
	if (*n < 0) {
		int err = -errno;

		*n = 0;
		snprintf(res->error, sizeof(res->error), "cannot read %s: %s", dir, strerror(-err));
		return err;
	}
	if (*n > MAX_STREAMS) {
		snprintf(res->error, sizeof(res->error), "%s: %d streams, more than %d", dir, *n,
			 MAX_STREAMS);
		return -E2BIG;
	}
	L->stream_records = calloc((size_t)*n + 1, sizeof(*L->stream_records));
	if (!L->stream_records)
		return -ENOMEM;
	for (int i = 0; i < *n; i++) {
		const char *file = (*names)[i]->d_name;
		struct stat st;

		has_cpu |= !strcmp(file, "cpu.xpr");
		snprintf(path, sizeof(path), "%s/%s", dir, file);
		/* lstat: a link is not read, its target's size is not ours */
		if (!lstat(path, &st) && S_ISREG(st.st_mode))   /* GPU streams: read once */
			L->bytes_total += (is_gpu_stream(file) ? 1 : 2) * (uint64_t)st.st_size;
	}
	if (!has_cpu) {
		snprintf(res->error, sizeof(res->error), "%s/cpu.xpr: no such file (not a run"
			 " directory?)", dir);
		return -ENOENT;
	}
	return 0;
}

/* The three passes over the streams (pass_what). 0 or -errno. */
static int read_streams(struct loader *L, struct dirent **names, int n)
{
	const struct xp_load_opts *o = L->o;
	char path[4096];
	int err;

	for (int pass = 1; pass <= 3; pass++) {
		announce(o, pass_what[pass - 1]);
		for (int i = 0; i < n; i++) {
			const char *file = names[i]->d_name;

			if ((pass == 3) != is_gpu_stream(file))
				continue;
			snprintf(path, sizeof(path), "%s/%s", o->run_dir, file);
			err = pass == 3 ? xp_loader_gpu_stream(L, path, file)
					: xp_loader_stream(L, path, file, pass, i);
			if (err)
				return err;
			if (pass == 3)
				gpu_stream_read(L, path);
		}
	}
	if (o->progress)        /* every stream read */
		o->progress(o->progress_ctx, L->bytes_total, L->bytes_total);
	return 0;
}

/* --capture-range that xpcap could not bound: the CPU records outside the
 * windows go now, before anything counts or joins them. */
static int cut_to_range(struct loader *L)
{
	struct xp_range_cut c;
	int err = xp_range_cut(L->db, &c);

	if (err == -EIO)
		return xp_loader_db_fail(L, "xp_samples (capture range)");
	if (!err)
		L->res->samples -= c.samples < L->res->samples ? c.samples : L->res->samples;
	return err;
}

int xp_load_run(sqlite3 *db, const struct xp_load_opts *o, struct xp_load_result *res)
{
	struct loader *L = calloc(1, sizeof(*L));
	struct dirent **names = NULL;
	int n = 0, err;

	memset(res, 0, sizeof(*res));
	if (!L)
		return -ENOMEM;
	L->db = db;
	L->o = o;
	L->res = res;
	L->kallsyms_bytes = -1;
	L->pm_budget = (struct xp_perfmap_budget){ XP_PERFMAP_RUN_BYTES, XP_PERFMAP_RUN_LINES };
	budget_init(L);
	if (!(err = loader_alloc(L)) && !(err = xp_loader_prepare(L)) &&
	    !(err = list_streams(L, &names, &n)) && !(err = xp_loader_meta(L)) &&
	    !(err = xp_loader_kallsyms(L)) && !(err = read_streams(L, names, n)) &&
	    !(err = cut_to_range(L))) {
		announce(o, "writing modules, threads and Python code");
		err = xp_loader_finish(L);
	}
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
