/* cmd_record.c - `xpcap record`: the only file of the capture stage that
 * talks to the user. It parses the options and runs xp_record()
 * (capture/recorder.h, the numbered steps), printing its lines and every
 * failure as one line `xpcap: cannot ...: reason` with an exit code:
 *   sudo xpcap record -o run -F 999 -- ./app arg      # exits with app's status
 *   sudo xpcap record -p 1234,5678 --duration 10
 *   sudo xpcap record -a --duration 5
 * As root (or with CAP_BPF and CAP_PERFMON) the eBPF sampler records;
 * as a normal user, perf events on the user's own processes (perfsampler.h)
 * and what only BPF can do (-a, --off-cpu, the uprobe) is refused.
 * Exit codes: the command's own status (128+N if killed by signal N);
 * 2 for bad arguments or environment (nothing is left behind); 127 when the
 * command cannot be executed (like a shell); 1 when writing the run failed
 * (meta.json at the start: nothing is left behind and the command never
 * runs; later, a full disk or quota only stops recording: the command runs
 * on and its status is still xpcap's); 0 for -p/-a runs that ended normally. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "cmd/cmd.h"
#include "capture/outname.h"
#include "capture/recorder.h"

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* library chatter only when asked for: XPCAP_DEBUG=1 */
	if (!getenv("XPCAP_DEBUG") || level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

/* The recorder's lines (progress already left out with -q). */
static void say(void *ctx, enum xp_say kind, const char *line)
{
	(void)ctx;
	(void)kind;
	fprintf(stderr, "xpcap: %s\n", line);
}

/* 1. the options: nothing is created before these pass. -1 to go on,
 * else the exit status. */
static int parse_args(struct xp_recorder *r, int argc, char **argv)
{
	char err_line[256];

	if (xp_record_opts_parse(&r->o, argc, argv, err_line, sizeof(err_line))) {
		fprintf(stderr, "xpcap: cannot record: %s (see xpcap record --help)\n", err_line);
		return XP_EXIT_USAGE;
	}
	if (r->o.help) {
		xp_record_usage(stdout);
		return XP_EXIT_OK;
	}
	if (strchr(r->o.output, '%')) {
		if (xp_output_expand(r->o.output, getenv, r->output, sizeof(r->output), err_line,
				     sizeof(err_line))) {
			fprintf(stderr, "xpcap: cannot record: %s\n", err_line);
			return XP_EXIT_USAGE;
		}
		r->o.output = r->output;
	}
	return -1;
}

int cmd_record(int argc, char **argv)
{
	struct xp_recorder *r = xp_recorder_new(say, NULL);
	int ret;

	if (!r) {
		fprintf(stderr, "xpcap: cannot record: out of memory\n");
		return XP_EXIT_FAIL;
	}
	libbpf_set_print(libbpf_quiet);
	if ((ret = parse_args(r, argc, argv)) < 0) {
		ret = xp_record(r);
		if (r->err[0])
			fprintf(stderr, "xpcap: %s\n", r->err);
	}
	xp_recorder_free(r);
	return ret;
}
