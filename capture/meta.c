/* meta.c - see meta.h. Keys are documented in xpcap-run(5). */
#include "capture/meta.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "src/jobrank.h"
#include "capture/fstrust.h"
#include "capture/mapfile.h"
#include "capture/rundir.h"
#include "src/runfmt.h"
#include "src/runnames.h"
#include "capture/bpf/sampler.h"

/* "records": {"sample": {"written": N, "lost": {"ringbuf_full": N, ...},
 * "seen": N (eBPF only)}, ...}
 * with the kinds and reason keys of the one name table (runnames.h) */
static json_t *counts_json(const struct xp_record_counts *c)
{
	json_t *recs = json_object();

	for (unsigned i = 0; i < xp_rec_nkinds; i++) {
		uint32_t k = xp_rec_kinds[i].type;
		json_t *kind, *lost;

		if (!xp_rec_kinds[i].in_meta || k >= XP_RECORD_NTYPES)
			continue;
		kind = json_object();
		lost = json_object();
		json_object_set_new(kind, "written", json_integer(c ? (json_int_t)c->written[k] : 0));
		for (unsigned r = 1; r < XP_RECORD_NREASONS; r++)
			json_object_set_new(lost, xp_loss_reason_meta_key(r),
					    json_integer(c ? (json_int_t)c->lost[k][r] : 0));
		json_object_set_new(kind, "lost", lost);
		/* eBPF: what the sampler saw, so written + lost can be checked */
		if (k == XP_REC_SAMPLE && c && c->has_seen)
			json_object_set_new(kind, "seen", json_integer((json_int_t)c->samples_seen));
		json_object_set_new(recs, xp_rec_kinds[i].name, kind);
	}
	/* perf side-band losses do not say which kind they were */
	json_object_set_new(recs, "sideband_lost",
			    json_integer(c ? (json_int_t)c->lost[0][XP_LOST_PERF_LOST] : 0));
	return recs;
}

/* {"enabled", "min_us", "tracepoint_formats": [names], "tracepoint_format_error",
 *  "by": "--off-cpu"|"default"|null, "source": "sched_switch"|"perf_switch"|null,
 *  "error"}: off-CPU intervals (waits), on by default where GPU capture is
 * armed; error says why the default ones are not there */
static json_t *off_cpu_json(const struct xp_record_meta *m)
{
	const struct xp_record_opts *o = m->opts;
	json_t *fmts = json_array();
	bool bpf = m->sampler && !strcmp(m->sampler, "bpf");

	if (o->off_cpu && bpf && !m->tracefmt_err)
		json_array_append_new(fmts, json_string("sched_switch"));
	return json_pack("{s:b,s:I,s:o,s:o,s:o,s:o,s:o}", "enabled", o->off_cpu,
			 "min_us", (json_int_t)o->offcpu_min_us, "tracepoint_formats", fmts,
			 "tracepoint_format_error", o->off_cpu && bpf && m->tracefmt_err ?
			 json_string(strerror(-m->tracefmt_err)) : json_null(),
			 "by", !o->off_cpu ? json_null() : json_string(o->off_cpu_given ?
			 "--off-cpu" : "default"),
			 "source", !o->off_cpu ? json_null() : json_string(bpf ? "sched_switch" :
			 "perf_switch"),
			 "error", m->waits_error ? json_string(strerror(-m->waits_error)) :
			 json_null());
}

/* {"user_s", "sys_s"}: CPU time xpcap itself used so far (BPF programs run
 * in the profiled threads and are not in it; the drain and writer are) */
