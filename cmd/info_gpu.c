/* info_gpu.c - the GPU summary of `xpcorr info` as text; see info_gpu.h. */
#include "cmd/info_gpu.h"
#include "src/textesc.h"

#include <inttypes.h>
#include <stdio.h>

static json_int_t num(const json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

void xp_info_gpu_print(const json_t *gpu)
{
	const char *why = json_string_value(json_object_get(gpu, "why_no_gpu_work"));
	const char *range = json_string_value(json_object_get(gpu, "capture_range"));

	const json_t *armed = json_object_get(gpu, "capture_armed");

	printf("gpu:             capture %s%s%s\n", json_is_null(armed) ? "armed or not: meta.json"
	       " does not say" : json_is_true(armed) ? "armed" : "NOT armed",
	       json_object_get(gpu, "injection_library") ? ", " : "",
	       xp_esc(json_string_value(json_object_get(gpu, "injection_library"))) ?: "");
	if (why)
		printf("  NO GPU WORK:   %s\n", xp_esc(why));
	/* a CPU-only run: one line is enough */
	if (!num(gpu, "kernels") && !num(gpu, "copies") && !num(gpu, "memsets") &&
	    !num(gpu, "launch_records"))
		return;
	printf("  devices:       %s\n",
	       xp_esc(json_string_value(json_object_get(gpu, "devices"))) ?: "none seen");
	printf("  kernels:       %" JSON_INTEGER_FORMAT ", %.3f ms of GPU time\n", num(gpu, "kernels"),
	       (double)num(gpu, "kernel_ns") / 1e6);
	printf("  copies:        %" JSON_INTEGER_FORMAT ", %.3f ms; memsets %" JSON_INTEGER_FORMAT "\n",
	       num(gpu, "copies"), (double)num(gpu, "copy_ns") / 1e6, num(gpu, "memsets"));
	printf("  launch records %" JSON_INTEGER_FORMAT ", %" JSON_INTEGER_FORMAT
	       " with Python stacks\n", num(gpu, "launch_records"), num(gpu, "python_stacks"));
	if (range)
		printf("  capture range: %s, opened %" JSON_INTEGER_FORMAT " time%s\n", xp_esc(range),
		       num(gpu, "windows_opened"), num(gpu, "windows_opened") == 1 ? "" : "s");
}
