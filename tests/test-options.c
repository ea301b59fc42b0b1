/* test-options.c - `xpcap record` option parsing: defaults, every option,
 * the command after --, and the errors (invalid -F, conflicting modes). */
#include <errno.h>
#include <string.h>

#include "check-main.h"
#include "capture/record.h"
#include "capture/outname.h"
#include "src/jobrank.h"

#include <stdio.h>
#include <unistd.h>

static struct xp_record_opts o;
static char err[256];

static int parse(char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return xp_record_opts_parse(&o, argc, argv, err, sizeof(err));
}

START_TEST(defaults_and_command)
{
	char *argv[] = { "record", "--", "./app", "-F", "5", NULL };

	ck_assert_int_eq(parse(argv), 0);
	ck_assert_str_eq(o.output, XP_RECORD_DEFAULT_OUTPUT);
	ck_assert_uint_eq(o.freq, 99);
	ck_assert_int_eq(o.command_argc, 3);
	ck_assert_str_eq(o.command[0], "./app");
	ck_assert_str_eq(o.command[1], "-F");   /* the command's own options */
	ck_assert(!o.system_wide && !o.npids && !o.force && !o.quiet);
}
END_TEST

START_TEST(all_options)
{
	char *argv[] = { "record", "-o", "run", "-F", "999", "--duration", "2.5", "--force",
			 "-q", "--no-gpu", "--cupti-lib", "/x.so", "-m", "64", "app", NULL };

	ck_assert_int_eq(parse(argv), 0);
	ck_assert_str_eq(o.output, "run");
	ck_assert_uint_eq(o.freq, 999);
	ck_assert(o.duration_s > 2.49 && o.duration_s < 2.51);
	ck_assert(o.force && o.quiet && o.no_gpu);
	ck_assert_str_eq(o.cupti_lib, "/x.so");
	ck_assert_uint_eq(o.ring_kib, 64);
	ck_assert_str_eq(o.command[0], "app");
}
END_TEST

START_TEST(pids)
{
	char *argv[] = { "record", "-p", "12,34,5", NULL };
	pid_t p[4];
	unsigned n;

	ck_assert_int_eq(parse(argv), 0);
	ck_assert_uint_eq(o.npids, 3);
	ck_assert_int_eq(o.pids[2], 5);
	ck_assert(o.command == NULL);
	ck_assert_int_eq(xp_record_parse_pids("1,", p, 4, &n), -EINVAL);
	ck_assert_int_eq(xp_record_parse_pids(",1", p, 4, &n), -EINVAL);
	ck_assert_int_eq(xp_record_parse_pids("1,x", p, 4, &n), -EINVAL);
	ck_assert_int_eq(xp_record_parse_pids("0", p, 4, &n), -EINVAL);
	ck_assert_int_eq(xp_record_parse_pids("1,2,3,4,5", p, 4, &n), -E2BIG);
}
END_TEST

START_TEST(errors)
{
	char *bad_freq[] = { "record", "-F", "0", "app", NULL };
	char *bad_freq2[] = { "record", "-F", "12x", "app", NULL };
	char *huge_freq[] = { "record", "-F", "1000000", "app", NULL };
	char *nothing[] = { "record", NULL };
	char *both[] = { "record", "-a", "-p", "1", NULL };
	char *cmd_and_pid[] = { "record", "-p", "1", "app", NULL };
	char *gpu[] = { "record", "--gpu-only", "--no-gpu", "app", NULL };
	char *missing[] = { "record", "-o", NULL };
	char *unknown[] = { "record", "--bogus", "app", NULL };
	char *dur[] = { "record", "--duration", "0", "app", NULL };
	char *ring[] = { "record", "-m", "48", "app", NULL };
	char *kill_nodur[] = { "record", "--kill", "app", NULL };
	char *kill_pid[] = { "record", "--kill", "--duration", "1", "-p", "1", NULL };
	char *kill_ok[] = { "record", "--kill", "--duration", "1", "app", NULL };
	char *ring_small[] = { "record", "--ring-size", "2", "app", NULL };

	ck_assert_int_eq(parse(bad_freq), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "frequency"));
	ck_assert_int_eq(parse(bad_freq2), -EINVAL);
	ck_assert_int_eq(parse(huge_freq), -EINVAL);
	ck_assert_int_eq(parse(nothing), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "nothing to record"));
	ck_assert_int_eq(parse(both), -EINVAL);
	ck_assert_int_eq(parse(cmd_and_pid), -EINVAL);
	ck_assert_int_eq(parse(gpu), -EINVAL);
	ck_assert_int_eq(parse(kill_nodur), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "--kill needs --duration"));
	ck_assert_int_eq(parse(kill_pid), -EINVAL);
	ck_assert_int_eq(parse(kill_ok), 0);
	ck_assert_int_eq(parse(missing), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "needs an argument"));
	ck_assert_int_eq(parse(unknown), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "--bogus"));
	ck_assert_int_eq(parse(dur), -EINVAL);
	ck_assert_int_eq(parse(ring), -EINVAL);     /* not a power of two */
	ck_assert_ptr_nonnull(strstr(err, "ring size"));
	ck_assert_int_eq(parse(ring_small), -EINVAL);
}
END_TEST

