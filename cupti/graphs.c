/* graphs.c - CUDA graphs' life events from CUPTI's resource callbacks, one
 * XP_REC_GPU_GRAPH record each: graphs made (by stream capture or by hand),
 * cloned and destroyed, their nodes (with the CUDA call that made each: a
 * captured launch), the nodes cloned into a graph exec at instantiation,
 * execs made and destroyed. Rare events (capture and instantiation happen at
 * start-up): written directly, no batching; ordinary launches never come here.
 *   xpc_graphs_enable(sub);                  // from InitializeInjection
 *   xpc_graph_event(cbid, resource_data);    // from the subscriber callback
 */
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cupti.h>

#include "cupti/xpcupti.h"

static const CUpti_CallbackId graph_ids[] = {
	CUPTI_CBID_RESOURCE_GRAPH_CREATED, CUPTI_CBID_RESOURCE_GRAPH_CLONED,
	CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING, CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED,
	CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING,
	CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED, CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING,
};

static uint32_t graph_id(CUgraph g)
{
	uint32_t id = 0;

	return g && cuptiGetGraphId(g, &id) == CUPTI_SUCCESS ? id : 0;
}

static uint64_t node_id(CUgraphNode n)
{
	uint64_t id = 0;

	return n && cuptiGetGraphNodeId(n, &id) == CUPTI_SUCCESS ? id : 0;
}

static uint32_t exec_id(CUgraphExec e)
{
	uint32_t id = 0;

	return e && cuptiGetGraphExecId(e, &id) == CUPTI_SUCCESS ? id : 0;
}

/* CUPTI callback id -> our event, 0 for the ones not recorded */
static uint32_t event_of(CUpti_CallbackId cbid)
{
	switch (cbid) {
	case CUPTI_CBID_RESOURCE_GRAPH_CREATED: return XP_GRAPH_CREATED;
	case CUPTI_CBID_RESOURCE_GRAPH_CLONED: return XP_GRAPH_CLONED;
	case CUPTI_CBID_RESOURCE_GRAPH_DESTROY_STARTING: return XP_GRAPH_DESTROYED;
	case CUPTI_CBID_RESOURCE_GRAPHNODE_CREATED: return XP_GRAPH_NODE_CREATED;
	case CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED: return XP_GRAPH_NODE_CLONED;
	case CUPTI_CBID_RESOURCE_GRAPHNODE_DESTROY_STARTING: return XP_GRAPH_NODE_DESTROYED;
	case CUPTI_CBID_RESOURCE_GRAPHEXEC_CREATED: return XP_GRAPH_EXEC_CREATED;
	case CUPTI_CBID_RESOURCE_GRAPHEXEC_DESTROY_STARTING: return XP_GRAPH_EXEC_DESTROYED;
	default: return 0;
	}
}

void xpc_graph_event(CUpti_CallbackId cbid, const CUpti_ResourceData *rd)
{
	const CUpti_GraphData *g = rd ? rd->resourceDescriptor : NULL;
	struct xp_gpu_graph r;

	memset(&r, 0, sizeof(r));
	if (!g || !(r.event = event_of(cbid)) || !__atomic_load_n(&xpc.active, __ATOMIC_RELAXED))
		return;
	r.ts = xpc_now();
	r.pid = (uint32_t)xpc.pid;
	r.tid = (uint32_t)syscall(SYS_gettid);
	r.correlation_id = xpc_open_correlation();
	r.graph_id = graph_id(g->graph);
	r.orig_graph_id = graph_id(g->originalGraph);
	r.node_id = node_id(g->node);
	r.orig_node_id = node_id(g->originalNode);
	r.exec_id = exec_id(g->graphExec);
	if (r.event == XP_GRAPH_NODE_CREATED || r.event == XP_GRAPH_NODE_CLONED)
		r.node_type = (uint32_t)g->nodeType;
	xpc_emit(NULL, XP_REC_GPU_GRAPH, &r, sizeof(r), NULL, 0);
}

int xpc_graphs_enable(CUpti_SubscriberHandle sub)
{
	for (size_t i = 0; i < sizeof(graph_ids) / sizeof(graph_ids[0]); i++) {
		CUptiResult res = cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RESOURCE, graph_ids[i]);

		if (res != CUPTI_SUCCESS)
			return (int)res;
	}
	return 0;
}
