/* info_python.c - Python stacks in `xpcorr info` as text; see info_python.h. */
#include "cmd/info_python.h"

#include <stdio.h>

#include "src/satmath.h"
#include "src/textesc.h"

static json_int_t get(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

/* Python frames in CPU samples: per process, how xpcap read them or why not. */
static void print_samples(const json_t *cs)
{
	json_int_t on = get(cs, "python_samples"), with = get(cs, "with_frames");
	const json_t *p;
	size_t i;

	printf("python in samples: %" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT
	       " CPU samples on threads that run Python had Python frames (%.1f%%)\n", with, on,
	       on ? 100.0 * (double)with / (double)on : 0.0);
	json_array_foreach(json_object_get(cs, "processes"), i, p) {
		const char *ver = xp_esc(json_string_value(json_object_get(p, "python")));
		const char *why = xp_esc(json_string_value(json_object_get(p, "reason")));
		json_int_t pon = get(p, "python_samples"), pw = get(p, "with_frames");

		if (json_is_true(json_object_get(p, "supported")))
			printf("  %8" JSON_INTEGER_FORMAT " Python %s: %" JSON_INTEGER_FORMAT " of %"
			       JSON_INTEGER_FORMAT " samples on Python threads with Python frames"
			       " (%.1f%%; %s)\n", get(p, "pid"), ver ? ver : "?", pw, pon,
			       pon ? 100.0 * (double)pw / (double)pon : 0.0, why ? why : "");
		else
			printf("  %8" JSON_INTEGER_FORMAT " Python %s: no Python frames in its %"
			       JSON_INTEGER_FORMAT " samples: %s\n", get(p, "pid"), ver ? ver : "?",
			       get(p, "samples"), why ? why : "");
	}
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

	if (json_object_get(py, "cpu_samples"))
		print_samples(json_object_get(py, "cpu_samples"));
	if (!json_object_get(py, "launches"))
		return;
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