START_TEST(off_cpu)
{
	char *on[] = { "record", "--off-cpu", "--off-cpu-min-us", "250", "app", NULL };
	char *off[] = { "record", "app", NULL };
	char *given_min[] = { "record", "--off-cpu-min-us", "7", "app", NULL };
	char *none[] = { "record", "--no-off-cpu", "app", NULL };
	char *nogpu[] = { "record", "--no-gpu", "app", NULL };
	char *attach[] = { "record", "-p", "1", NULL };
	char *both[] = { "record", "--off-cpu", "--no-off-cpu", "app", NULL };
	char *neg[] = { "record", "--off-cpu-min-us", "-1", "app", NULL };
	char *junk[] = { "record", "--off-cpu-min-us", "1ms", "app", NULL };

	ck_assert_int_eq(parse(on), 0);
	ck_assert(o.off_cpu);
	ck_assert_uint_eq(o.offcpu_min_us, 250);
	/* waits by default where GPU capture is armed: a command, not --no-gpu */
	ck_assert_int_eq(parse(off), 0);
	ck_assert(o.off_cpu && !o.off_cpu_given && o.offcpu_min_us == XP_RECORD_WAITS_MIN_US);
	ck_assert_int_eq(parse(given_min), 0);
	ck_assert(o.off_cpu && o.offcpu_min_us == 7);
	ck_assert_int_eq(parse(none), 0);
	ck_assert(!o.off_cpu && o.offcpu_min_us == 0);
	ck_assert_int_eq(parse(nogpu), 0);
	ck_assert(!o.off_cpu);
	ck_assert_int_eq(parse(attach), 0);
	ck_assert(!o.off_cpu);
	ck_assert_int_eq(parse(both), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "--no-off-cpu"));
	ck_assert_int_eq(parse(neg), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "off-CPU minimum"));
	ck_assert_int_eq(parse(junk), -EINVAL);
}
END_TEST

START_TEST(call_graph)
{
	char *dflt[] = { "record", "app", NULL };
	char *both[] = { "record", "--call-graph", "dwarf,4096", "--launch-call-graph", "fp",
			 "app", NULL };
	char *bad[] = { "record", "--call-graph", "lbr", "app", NULL };
	uint32_t n;

	ck_assert_int_eq(parse(dflt), 0);
	ck_assert_uint_eq(o.sample_copy, 0);
	ck_assert_uint_eq(o.launch_copy, XP_RECORD_INPROC_DEFAULT_COPY);
	ck_assert_int_eq(parse(both), 0);
	ck_assert_uint_eq(o.sample_copy, 4096);
	ck_assert_uint_eq(o.launch_copy, 0);
	ck_assert_int_eq(parse(bad), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "call graph"));
	ck_assert_int_eq(xp_record_parse_call_graph("dwarf", &n), 0);
	ck_assert_uint_eq(n, 8192);
	ck_assert_int_eq(xp_record_parse_call_graph("dwarf,1", &n), 0);
	ck_assert_uint_eq(n, 8);
	ck_assert_int_eq(xp_record_parse_call_graph("dwarf,65528", &n), 0);
	ck_assert_uint_eq(n, 65528);
	ck_assert_int_eq(xp_record_parse_call_graph("dwarf,65529", &n), -EINVAL);
	ck_assert_int_eq(xp_record_parse_call_graph("dwarf,0", &n), -EINVAL);
	ck_assert_int_eq(xp_record_parse_call_graph("dwarf,", &n), -EINVAL);
	ck_assert_int_eq(xp_record_parse_call_graph("dwarfx", &n), -EINVAL);
	ck_assert_int_eq(xp_record_parse_call_graph("fp,8", &n), -EINVAL);
}
END_TEST

