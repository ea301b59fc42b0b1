/* load_finish.c - the rows written once every stream is read: modules,
 * threads and processes in key order, the unwinder's and kallsyms'
 * warnings, the Python and autograd stores, the ranks, and the load's
 * figures as META_DATA_EXPORT facts (xp.*).
 */
#include "ingest/loader.h"
#include "ingest/metarank.h"

#include <sys/resource.h>

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

/* Dwarf copies that could not be walked, or not to their end, by reason. */
static int unwind_warnings(struct loader *L)
{
	const struct xp_unwind_stats *u = xp_unwinder_stats(L->uw);
	struct rlimit rl;
	int err = 0;

	if (u->no_fd && !getrlimit(RLIMIT_NOFILE, &rl))
		err = xp_loader_warn(L, "cpu.xpr", 0, "%" PRIu64 " of %" PRIu64 " dwarf stack copies"
				     " were not unwound, or not to their end: no file descriptor left"
				     " (EMFILE, ulimit -n %llu); raise ulimit -n and ingest again",
				     u->no_fd, u->copies, (unsigned long long)rl.rlim_cur);
	if (!err && u->not_walked)
		err = xp_loader_warn(L, "cpu.xpr", 0, "%" PRIu64 " of %" PRIu64 " dwarf stack copies"
				     " were not unwound: libdwfl could not start a session (out of"
				     " memory?)", u->not_walked, u->copies);
	return err;
}

/* xp_threads and xp_processes, in key order (the maps' slots are not). */
static int write_tasks(struct loader *L)
{
	struct xp_u64map_entry *e = NULL;
	size_t n = 0;
	int err = xp_u64map_sorted(&L->threads, &e, &n);

	for (size_t i = 0; i < n && !err; i++) {
		sqlite3_bind_int64(L->st[STMT_THREAD], 1, (int64_t)e[i].value);
		sqlite3_bind_int64(L->st[STMT_THREAD], 2, xp_gtid(e[i].k1, e[i].k2));
		err = xp_loader_step(L, STMT_THREAD);
	}
	free(e);
	e = NULL;
	if (!err)
		err = xp_u64map_sorted(&L->procs, &e, &n);
	for (size_t i = 0; i < n && !err; i++) {
		sqlite3_bind_int64(L->st[STMT_PROCESS], 1, xp_gpid(e[i].k1));
		sqlite3_bind_int64(L->st[STMT_PROCESS], 2, (int64_t)e[i].k1);
		sqlite3_bind_text(L->st[STMT_PROCESS], 3, xp_stackwriter_text(L->w, (int64_t)e[i].value),
				  -1, SQLITE_STATIC);
		err = xp_loader_step(L, STMT_PROCESS);
	}
	free(e);
	return err;
}

/* Final rows: modules, threads, processes, summary facts. */
int xp_loader_finish(struct loader *L)
{
	char val[64], hex[2 * XP_BUILD_ID_MAX + 1];
	int err = 0;

	for (uint32_t i = 0; i < xp_symbolizer_count(L->sym) && !err; i++) {
		const char *path = xp_symbolizer_path(L->sym, i);
		const uint8_t *bid = NULL;
		size_t bid_len;
		int64_t path_id;

		err = xp_loader_intern_str(L, path, &path_id);
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
		err = xp_loader_step(L, STMT_MODULE);
	}
	if (!err)
		err = write_tasks(L);
	if (!err)
		err = unwind_warnings(L);
	if (!err && L->ksyms_cut)
		err = xp_loader_warn(L, "kallsyms", 0, "%s/kallsyms: truncated (%s): %" PRIu64 " kernel"
			   " addresses past its last symbol stay addresses", L->o->run_dir,
			   L->ksyms_cut, L->ksyms_beyond);
	if (!err && !(err = xp_pystore_save(L->db, L->py)))
		err = xp_pywaits_save(L->db, L->pyw);
	if (!err)
		err = xp_agstore_save(L->db, L->ag);
	if (err == -EIO)
		return xp_loader_db_fail(L, "xp_python_processes");
	if (!err && xp_meta_rank_save(L->db) < 0)
		return xp_loader_db_fail(L, "xp_ranks");
	L->res->stacks = xp_stackwriter_made(L->w, XP_SW_NODES);
	L->res->frames = xp_stackwriter_made(L->w, XP_SW_FRAMES);
	L->res->strings = xp_stackwriter_made(L->w, XP_SW_STRINGS);
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
			{ "xp.unwinds_no_fd", xp_unwinder_stats(L->uw)->no_fd },
			{ "xp.unwinds_not_walked", xp_unwinder_stats(L->uw)->not_walked },
			{ "xp.unwinds_stopped_moved", xp_unwinder_stats(L->uw)->moved },
			{ "xp.unwind_sessions", xp_unwinder_stats(L->uw)->sessions_opened },
			{ "xp.launches_borrowed", L->res->launches_borrowed },
			{ "xp.borrowed_missing", L->res->borrowed_missing },
			{ "xp.stack_checks", L->res->stack_checks },
			{ "xp.stack_checks_differed", L->res->stack_checks_differed },
			{ "xp.symbolized_addresses", L->res->addresses },
			{ "xp.symbolize_ns", L->res->symbolize_ns },
			{ "xp.unwind_ns", L->res->unwind_ns },
			{ "xp.warnings", L->res->nwarnings },
		};

		for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]) && !err; i++) {
			snprintf(val, sizeof(val), "%" PRIu64, facts[i].v);
			sqlite3_bind_text(L->st[STMT_META], 1, facts[i].k, -1, SQLITE_STATIC);
			sqlite3_bind_text(L->st[STMT_META], 2, val, -1, SQLITE_TRANSIENT);
			err = xp_loader_step(L, STMT_META);
		}
	}
	return err;
}
