/* info_autograd.c - backward kernels in `xpcorr info` as text; see info_autograd.h. */
#include "cmd/info_autograd.h"

#include <stdio.h>

#include "src/textesc.h"

static json_int_t get(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

void xp_info_autograd_print(const json_t *ag)
{
	json_int_t ns = get(ag, "backward_gpu_ns"), line_ns = get(ag, "at_forward_line_gpu_ns");
	const json_t *v;
	size_t i;

	printf("backward:        %" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT " backward"
	       " launches at the forward line that made their autograd node (%.1f%% of their GPU"
	       " time)\n", get(ag, "at_forward_line_launches"), get(ag, "backward_launches"),
	       ns ? 100.0 * (double)line_ns / (double)ns : 0.0);
	if (get(ag, "by_producer_launches"))
		printf("  %5.1f%% of them AccumulateGrad's, at the line of the node that produced"
		       " the gradient (%" JSON_INTEGER_FORMAT " launches)\n",
		       ns ? 100.0 * (double)get(ag, "by_producer_gpu_ns") / (double)ns : 0.0,
		       get(ag, "by_producer_launches"));
	if (get(ag, "between_launches_launches"))
		printf("  %5.1f%% of them nodes whose forward op launched nothing (views), at the line"
		       " of the launches around them (%" JSON_INTEGER_FORMAT " launches)\n",
		       ns ? 100.0 * (double)get(ag, "between_launches_gpu_ns") / (double)ns : 0.0,
		       get(ag, "between_launches_launches"));
	if (get(ag, "under_enclosing_line_launches"))
		printf("  %5.1f%% under an enclosing forward line: nodes whose forward op launched"
		       " nothing (views), made between launches of different lines; the line both"
		       " ran under (%" JSON_INTEGER_FORMAT " launches)\n",
		       ns ? 100.0 * (double)get(ag, "under_enclosing_line_gpu_ns") / (double)ns : 0.0,
		       get(ag, "under_enclosing_line_launches"));
	json_array_foreach(json_object_get(ag, "unknown"), i, v)
		printf("  %5.1f%% no forward line: %s (%" JSON_INTEGER_FORMAT " launches)\n",
		       ns ? 100.0 * (double)get(v, "gpu_ns") / (double)ns : 0.0,
		       json_string_value(json_object_get(v, "why")), get(v, "launches"));
	json_array_foreach(json_object_get(ag, "processes"), i, v)
		printf("  %8" JSON_INTEGER_FORMAT " autograd %s: %s (%" JSON_INTEGER_FORMAT
		       " nodes read, %" JSON_INTEGER_FORMAT " failed the layout check)\n",
		       get(v, "pid"), json_is_true(json_object_get(v, "reads_nodes")) ? "on" : "off",
		       json_string_value(json_object_get(v, "reason")), get(v, "nodes"),
		       get(v, "rejected"));
}
