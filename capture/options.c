/* options.c - the command line of `xpcap record`, parsed into struct xp_record_opts.
 *   xpcap record [-o DIR] [-F HZ] [--duration S] [-a | -p PID[,PID]] [--force]
 *                [-q] [--no-gpu] [--gpu-only] [--cupti-lib PATH] [-m KIB]
 *                [--off-cpu|--no-off-cpu] [--off-cpu-min-us US] [--call-graph fp|dwarf[,SIZE]]
 *                [--launch-call-graph fp|dwarf[,SIZE]] [--launch-stacks inproc|uprobe]
 *                [--python-lines on|off] [--reuse-stacks on|off] [--compress none|zstd]
 *                [--no-python-frames]
 *                [--record-privileged] [--delay S] [--kill]
 *                [--capture-range cudaProfilerApi|nvtx:NAME [--capture-range-count N]]
 *                [-- CMD ARGS]
 * Pure: no I/O besides usage text, so tests/test-options.c checks it. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture/record.h"

enum { OPT_DURATION = 256, OPT_FORCE, OPT_NO_GPU, OPT_GPU_ONLY, OPT_CUPTI_LIB, OPT_OFF_CPU,
       OPT_OFF_CPU_MIN, OPT_CALL_GRAPH, OPT_LAUNCH_CALL_GRAPH, OPT_LAUNCH_STACKS, OPT_COMPRESS,
       OPT_PYTHON_LINES, OPT_REUSE_STACKS, OPT_RECORD_PRIVILEGED, OPT_DELAY, OPT_CAPTURE_RANGE,
       OPT_CAPTURE_COUNT, OPT_KILL, OPT_NO_PYTHON_FRAMES, OPT_NO_OFF_CPU };

static const struct option long_opts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "freq", required_argument, NULL, 'F' },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "delay", required_argument, NULL, OPT_DELAY },
	{ "kill", no_argument, NULL, OPT_KILL },
	{ "capture-range", required_argument, NULL, OPT_CAPTURE_RANGE },
	{ "capture-range-count", required_argument, NULL, OPT_CAPTURE_COUNT },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "pid", required_argument, NULL, 'p' },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "quiet", no_argument, NULL, 'q' },
	{ "no-gpu", no_argument, NULL, OPT_NO_GPU },
	{ "no-python-frames", no_argument, NULL, OPT_NO_PYTHON_FRAMES },
	{ "gpu-only", no_argument, NULL, OPT_GPU_ONLY },
	{ "cupti-lib", required_argument, NULL, OPT_CUPTI_LIB },
	{ "ring-size", required_argument, NULL, 'm' },
	{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
	{ "off-cpu-min-us", required_argument, NULL, OPT_OFF_CPU_MIN },
	{ "no-off-cpu", no_argument, NULL, OPT_NO_OFF_CPU },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "launch-call-graph", required_argument, NULL, OPT_LAUNCH_CALL_GRAPH },
	{ "launch-stacks", required_argument, NULL, OPT_LAUNCH_STACKS },
	{ "python-lines", required_argument, NULL, OPT_PYTHON_LINES },
	{ "reuse-stacks", required_argument, NULL, OPT_REUSE_STACKS },
	{ "compress", required_argument, NULL, OPT_COMPRESS },
	{ "record-privileged", no_argument, NULL, OPT_RECORD_PRIVILEGED },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

void xp_record_usage(FILE *f)
{
	fputs("usage: xpcap record [options] -- COMMAND [ARGS...]\n"
	      "       xpcap record [options] -p PID[,PID...] | -a\n"
	      "  -o, --output DIR      run directory (default " XP_RECORD_DEFAULT_OUTPUT ")\n"
	      "  -F, --freq HZ         CPU sampling frequency (default 99)\n"
	      "      --duration S      stop recording after S seconds (GPU records too), then\n"
	      "                        wait for the command and exit with its status\n"
	      "      --kill            at the end of --duration, end the command (SIGTERM,\n"
	      "                        SIGKILL 5 s later) instead of waiting for it\n"
	      "      --delay S         record nothing (CPU or GPU) in the first S seconds\n"
	      "      --capture-range cudaProfilerApi|nvtx:NAME  GPU records only between\n"
	      "                        cudaProfilerStart and cudaProfilerStop, or inside the\n"
	      "                        first NVTX range NAME; CUPTI activity is off outside\n"
	      "      --capture-range-count N  the first N such ranges (default 1)\n"
	      "  -a, --all-cpus        sample the whole system\n"
	      "  -p, --pid PID[,PID]   attach to running processes\n"
	      "      --force           write into a non-empty run directory\n"
	      "  -q, --quiet           no progress messages\n"
	      "      --no-gpu          no correlation uprobe, no CUDA injection\n"
	      "      --gpu-only        no periodic CPU sampling\n"
	      "      --cupti-lib PATH  injection library (default: libxpcupti.so next to xpcap)\n"
	      "  -m, --ring-size KIB   BPF ring buffer, a power of two (default 1 MiB per CPU, 8 MiB at least)\n"
	      "      --off-cpu         record when threads block, for how long, with their stacks\n"
	      "                        (default while GPU capture is armed: waits of 50 us or more)\n"
	      "      --no-off-cpu      no off-CPU intervals, not even by default\n"
	      "      --off-cpu-min-us US  drop off-CPU intervals shorter than US (default 0 with\n"
	      "                        --off-cpu, 50 for the default waits)\n"
	      "      --call-graph fp|dwarf[,SIZE]  samples and off-CPU stacks: frame pointers\n"
	      "                        (default), or also SIZE bytes of user stack (default 8192)\n"
	      "      --launch-call-graph fp|dwarf[,SIZE]  launch stacks (default dwarf,65528\n"
	      "                        in-process, dwarf,8192 by the uprobe)\n"
	      "      --launch-stacks inproc|uprobe  who takes launch stacks: the injection\n"
	      "                        library itself, with Python lines (default for a\n"
	      "                        command), or xpcap's uprobe (default with -p and -a)\n"
	      "      --python-lines on|off  in-process launch stacks: the Python file, function\n"
	      "                        and line of each frame (default on)\n"
	      "      --no-python-frames  CPU samples without Python frames (by default xpcap\n"
	      "                        reads each traced Python thread's frames at -F)\n"
	      "      --reuse-stacks on|off  in-process launch stacks: a launch that repeats an\n"
	      "                        earlier one (same Python stack, kernel and stack depth)\n"
	      "                        names its copy instead of copying, checked by one copy\n"
	      "                        in 64 (default on; off: every launch copies)\n"
	      "      --compress none|zstd  cpu.xpr in zstd-compressed blocks (default zstd)\n"
	      "      --record-privileged  also record setuid and non-dumpable tasks (root\n"
	      "                        without sudo only; they are dropped by default)\n",
	      f);
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int xp_record_parse_pids(const char *s, pid_t *pids, unsigned max, unsigned *n)
{
	const char *p = s;

	*n = 0;
	if (!*p)
		return -EINVAL;
	while (*p) {
		char *end;
		long v;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || v <= 0 || v > INT_MAX || (*end && *end != ','))
			return -EINVAL;
		if (*n >= max)
			return -E2BIG;
		pids[(*n)++] = (pid_t)v;
		p = *end ? end + 1 : end;
		if (*end == ',' && !*p)
			return -EINVAL;
	}
	return 0;
}

static int parse_ring(const char *s, uint32_t *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < XP_RECORD_MIN_RING_KIB || v > (long)XP_RECORD_MAX_RING_KIB ||
	    (v & (v - 1)))
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int xp_record_parse_call_graph(const char *s, uint32_t *copy_bytes)
{
	char *end;
	long v;

	if (!strcmp(s, "fp")) {
		*copy_bytes = 0;
		return 0;
	}
	if (strncmp(s, "dwarf", 5) || (s[5] && s[5] != ','))
		return -EINVAL;
	if (!s[5]) {
		*copy_bytes = XP_RECORD_DEFAULT_COPY;
		return 0;
	}
	errno = 0;
	v = strtol(s + 6, &end, 10);
	if (errno || end == s + 6 || *end || v < 1 || v > XP_USER_COPY_MAX)
		return -EINVAL;
	*copy_bytes = XP_ALIGN8((uint32_t)v);
	return 0;
}

static int parse_freq(const char *s, unsigned *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > XP_RECORD_MAX_FREQ)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

static int parse_duration(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end || !(*out > 0) || *out > 1e7 ? -EINVAL : 0;
}

/* cudaProfilerApi, or nvtx:NAME with a NAME of 1..255 bytes */
static int parse_capture_range(const char *s)
{
	if (!strcmp(s, "cudaProfilerApi"))
		return 0;
	if (strncmp(s, "nvtx:", 5) || !s[5] || strlen(s + 5) > XP_RECORD_MAX_RANGE_NAME)
		return -EINVAL;
	return 0;
}

