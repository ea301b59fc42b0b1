/* info_python.c - Python stacks in `xpcorr info` as text; see info_python.h. */
#include "cmd/info_python.h"

#include <stdio.h>

#include "src/satmath.h"
#include "src/textesc.h"

static json_int_t get(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

void xp_info_python_print(const json_t *py)
{
	json_int_t all = get(py, "launches"), with = get(py, "with_python");
	json_int_t could = get(py, "on_python_threads");
	/* the counts of a crafted database may be anything: no overflow */
	json_int_t rest = xp_sat_sub(xp_sat_sub(xp_sat_sub(xp_sat_sub(xp_sat_sub(all, with),
			  get(py, "no_thread")), get(py, "unsupported")), get(py, "unreadable")),
			  get(py, "lost_other"));
	const json_t *p;
	size_t i;

	printf("python lines:    %" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT
	       " launches on threads that run Python had a Python stack (%.1f%%); %"
	       JSON_INTEGER_FORMAT " launches in all\n", with, could,
	       could ? 100.0 * (double)with / (double)could : 0.0, all);
	printf("  without one:   %" JSON_INTEGER_FORMAT " frames unreadable, %" JSON_INTEGER_FORMAT
	       " lost (no room); not on a Python thread %" JSON_INTEGER_FORMAT
	       ", interpreter not supported %" JSON_INTEGER_FORMAT ", no Python record %"
	       JSON_INTEGER_FORMAT "\n", get(py, "unreadable"), get(py, "lost_other"),
	       get(py, "no_thread"), get(py, "unsupported"), rest > 0 ? rest : 0);
	if (get(py, "joined_gap"))
		printf("  %" JSON_INTEGER_FORMAT " joined above a gap: the native unwind did not reach"
		       " the interpreter's frames (modules missing here?)\n", get(py, "joined_gap"));
	json_array_foreach(json_object_get(py, "gpu_by_launcher"), i, p) {
		const char *why = xp_esc(json_string_value(json_object_get(p, "why")));

		printf("  %5.1f%% of the exact GPU time %s\n", json_real_value(json_object_get(p, "pct")),
		       why ? why : "was launched from Python");
	}
	json_array_foreach(json_object_get(py, "processes"), i, p) {
		const char *ver = xp_esc(json_string_value(json_object_get(p, "python")));
		const json_t *sup = json_object_get(p, "supported");
		const char *why = xp_esc(json_string_value(json_object_get(p, "reason")));

		printf("  %8" JSON_INTEGER_FORMAT " Python %s%s%s%s: %" JSON_INTEGER_FORMAT " of %"
		       JSON_INTEGER_FORMAT " launches with a Python stack\n", get(p, "pid"),
		       ver ? ver : "?", json_is_false(sup) ? " not supported" : json_is_null(sup) ?
		       " (no interpreter record)" : "", why ? ": " : "", why ? why : "",
		       get(p, "with_python"), get(p, "launches"));
	}
}
