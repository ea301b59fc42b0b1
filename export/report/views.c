/* views.c - the table of `xpcorr report` views (views.h). */
#include "export/report/views.h"

#include <string.h>

#include "export/report/report_priv.h"

#define RANK_HINT "(RANK, SLURM_PROCID, OMPI_COMM_WORLD_RANK or PMI_RANK in its environment:" \
	" run it under torchrun, srun or mpirun)"

const struct xp_view xp_views[XP_BY_COUNT] = {
	[XP_BY_KERNEL] = { "kernel", "CUDA GPU Kernel Summary (cuda_gpu_kern_sum) with launching CPU"
			   " stacks", "no kernel ran (a program without CUDA work, or GPU capture was off)",
			   NULL },
	[XP_BY_STACK] = { "stack", "GPU Time by Launching CPU Stack (kernels, memcpy, memset)",
			  "no GPU work with a launch stack", NULL },
	[XP_BY_API] = { "api", "CUDA API Summary (cuda_api_sum)", "no CUDA API call was recorded", NULL },
	[XP_BY_MEMOP] = { "memop", "CUDA GPU MemOps Summary by Time (cuda_gpu_mem_time_sum)",
			  "no memory copy or memset ran", NULL },
	[XP_BY_THREAD] = { "thread", "GPU Time by Launching CPU Thread", "no thread launched GPU work",
			   NULL },
	[XP_BY_GRAPH] = { "graph", "CUDA Graphs: replays of each graph exec (first node start to last"
			  " node end), named for where the graph was captured",
			  "no CUDA graph was launched", xp_report_graph },
	[XP_BY_NVTX] = { "nvtx", "GPU Time by NVTX Range of the Launching Call (nvtx_gpu_proj_sum)",
			 "no GPU work was launched inside an NVTX range", NULL },
	[XP_BY_SOURCE] = { "source", "GPU Time by Python Source of the Launch (self: launched by the"
			   " line itself; total: also by what it calls)",
			   "no launch had a Python stack (a program without Python, or --python-lines off)",
			   xp_report_source },
	[XP_BY_RANK] = { "rank", "Ranks of the Job: GPU time, kernels, time in collectives (NCCL, gloo),"
			 " host waiting in CUDA synchronize calls",
			 "no process recorded a rank " RANK_HINT, xp_report_rank },
	[XP_BY_OP] = { "op", "GPU Time by Operator of the Launch (aten:: op, else the CUDA call;"
		       " key_averages)", "no CUDA call was recorded", xp_view_op },
	[XP_BY_IDLE] = { "idle", "GPU Time Breakdown per Device and Step, and What the Host Did While"
			 " the GPU Was Idle", "no GPU work ran", xp_view_idle },
	[XP_BY_LAUNCH] = { "launch", "Launch to Start: delay and queue depth per stream and kernel, CPU"
			   " cost of the launch calls (cuda_kern_exec_sum)",
			   "no GPU work had its launch call recorded", xp_view_launch },
	[XP_BY_OVERLAP] = { "overlap", "Communication Overlapped with Compute per Rank, and the Most"
			    " Exposed Collectives", "no collective (NCCL or gloo kernel) ran",
			    xp_view_overlap },
	[XP_BY_CPU] = { "cpu", "CPU Samples by Function (self: in the function itself; total: also"
			" in what it calls)",
			"no CPU sample in the selection (recorded with --gpu-only?)", xp_view_cpu },
	[XP_BY_WAIT] = { "wait", "Cross-Rank Blame: every wait in a collective charged to the rank"
			 " waited for and to what that rank did meanwhile",
			 "no rank waited in a collective for another (one rank, or no collective;"
			 " a job's runs together: xpcorr merge)", xp_view_wait },
	[XP_BY_STREAM] = { "stream", "GPU Time per CUDA Stream (kernels, copies and sets)",
			   "no GPU work ran", xp_view_stream },
};

void xp_rep_bind_filter(void *ctx, sqlite3_stmt *s)
{
	struct rep *R = ctx;
	int i;

	if ((i = sqlite3_bind_parameter_index(s, ":pid")))
		sqlite3_bind_int64(s, i, R->o->pid);
	if ((i = sqlite3_bind_parameter_index(s, ":since")))
		sqlite3_bind_int64(s, i, R->o->since);
	if ((i = sqlite3_bind_parameter_index(s, ":until")))
		sqlite3_bind_int64(s, i, R->o->until);
}

int xp_view_find(const char *name)
{
	for (int i = 0; i < XP_BY_COUNT; i++)
		if (!strcmp(xp_views[i].name, name))
			return i;
	return -1;
}