static int parse_count(const char *s, unsigned *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > XP_RECORD_MAX_RANGE_COUNT)
		return -EINVAL;
	*out = (unsigned)v;
	return 0;
}

static int parse_offcpu_min(const char *s, uint32_t *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > (long)XP_RECORD_MAX_OFFCPU_MIN_US)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* One of two words: *out = (s == yes); -EINVAL for anything else. */
static int parse_choice(const char *s, const char *yes, const char *no, bool *out)
{
	if (strcmp(s, yes) && strcmp(s, no))
		return -EINVAL;
	*out = !strcmp(s, yes);
	return 0;
}

/* What the user chose explicitly, for the defaults that depend on it. */
struct given {
	bool launch_graph;          /* --launch-call-graph */
	bool launch_stacks;         /* --launch-stacks */
	bool offcpu_min;            /* --off-cpu-min-us */
};

/* The options without an argument. */
static void set_flag(struct xp_record_opts *o, int c)
{
	switch (c) {
	case 'a': o->system_wide = true; break;
	case OPT_FORCE: o->force = true; break;
	case 'q': o->quiet = true; break;
	case OPT_NO_GPU: o->no_gpu = true; break;
	case OPT_NO_PYTHON_FRAMES: o->no_python_frames = true; break;
	case OPT_GPU_ONLY: o->gpu_only = true; break;
	case OPT_RECORD_PRIVILEGED: o->record_privileged = true; break;
	case OPT_OFF_CPU: o->off_cpu = o->off_cpu_given = true; break;
	case OPT_NO_OFF_CPU: o->no_off_cpu = true; break;
	case OPT_KILL: o->kill_at_end = true; break;
	case 'h': o->help = true; break;
	}
}