START_TEST(launch_stacks)
{
	char *dflt[] = { "record", "app", NULL };
	char *inproc[] = { "record", "--launch-stacks", "inproc", "app", NULL };
	char *uprobe[] = { "record", "--launch-stacks", "uprobe", "app", NULL };
	char *bad[] = { "record", "--launch-stacks", "ebpf", "app", NULL };
	char *nogpu[] = { "record", "--launch-stacks", "inproc", "--no-gpu", "app", NULL };
	char *nogpu_dflt[] = { "record", "--no-gpu", "app", NULL };
	char *attach[] = { "record", "-p", "42", NULL };
	char *inproc8k[] = { "record", "--launch-stacks", "inproc", "--launch-call-graph", "dwarf",
			     "app", NULL };

	/* in-process by default for a command, with 64 KiB copies */
	ck_assert_int_eq(parse(dflt), 0);
	ck_assert(o.launch_inproc);
	ck_assert_uint_eq(o.launch_copy, XP_RECORD_INPROC_DEFAULT_COPY);
	/* the uprobe where the library is not injected */
	ck_assert_int_eq(parse(attach), 0);
	ck_assert(!o.launch_inproc);
	ck_assert_uint_eq(o.launch_copy, XP_RECORD_DEFAULT_COPY);
	ck_assert_int_eq(parse(nogpu_dflt), 0);
	ck_assert(!o.launch_inproc);
	ck_assert_int_eq(parse(inproc), 0);
	ck_assert(o.launch_inproc);
	ck_assert_uint_eq(o.launch_copy, XP_RECORD_INPROC_DEFAULT_COPY);
	ck_assert_int_eq(parse(inproc8k), 0);
	ck_assert_uint_eq(o.launch_copy, XP_RECORD_DEFAULT_COPY);
	ck_assert_int_eq(parse(uprobe), 0);
	ck_assert(!o.launch_inproc);
	ck_assert_uint_eq(o.launch_copy, XP_RECORD_DEFAULT_COPY);
	ck_assert_int_eq(parse(bad), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "launch stacks 'ebpf'"));
	ck_assert_int_eq(parse(nogpu), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "--no-gpu"));
}
END_TEST

START_TEST(reuse_stacks)
{
	char *dflt[] = { "record", "app", NULL };
	char *off[] = { "record", "--reuse-stacks", "off", "app", NULL };
	char *bad[] = { "record", "--reuse-stacks", "1", "app", NULL };

	ck_assert_int_eq(parse(dflt), 0);
	ck_assert(o.reuse_stacks);
	ck_assert_int_eq(parse(off), 0);
	ck_assert(!o.reuse_stacks);
	ck_assert_int_eq(parse(bad), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "reuse stacks '1'"));
}
END_TEST

START_TEST(python_lines)
{
	char *dflt[] = { "record", "app", NULL };
	char *off[] = { "record", "--python-lines", "off", "app", NULL };
	char *on[] = { "record", "--python-lines", "on", "app", NULL };
	char *bad[] = { "record", "--python-lines", "maybe", "app", NULL };

	ck_assert_int_eq(parse(dflt), 0);
	ck_assert(o.python_lines);
	ck_assert_int_eq(parse(off), 0);
	ck_assert(!o.python_lines);
	ck_assert_int_eq(parse(on), 0);
	ck_assert(o.python_lines);
	ck_assert_int_eq(parse(bad), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "python lines 'maybe'"));
}
END_TEST

START_TEST(compress)
{
	char *dflt[] = { "record", "app", NULL };
	char *none[] = { "record", "--compress", "none", "app", NULL };
	char *zstd[] = { "record", "--compress", "zstd", "app", NULL };
	char *bad[] = { "record", "--compress", "gzip", "app", NULL };

	ck_assert_int_eq(parse(dflt), 0);
	ck_assert(o.compress);
	ck_assert_int_eq(parse(none), 0);
	ck_assert(!o.compress);
	ck_assert_int_eq(parse(zstd), 0);
	ck_assert(o.compress);
	ck_assert_int_eq(parse(bad), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "compression"));
}
END_TEST

START_TEST(record_privileged)
{
	char *dflt[] = { "record", "app", NULL };
	char *on[] = { "record", "--record-privileged", "-a", NULL };

	ck_assert_int_eq(parse(dflt), 0);
	ck_assert(!o.record_privileged);
	ck_assert_int_eq(parse(on), 0);
	ck_assert(o.record_privileged && o.system_wide);
}
END_TEST