static json_t *own_cpu_json(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return json_null();
	return json_pack("{s:f,s:f}",
			 "user_s", (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
			 "sys_s", (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
}

/* {"samples": "fp"|"dwarf", "sample_copy_bytes", "launches", "launch_copy_bytes",
 *  "launch_stacks": "uprobe"|"inproc", "off_cpu_copy_bytes"}: the user stack
 *  bytes requested per record, and who takes launch stacks */
static json_t *call_graph_json(const struct xp_record_opts *o)
{
	uint32_t sw = o->off_cpu ? o->sample_copy : 0;

	if (sw > SAMPLER_OFFCPU_MAX_COPY)
		sw = SAMPLER_OFFCPU_MAX_COPY;
	return json_pack("{s:s,s:I,s:s,s:I,s:s,s:I}",
			 "samples", o->sample_copy ? "dwarf" : "fp",
			 "sample_copy_bytes", (json_int_t)o->sample_copy,
			 "launches", o->launch_copy ? "dwarf" : "fp",
			 "launch_copy_bytes", (json_int_t)o->launch_copy,
			 "launch_stacks", o->launch_inproc ? "inproc" : "uprobe",
			 "off_cpu_copy_bytes", (json_int_t)sw);
}

/* The launcher's rank variables in xpcap's own environment, which the
 * command inherits (torchrun, Slurm, MPI, PMI): a CPU-only rank has no
 * injection library to record them. null when none is set. */
static json_t *job_rank_json(void)
{
	struct xp_gpu_rank r;

	if (!xp_job_rank(getenv, &r))
		return json_null();
	return json_pack("{s:i,s:i,s:i,s:i,s:s}", "rank", (int)r.rank, "local_rank", (int)r.local_rank,
			 "world_size", (int)r.world_size, "local_world_size", (int)r.local_world_size,
			 "source", xp_job_rank_source(r.source));
}

/* [{"pid", "rank", "local_rank", "world_size", "local_world_size",
 *   "source"}]: the processes the command started whose environment named
 * a rank (procrank.h), which ingest takes where no process recorded its
 * own (a CPU-only job) */
static json_t *process_ranks_json(const struct xp_record_meta *m)
{
	json_t *a = json_array();

	for (unsigned i = 0; a && i < m->nranks; i++) {
		const struct xp_gpu_rank *r = &m->ranks[i];

		json_array_append_new(a, json_pack("{s:I,s:i,s:i,s:i,s:i,s:s}", "pid",
						   (json_int_t)r->pid, "rank", (int)r->rank,
						   "local_rank", (int)r->local_rank,
						   "world_size", (int)r->world_size,
						   "local_world_size", (int)r->local_world_size,
						   "source", xp_job_rank_source(r->source)));
	}
	return a;
}

/* {"range", "range_count", "delay_s", "duration_s", "from_monotonic_ns",
 *  "until_monotonic_ns", "cpu_in_range"}: what xpcap asked, and whether CPU
 *  records were bounded by the range too (through the uprobe); the
 *  library's status records (XP_GPU_ST_WINDOW) say when each range opened
 *  and closed */
static json_t *window_json(const struct xp_record_meta *m)
{
	const struct xp_record_opts *o = m->opts;

	if (!o->capture_range && !o->delay_s && !o->duration_s)
		return json_null();
	return json_pack("{s:o,s:I,s:f,s:o,s:I,s:o,s:b}",
			 "range", o->capture_range ? json_string(o->capture_range) : json_null(),
			 "range_count", (json_int_t)(o->capture_range ? o->capture_count : 0),
			 "delay_s", o->delay_s,
			 "duration_s", o->duration_s ? json_real(o->duration_s) : json_null(),
			 "from_monotonic_ns", (json_int_t)m->window_from,
			 "until_monotonic_ns", m->window_until ? json_integer((json_int_t)m->window_until)
							       : json_null(),
			 "cpu_in_range", o->capture_range && m->marker_attached);
}

/* {"pid", "text", "processes"}: the injection library could not trace */
static json_t *gpu_problem_json(const struct xp_record_meta *m)
{
	if (!m->gpu_problem)
		return json_null();
	return json_pack("{s:i,s:s,s:i}", "pid", (int)m->gpu_problem_pid, "text", m->gpu_problem,
			 "processes", (int)m->gpu_problem_procs);
}

/* Files on mounts root does not touch (capture/fstrust.h), and their types. */
static json_t *untrusted_fs_json(void)
{
	char types[256];

	fstrust_skipped_types(types, sizeof(types));
	return json_pack("{s:I,s:s}", "skipped", (json_int_t)fstrust_skipped(), "types", types);
}

static json_t *meta_json(const struct xp_record_meta *m)
{
	const struct xp_record_opts *o = m->opts;
	json_t *root = json_object(), *cmd = json_array(), *pids = json_array(), *ex;
	struct utsname un;
	char host[256] = "";

	uname(&un);
	gethostname(host, sizeof(host) - 1);
	for (int i = 0; o->command && i < o->command_argc; i++)
		json_array_append_new(cmd, json_string(o->command[i]));
	for (unsigned i = 0; i < m->npids; i++)
		json_array_append_new(pids, json_integer(m->pids[i]));
	json_object_set_new(root, "tool", json_string("xpcap"));
	json_object_set_new(root, "tool_version", json_string(XP_VERSION));
	json_object_set_new(root, "format_version", json_integer(XP_FORMAT_VERSION));
	json_object_set_new(root, "status", json_string(m->status));
	json_object_set_new(root, "mode", json_string(o->system_wide ? "system" :
						     o->npids ? "attach" : "command"));
	json_object_set_new(root, "command", cmd);
	json_object_set_new(root, "target_pids", pids);
	json_object_set_new(root, "hostname", json_string(host));
	json_object_set_new(root, "kernel_release", json_string(un.release));
	json_object_set_new(root, "machine", json_string(un.machine));
	json_object_set_new(root, "cpu_count", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
	json_object_set_new(root, "sample_frequency_hz", json_integer(o->gpu_only ||
			    !strcmp(m->sampler ? m->sampler : "", "none") ? 0 : o->freq));
	json_object_set_new(root, "sampler", m->sampler ? json_string(m->sampler) : json_null());
	json_object_set_new(root, "clock", json_string("CLOCK_MONOTONIC"));
	json_object_set_new(root, "start_monotonic_ns", json_integer((json_int_t)m->start_mono));
	json_object_set_new(root, "start_realtime_ns", json_integer((json_int_t)m->start_real));
	json_object_set_new(root, "stop_monotonic_ns", json_integer((json_int_t)m->stop_mono));
	json_object_set_new(root, "stop_realtime_ns", json_integer((json_int_t)m->stop_real));
	json_object_set_new(root, "stop_reason", m->stop_reason ? json_string(m->stop_reason)
								: json_null());
	if (m->have_exit) {
		ex = json_object();
		json_object_set_new(ex, "code", json_integer(m->exit_code));
		json_object_set_new(ex, "signal", m->exit_signal ? json_integer(m->exit_signal)
								 : json_null());
		json_object_set_new(root, "exit", ex);
	} else {
		json_object_set_new(root, "exit", json_null());
	}
	json_object_set_new(root, "gpu_capture_armed", json_boolean(m->gpu_armed));
	json_object_set_new(root, "correlation_uprobe", json_boolean(m->marker_attached));
	json_object_set_new(root, "cupti_library", m->cupti_lib ? json_string(m->cupti_lib)
								: json_null());
	json_object_set_new(root, "gpu_not_armed", m->gpu_not_armed ?
			    json_string(m->gpu_not_armed) : json_null());
	json_object_set_new(root, "cuda_library", m->cuda_library ?
			    json_pack("{s:s,s:i}", "path", m->cuda_library, "pid", (int)m->cuda_pid) :
			    json_null());
	json_object_set_new(root, "gpu_problem", gpu_problem_json(m));
	json_object_set_new(root, "capture_window", window_json(m));
	json_object_set_new(root, "kallsyms_error", m->kallsyms_err ?
			    json_string(strerror(-m->kallsyms_err)) : json_null());
	json_object_set_new(root, "kallsyms_bytes", m->kallsyms_bytes ?
			    json_integer((json_int_t)m->kallsyms_bytes) : json_null());
	json_object_set_new(root, "kernel_addresses", json_string(m->kernel_addresses ?
								 m->kernel_addresses : "real"));
	json_object_set_new(root, "off_cpu", off_cpu_json(m));
	json_object_set_new(root, "call_graph", call_graph_json(o));
	json_object_set_new(root, "record_privileged", json_boolean(o->record_privileged));
	json_object_set_new(root, "streams", json_pack("{s:{s:I,s:I,s:s}}", "cpu.xpr",
						       "bytes", (json_int_t)m->cpu_bytes,
						       "raw_bytes", (json_int_t)m->cpu_raw_bytes,
						       "compression", o->compress ? "zstd" : "none"));
	json_object_set_new(root, "records", counts_json(m->counts));
	json_object_set_new(root, "build_id_refused", json_integer((json_int_t)mapfile_refused()));
	json_object_set_new(root, "untrusted_fs", untrusted_fs_json());
	json_object_set_new(root, "xpcap_cpu", own_cpu_json());
	json_object_set_new(root, "git", gitdesc_json(&m->git));
	json_object_set_new(root, "job_rank", job_rank_json());
	json_object_set_new(root, "process_ranks", process_ranks_json(m));
	return root;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Writes text (then spaces up to pad bytes) to a new file, made as the
 * user, exclusively and not through a link planted in the run directory. */
static int write_new(struct rundir *rd, const char *name, const char *text, size_t pad)
{
	static const char spaces[256] = { [0 ... 255] = ' ' };
	size_t len = strlen(text);
	int fd, err;

	rundir_unlink(rd, name);
	fd = rundir_open_file(rd, name, O_WRONLY | O_CREAT);
	if (fd < 0)
		return fd;
	err = write_all(fd, text, len);
	while (!err && len < pad) {
		size_t n = pad - len < sizeof(spaces) ? pad - len : sizeof(spaces);

		err = write_all(fd, spaces, n);
		len += n;
	}
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/* A full disk: overwrite the reserved first version in place, which needs
 * no new blocks, and cut off the rest of the padding. */
static int overwrite_in_place(struct rundir *rd, const char *name, const char *text)
{
	size_t len = strlen(text);
	struct stat st;
	int fd, err;

	fd = rundir_open_file(rd, name, O_WRONLY);
	if (fd < 0)
		return fd;
	err = fstat(fd, &st) ? -errno : !S_ISREG(st.st_mode) || (size_t)st.st_size < len ? -ENOSPC : 0;
	if (!err)
		err = write_all(fd, text, len);
	if (!err && ftruncate(fd, (off_t)len))
		err = -errno;
	close(fd);
	return err;
}

int meta_write(struct rundir *rd, const struct xp_record_meta *m)
{
	char *text = NULL, *nl;
	json_t *root;
	int err = 0;

	root = meta_json(m);
	if (root)
		text = json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(root);
	if (!text)
		return -ENOMEM;
	/* jansson ends without a newline; a file should not */
	nl = realloc(text, strlen(text) + 2);
	if (!nl) {
		free(text);
		return -ENOMEM;
	}
	text = strcat(nl, "\n");
	err = write_new(rd, "meta.json.tmp", text, m->counts ? 0 : META_RESERVE);
	if (!err)
		err = rundir_rename(rd, "meta.json.tmp", "meta.json");
	if (err)
		rundir_unlink(rd, "meta.json.tmp");
	/* only a version written before reserved the room; without one the
	 * full disk is the answer */
	if ((err == -ENOSPC || err == -EDQUOT) && overwrite_in_place(rd, "meta.json", text) == 0)
		err = 0;
	free(text);
	return err;
}