/* The options that name one of two choices, --off-cpu-min-us, and what
 * getopt could not take: 0, or -1 with the message in err. */
static int parse_choice_option(struct xp_record_opts *o, int c, char **argv, struct given *g,
			       char *err, size_t errlen)
{
	switch (c) {
	case OPT_LAUNCH_STACKS:
		g->launch_stacks = true;
		if (parse_choice(optarg, "inproc", "uprobe", &o->launch_inproc))
			return fail(err, errlen, "invalid launch stacks '%s': expected uprobe or "
				    "inproc", optarg);
		return 0;
	case OPT_PYTHON_LINES:
		if (parse_choice(optarg, "on", "off", &o->python_lines))
			return fail(err, errlen, "invalid python lines '%s': expected on or off", optarg);
		return 0;
	case OPT_REUSE_STACKS:
		if (parse_choice(optarg, "on", "off", &o->reuse_stacks))
			return fail(err, errlen, "invalid reuse stacks '%s': expected on or off", optarg);
		return 0;
	case OPT_COMPRESS:
		if (parse_choice(optarg, "zstd", "none", &o->compress))
			return fail(err, errlen, "invalid compression '%s': expected none or zstd", optarg);
		return 0;
	case OPT_OFF_CPU_MIN:
		g->offcpu_min = true;
		if (parse_offcpu_min(optarg, &o->offcpu_min_us))
			return fail(err, errlen, "invalid off-CPU minimum '%s': expected 0..%u "
				    "microseconds", optarg, XP_RECORD_MAX_OFFCPU_MIN_US);
		return 0;
	case ':':
		return fail(err, errlen, "option '%s' needs an argument", argv[optind - 1]);
	default:
		return fail(err, errlen, "unknown option '%s'", argv[optind - 1]);
	}
}

