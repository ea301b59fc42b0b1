/* ownframes.c - the recorder's own frames (ownframes.h). */
#include "db/ownframes.h"
#include "db/db_schema.h"

#include <string.h>

static int starts(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

static const char *base_of(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	return b ? b + 1 : path;
}

enum xp_own xp_own_frame(int kind, const char *symbol, const char *module)
{
	const char *base = base_of(module);

	if (kind == XP_FRAME_KERNEL || kind == XP_FRAME_KERNEL_UNRESOLVED) {
		/* bpf_prog_<tag>_<name>: ours are all named xp_* */
		if (starts(symbol, "bpf_prog_") && strstr(symbol + 9, "_xp_"))
			return XP_OWN_BPF_PROG;
		if (starts(symbol, "bpf_trace_run") || starts(symbol, "__bpf_trace_") ||
		    starts(symbol, "__traceiter_") || starts(symbol, "trace_call_bpf") ||
		    starts(symbol, "bpf_prog_run") || starts(symbol, "__bpf_prog_run"))
			return XP_OWN_BPF_TRACE;
		return XP_OWN_NONE;
	}
	if (kind == XP_FRAME_PYTHON)
		return XP_OWN_NONE;
	if (starts(base, "libxpcupti.so"))
		return symbol && !strcmp(symbol, "xpc_stack_take") ? XP_OWN_PROBE : XP_OWN_RECORDER;
	if (starts(base, "libcupti.so") || starts(symbol, "libcupti.so"))
		return XP_OWN_CUPTI;
	return XP_OWN_NONE;
}

size_t xp_own_cut(const uint8_t *own, size_t n)
{
	size_t i = 0, ours;

	if (n && own[0] == XP_OWN_BPF_PROG) {
		for (i = 1; i < n && (own[i] == XP_OWN_BPF_PROG || own[i] == XP_OWN_BPF_TRACE); i++)
			;
		return i < n ? i : 0;
	}
	while (i < n && (own[i] == XP_OWN_RECORDER || own[i] == XP_OWN_PROBE))
		i++;
	ours = i;
	while (i < n && own[i] == XP_OWN_CUPTI)
		i++;
	if (ours && i == n && own[0] == XP_OWN_PROBE)
		return n;           /* unreadable past the probe: the loss is counted */
	return ours && i > ours && i < n ? i : 0;
}
