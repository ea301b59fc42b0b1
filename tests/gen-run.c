/* gen-run.c - command line of the synthetic run generator (synthrun.h).
 *   gen-run golden EXE LIB DIR           # the run behind tests/golden/
 *   gen-run bench EXE LIB DIR N [SEED]   # N samples for bench/ingest-bench
 *   gen-run scale EXE LIB DIR N [SEED]   # N samples + GPU side, bench/scale-bench
 *   gen-run python EXE LIB DIR FIXTURE   # launches with Python stacks (tests/pylines)
 *   gen-run job EXE LIB DIR RANK WORLD HOST MONO_OFF_NS WALL_ERR_NS [STEPS [nccl|gloo]]
 *                                        # one rank of a job, its host's clocks off
 *   gen-run gaps EXE LIB DIR RANK WORLD STEPS TRUTH.json [loop:FIXTURE|flat:FIXTURE|waits|chain|gloo|gloo-short]
 *                                        # one rank with known GPU idle causes
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synthrun.h"

int main(int argc, char **argv)
{
	struct xp_synth s = { 0 };
	char *exe = NULL, *lib = NULL;
	int err, rc = 1;
	int sized = argc > 1 && (!strcmp(argv[1], "bench") || !strcmp(argv[1], "scale") ||
				 !strcmp(argv[1], "python"));
	int job = argc > 1 && !strcmp(argv[1], "job");
	int gaps = argc > 1 && !strcmp(argv[1], "gaps");

	if (argc < 5 || (strcmp(argv[1], "golden") && !sized && !job && !gaps) || (sized && argc < 6) ||
	    (job && argc < 10) || (gaps && argc < 9)) {
		fprintf(stderr, "usage: gen-run golden EXE LIB DIR | gen-run bench|scale EXE LIB DIR N"
			" [SEED] | gen-run python EXE LIB DIR FIXTURE | gen-run job EXE LIB DIR RANK"
			" WORLD HOST MONO_OFF_NS WALL_ERR_NS [STEPS] | gen-run gaps EXE LIB DIR RANK WORLD"
			" STEPS TRUTH.json [loop:FIXTURE|flat:FIXTURE|waits|chain|gloo|gloo-short]\n");
		return 2;
	}
	/* mappings carry absolute paths, as the kernel reports them */
	s.exe = exe = realpath(argv[2], NULL);
	s.lib = lib = realpath(argv[3], NULL);
	if (!s.exe || !s.lib) {
		fprintf(stderr, "gen-run: cannot find %s or %s\n", argv[2], argv[3]);
		goto out;
	}
	err = xp_synth_load_elves(&s);
	if (err) {
		fprintf(stderr, "gen-run: cannot read the fixture ELF files %s, %s: %s\n",
			s.exe, s.lib, strerror(-err));
		goto out;
	}
	if (!strcmp(argv[1], "golden"))
		err = xp_synth_write_golden(&s, argv[4]);
	else if (job)
		err = xp_synth_write_job_rank(&s, argv[4], &(struct xp_synth_rank){
			.rank = atoi(argv[5]), .world = atoi(argv[6]), .host = argv[7],
			.pid = 4000,     /* the same pid on every host, as in containers */
			.mono_off_ns = strtoll(argv[8], NULL, 10), .wall_err_ns = strtoll(argv[9], NULL, 10),
			.steps = argc > 10 ? (unsigned)atoi(argv[10]) : 200,
			.gloo = argc > 11 && !strcmp(argv[11], "gloo") });
	else if (gaps)
		err = xp_synth_write_gaps_rank(&s, argv[4], atoi(argv[5]), atoi(argv[6]),
					       (unsigned)atoi(argv[7]), argv[8], argc > 9 ? argv[9] : NULL);
	else if (!strcmp(argv[1], "python"))
		err = xp_synth_write_python(&s, argv[4], argv[5]);
	else if (!strcmp(argv[1], "bench"))
		err = xp_synth_write_bench(&s, argv[4], strtoull(argv[5], NULL, 10),
					   argc > 6 ? strtoull(argv[6], NULL, 10) : 1);
	else
		err = xp_synth_write_scale(&s, argv[4], strtoull(argv[5], NULL, 10),
					   argc > 6 ? strtoull(argv[6], NULL, 10) : 1);
	if (err) {
		fprintf(stderr, "gen-run: cannot write %s: %s\n", argv[4], strerror(-err));
		goto out;
	}
	rc = 0;
out:
	free(exe);
	free(lib);
	return rc;
}