/* One option with its argument: 0, or -1 with the message in err. */
static int parse_option(struct xp_record_opts *o, int c, char **argv, struct given *g,
			char *err, size_t errlen)
{
	switch (c) {
	case 'o':
		if (!*optarg)
			return fail(err, errlen, "invalid output directory: empty");
		o->output = optarg;
		return 0;
	case 'F':
		if (parse_freq(optarg, &o->freq))
			return fail(err, errlen, "invalid frequency '%s': expected 1..%d Hz",
				    optarg, XP_RECORD_MAX_FREQ);
		return 0;
	case OPT_DURATION:
		if (parse_duration(optarg, &o->duration_s))
			return fail(err, errlen, "invalid duration '%s': expected seconds > 0", optarg);
		return 0;
	case OPT_DELAY:
		if (parse_duration(optarg, &o->delay_s))
			return fail(err, errlen, "invalid delay '%s': expected seconds > 0", optarg);
		return 0;
	case OPT_CAPTURE_RANGE:
		if (parse_capture_range(optarg))
			return fail(err, errlen, "invalid capture range '%s': expected cudaProfilerApi "
				    "or nvtx:NAME (NAME of 1..%d bytes)", optarg, XP_RECORD_MAX_RANGE_NAME);
		o->capture_range = optarg;
		return 0;
	case OPT_CAPTURE_COUNT:
		if (parse_count(optarg, &o->capture_count))
			return fail(err, errlen, "invalid capture range count '%s': expected 1..%d",
				    optarg, XP_RECORD_MAX_RANGE_COUNT);
		return 0;
	case 'p':
		if (xp_record_parse_pids(optarg, o->pids, XP_RECORD_MAX_PIDS, &o->npids))
			return fail(err, errlen, "invalid pid list '%s': expected PID[,PID...]", optarg);
		return 0;
	case 'm':
		if (parse_ring(optarg, &o->ring_kib))
			return fail(err, errlen, "invalid ring size '%s': expected a power of "
				    "two from %d to %u KiB", optarg, XP_RECORD_MIN_RING_KIB, XP_RECORD_MAX_RING_KIB);
		return 0;
	case OPT_CUPTI_LIB:
		o->cupti_lib = optarg;
		return 0;
	case OPT_LAUNCH_CALL_GRAPH:
	case OPT_CALL_GRAPH:
		g->launch_graph |= c == OPT_LAUNCH_CALL_GRAPH;
		if (xp_record_parse_call_graph(optarg, c == OPT_CALL_GRAPH ? &o->sample_copy : &o->launch_copy))
			return fail(err, errlen, "invalid call graph '%s': expected fp, dwarf or "
				    "dwarf,SIZE with SIZE 1..%u bytes", optarg, XP_USER_COPY_MAX);
		return 0;
	default:
		return parse_choice_option(o, c, argv, g, err, errlen);
	}
}

/* The combinations that make no sense, then the defaults that depend on
 * what was chosen. */
