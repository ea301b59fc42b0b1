/* jobrank.c - a process's rank from its launcher's variables (jobrank.h). */
#include "src/jobrank.h"

#include <errno.h>
#include <stdlib.h>

/* A non-negative decimal below 2^31, or -1. */
static int32_t number(const char *s)
{
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	return errno || *end || v < 0 || v > 0x7fffffff ? -1 : (int32_t)v;
}

int xp_job_rank(char *(*get)(const char *), struct xp_gpu_rank *r)
{
	/* the launcher's own names first: torchrun also runs under Slurm */
	static const struct {
		uint32_t source;
		const char *rank, *local_rank, *world, *local_world;
	} launchers[] = {
		{ XP_RANK_TORCHRUN, "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE" },
		{ XP_RANK_OMPI, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
		  "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE" },
		{ XP_RANK_SLURM, "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", "SLURM_NTASKS_PER_NODE" },
		{ XP_RANK_PMI, "PMI_RANK", "PMI_LOCAL_RANK", "PMI_SIZE", "PMI_LOCAL_SIZE" },
	};

	r->source = XP_RANK_NONE;
	r->rank = r->local_rank = r->world_size = r->local_world_size = -1;
	for (size_t i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++) {
		int32_t rank = number(get(launchers[i].rank));

		if (rank < 0)
			continue;
		r->source = launchers[i].source;
		r->rank = rank;
		r->local_rank = number(get(launchers[i].local_rank));
		r->world_size = number(get(launchers[i].world));
		r->local_world_size = number(get(launchers[i].local_world));
		return 1;
	}
	return 0;
}

const char *xp_job_rank_source(uint32_t source)
{
	switch (source) {
	case XP_RANK_TORCHRUN: return "torchrun";
	case XP_RANK_SLURM: return "slurm";
	case XP_RANK_OMPI: return "mpi";
	case XP_RANK_PMI: return "pmi";
	default: return "none";
	}
}