START_TEST(no_python_frames)
{
	char *dflt[] = { "record", "app", NULL };
	char *off[] = { "record", "--no-python-frames", "--", "app", NULL };

	ck_assert_int_eq(parse(dflt), 0);
	ck_assert(!o.no_python_frames);
	ck_assert_int_eq(parse(off), 0);
	ck_assert(o.no_python_frames);
	ck_assert_str_eq(o.command[0], "app");
}
END_TEST

/* A launcher's environment, by name. */
static const char *const *env_now;

static char *fake_getenv(const char *name)
{
	size_t n = strlen(name);

	for (const char *const *e = env_now; e && *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return (char *)*e + n + 1;
	return NULL;
}

/* torchrun's variables win over Slurm's (torchrun under srun), then MPI's,
 * then PMI's; none: no rank */
START_TEST(job_rank)
{
	static const char *const torchrun[] = { "RANK=3", "LOCAL_RANK=1", "WORLD_SIZE=8",
		"LOCAL_WORLD_SIZE=2", "SLURM_PROCID=9", NULL };
	static const char *const slurm[] = { "SLURM_PROCID=9", "SLURM_LOCALID=1", "SLURM_NTASKS=16", NULL };
	static const char *const mpi[] = { "OMPI_COMM_WORLD_RANK=5", "OMPI_COMM_WORLD_SIZE=6", NULL };
	static const char *const bad[] = { "RANK=x", "PMI_RANK=-1", NULL };
	struct xp_gpu_rank r;

	env_now = torchrun;
	ck_assert_int_eq(xp_job_rank(fake_getenv, &r), 1);
	ck_assert_int_eq(r.rank, 3);
	ck_assert_int_eq(r.local_rank, 1);
	ck_assert_int_eq(r.world_size, 8);
	ck_assert_str_eq(xp_job_rank_source(r.source), "torchrun");
	env_now = slurm;
	ck_assert_int_eq(xp_job_rank(fake_getenv, &r), 1);
	ck_assert_int_eq(r.rank, 9);
	ck_assert_int_eq(r.world_size, 16);
	ck_assert_str_eq(xp_job_rank_source(r.source), "slurm");
	env_now = mpi;
	ck_assert_int_eq(xp_job_rank(fake_getenv, &r), 1);
	ck_assert_int_eq(r.rank, 5);
	ck_assert_int_eq(r.local_rank, -1);
	env_now = bad;
	ck_assert_int_eq(xp_job_rank(fake_getenv, &r), 0);
	ck_assert_int_eq(r.rank, -1);
}
END_TEST

/* -o patterns: %h host (to its first dot), %r rank, %p pid, %%; errors name
 * the problem */
START_TEST(output_patterns)
{
	static const char *const env[] = { "RANK=2", NULL };
	char out[256], err[256], host[256], want[512];

	gethostname(host, sizeof(host) - 1);
	host[strcspn(host, ".")] = '\0';
	env_now = env;
	ck_assert_int_eq(xp_output_expand("runs/%h-%r/p%p-100%%", fake_getenv, out, sizeof(out), err,
					  sizeof(err)), 0);
	snprintf(want, sizeof(want), "runs/%s-2/p%ld-100%%", host, (long)getpid());
	ck_assert_str_eq(out, want);
	env_now = NULL;
	ck_assert_int_eq(xp_output_expand("runs/%r", fake_getenv, out, sizeof(out), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "%r: no rank in the environment"));
	ck_assert_int_eq(xp_output_expand("runs/%x", fake_getenv, out, sizeof(out), err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "%x: expected %h (host), %r (rank), %p (pid) or %%"));
	ck_assert_int_eq(xp_output_expand("%p%p%p%p", fake_getenv, out, 6, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "too long"));
}
END_TEST

static Suite *options_suite(void)
{
	Suite *s = suite_create("options");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, defaults_and_command);
	tcase_add_test(tc, all_options);
	tcase_add_test(tc, pids);
	tcase_add_test(tc, errors);
	tcase_add_test(tc, off_cpu);
	tcase_add_test(tc, call_graph);
	tcase_add_test(tc, launch_stacks);
	tcase_add_test(tc, python_lines);
	tcase_add_test(tc, reuse_stacks);
	tcase_add_test(tc, compress);
	tcase_add_test(tc, record_privileged);
	tcase_add_test(tc, no_python_frames);
	tcase_add_test(tc, job_rank);
	tcase_add_test(tc, output_patterns);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(options_suite)
