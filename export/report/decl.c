/* decl.c - every file's declared tables, for the schema check (decl.h). */
#include "export/report/decl.h"

const struct xp_decl *const xp_decls[] = {
	xp_decl_report, xp_decl_footer, xp_decl_cost, xp_decl_groups, xp_decl_stream,
	xp_decl_cpu, xp_decl_source_cpu, xp_decl_source, xp_decl_graph, xp_decl_rank,
	xp_decl_idle, xp_decl_launch, xp_decl_op, xp_decl_overlap, xp_decl_wait, xp_decl_rank_host, NULL,
};