static int check_combination(struct xp_record_opts *o, const struct given *g, char *err, size_t errlen)
{
	if (o->npids && o->system_wide)
		return fail(err, errlen, "-p and -a cannot be combined");
	if (o->command && (o->npids || o->system_wide))
		return fail(err, errlen, "a command cannot be combined with -p or -a");
	if (!o->command && !o->npids && !o->system_wide)
		return fail(err, errlen, "nothing to record: give a command after --, -p PID or -a");
	if (o->gpu_only && o->no_gpu)
		return fail(err, errlen, "--gpu-only and --no-gpu cannot be combined");
	if (o->launch_inproc && o->no_gpu)
		return fail(err, errlen, "--launch-stacks inproc and --no-gpu cannot be combined");
	if (o->capture_range && (o->no_gpu || !o->command))
		return fail(err, errlen, "--capture-range needs GPU capture of a command (not "
			    "--no-gpu, -p or -a)");
	if (o->kill_at_end && (!o->command || !o->duration_s))
		return fail(err, errlen, "--kill needs --duration and a command (not -p or -a)");
	if (o->capture_count && !o->capture_range)
		return fail(err, errlen, "--capture-range-count needs --capture-range");
	if (!o->capture_count)
		o->capture_count = 1;
	if (o->off_cpu && o->no_off_cpu)
		return fail(err, errlen, "--off-cpu and --no-off-cpu cannot be combined");
	/* waits by default where GPU capture will be armed (a command, not
	 * --no-gpu; the recorder turns them off if it is not): what an idle
	 * GPU's host was blocked in, at a bounded cost */
	if (!o->off_cpu && !o->no_off_cpu && o->command && !o->no_gpu) {
		o->off_cpu = true;
		if (!g->offcpu_min)
			o->offcpu_min_us = XP_RECORD_WAITS_MIN_US;
	}
	/* the injection library takes launch stacks (and Python lines) in a
	 * program xpcap starts; the uprobe in processes it attaches to */
	if (!g->launch_stacks)
		o->launch_inproc = o->command && !o->no_gpu;
	/* in-process copies are cheap enough to reach Python through deep C++
	 * (8 KiB: 97% of a PyTorch loop's launches, 64 KiB: all, on the H100) */
	if (o->launch_inproc && !g->launch_graph)
		o->launch_copy = XP_RECORD_INPROC_DEFAULT_COPY;
	return 0;
}

static const char flag_options[] = { 'a', 'q', 'h' };

static bool is_flag(int c)
{
	return memchr(flag_options, c, sizeof(flag_options)) || c == OPT_FORCE || c == OPT_NO_GPU ||
	       c == OPT_GPU_ONLY || c == OPT_RECORD_PRIVILEGED || c == OPT_OFF_CPU ||
	       c == OPT_KILL || c == OPT_NO_PYTHON_FRAMES || c == OPT_NO_OFF_CPU;
}

int xp_record_opts_parse(struct xp_record_opts *o, int argc, char **argv, char *err,
		   size_t errlen)
{
	struct given g = { 0 };
	int c, rc;

	memset(o, 0, sizeof(*o));
	o->output = XP_RECORD_DEFAULT_OUTPUT;
	o->freq = XP_RECORD_DEFAULT_FREQ;
	o->launch_copy = XP_RECORD_DEFAULT_COPY;
	o->compress = true;
	o->python_lines = true;
	o->reuse_stacks = true;
	err[0] = '\0';
	optind = 1;
	opterr = 0;
	/* '+': stop at the first non-option, so the command's own options stay its own */
	while ((c = getopt_long(argc, argv, "+:o:F:ap:qm:h", long_opts, NULL)) != -1) {
		if (is_flag(c))
			set_flag(o, c);
		else if ((rc = parse_option(o, c, argv, &g, err, errlen)))
			return rc;
		if (o->help)
			return 0;
	}
	if (optind < argc) {
		o->command = argv + optind;
		o->command_argc = argc - optind;
	}
	return check_combination(o, &g, err, errlen);
}
