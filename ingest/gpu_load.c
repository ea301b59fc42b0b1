/* gpu_load.c - reads one gpu-<pid>.xpr stream into the GPU tables, and
 * XP_REC_LAUNCH records into xp_launches.
 *
 *   struct xp_gpu_load_stats st; char err[256];
 *   if (xp_gpu_load_stream(db, "run/gpu-123.xpr", &ops, ctx, &st, err, sizeof(err)) < 0)
 *       fprintf(stderr, "xpcorr: %s\n", err);
 *
 * Records come in any order but a string always precedes its first use;
 * per-stream string ids are mapped to StringIds through ops->intern_string.
 * Every record's size is checked against its type before a field is read.
 *
 * Pid rule: rows get the pid of the pid space of cpu.xpr (the root pid
 * namespace, where xpcap's BPF runs). The stream header's pid is that pid
 * when the writer knew it; when it is 0 we take the process record's
 * ns_pid when ns_depth is 1 (no container: ns_pid = pid) and otherwise
 * the outermost pid the process saw (ns_pid) as the best guess. API records
 * give the process's own pid: it is replaced by the mapped pid. Thread ids
 * are kept as written (in a container they are the container's tids and
 * exact launches cannot match; the join then says "launch from another
 * thread").
 *
 * Clock rule: with clock_method CALLBACK the times are CLOCK_MONOTONIC
 * already; with CALIBRATED, the rows of CUPTI's clock (activity records,
 * NVTX, API records flagged XP_GPU_API_FROM_ACTIVITY) are converted after
 * the stream from its clock pairs (gpu_clock.c).
 *
 * This file walks the stream and checks each record; gpu_loader.h says
 * which file does the rest.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/gpu_loader.h"
#include "src/runfile.h"
#include "src/runnames.h"

/* Whether a record's start and end could be one activity of a run: a
 * record 0 .. 2^63-1 (a torn write, a crafted stream) would overflow every
 * sum of durations after it; it is skipped and counted instead. The table
 * of kinds (runnames.h) says which kinds are activities with a span. */
static bool span_fits(const struct xp_rec_kind *k, const void *p, struct xp_gpu_load_stats *st)
{
	uint64_t start, end;

	if (!k || !k->span)
		return true;
	memcpy(&start, (const unsigned char *)p + k->times[0], sizeof(start));
	memcpy(&end, (const unsigned char *)p + k->times[1], sizeof(end));
	if ((end > start ? end - start : start - end) <= XP_GPU_SPAN_MAX_NS)
		return true;
	if (!st->bad_times++) {
		st->bad_start = (int64_t)start;
		st->bad_end = (int64_t)end;
	}
	return false;
}

/* 0 or -EBADMSG with *why: the record holds its fixed part and its tail.
 * Sizes and times of the kinds a GPU stream holds, from the table of kinds;
 * the CPU stream's kinds are not loaded here, and pass. */
static int check_gpu_record(const struct xp_record_header *h, const char **why)
{
	const struct xp_rec_kind *k = xp_rec_kind_of(h->type);
	uint32_t len = xp_record_payload_len(h), fixed;
	const void *p = xp_record_payload(h);

	if (!k || !(k->streams & XP_STREAM_GPU))
		return 0;
	fixed = k->fixed;
	*why = "record shorter than its type";
	if (len < fixed)
		return -EBADMSG;
	*why = "text longer than its record";
	if (h->type == XP_REC_GPU_STRING &&
	    ((const struct xp_gpu_string *)p)->len > len - fixed)
		return -EBADMSG;
	if (h->type == XP_REC_GPU_STATUS &&
	    ((const struct xp_gpu_status *)p)->text_len > len - fixed)
		return -EBADMSG;
	*why = "string id 0";
	if (h->type == XP_REC_GPU_STRING && ((const struct xp_gpu_string *)p)->id == 0)
		return -EBADMSG;
	/* the database keeps signed 64-bit ns; later arithmetic on them must
	 * not overflow (2^63 ns is 292 years of CLOCK_MONOTONIC) */
	*why = "timestamp beyond 2^63 ns";
	if (!xp_rec_kind_times_fit(k, p))
		return -EBADMSG;
	return 0;
}
/* "PATH: database: why", for a failed statement; returns rc. */
static int db_error(sqlite3 *db, const char *path, int rc, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s: database: %s", path, sqlite3_errmsg(db));
	return rc;
}

/* The stream's reader; the header must say GPU. 0 or -errno with err. */
static int open_stream(struct xp_reader **r, const char *path, char *err, size_t errlen)
{
	const struct xp_file_header *fh;
	int rc = xp_reader_open(r, path);

	if (rc < 0) {
		/* the reader stays open after a bad header, to say what was wrong */
		if (*r)
			snprintf(err, errlen, "%s at offset %llu: %s", path,
				 (unsigned long long)xp_reader_offset(*r), xp_reader_error(*r));
		else
			snprintf(err, errlen, "cannot read %s: %s", path, strerror(-rc));
		return rc;
	}
	fh = xp_reader_header(*r);
	if (fh->stream != XP_STREAM_GPU) {
		snprintf(err, errlen, "%s: not a GPU stream (stream kind %u)", path, fh->stream);
		return -EINVAL;
	}
	return 0;
}

/* The temporary NVTX table, the rows already there, the inserts. 0 or -EIO. */
static int prepare_load(struct gpu_loader *L)
{
	if (sqlite3_exec(L->db, "CREATE TEMP TABLE IF NOT EXISTS xp_nvtx_end(globalPid, rangeId, ts)",
			 NULL, NULL, NULL) != SQLITE_OK || xp_gpuload_first_rowids(L) < 0)
		return -EIO;
	return xp_gpuload_prepare_rows(L);
}

/* Every record of r into the tables, then the NVTX ends and the clock.
 * 0 or -errno with err ("PATH at offset N: why"). */
static int load_records(struct gpu_loader *L, struct xp_reader *r, const char *path, char *err,
			size_t errlen)
{
	const struct xp_record_header *h;
	const char *why = NULL;
	int rc;

	while ((rc = xp_reader_next(r, &h)) > 0) {
		L->st->records++;
		if (check_gpu_record(h, &why) < 0) {
			snprintf(err, errlen, "%s at offset %llu: %s (type %u, %u bytes)", path,
				 (unsigned long long)xp_reader_offset(r), why, h->type, h->size);
			return -EBADMSG;
		}
		if (!span_fits(xp_rec_kind_of(h->type), xp_record_payload(h), L->st))
			continue;
		rc = xp_gpuload_record(L, h);
		if (rc == -EIO)
			return db_error(L->db, path, rc, err, errlen);
		if (rc < 0) {
			snprintf(err, errlen, "%s at offset %llu: %s", path,
				 (unsigned long long)xp_reader_offset(r), strerror(-rc));
			return rc;
		}
	}
	if (rc < 0) {
		snprintf(err, errlen, "%s at offset %llu: %s", path,
			 (unsigned long long)xp_reader_offset(r), xp_reader_error(r));
		xp_gpuload_finish_nvtx(L);
		xp_gpuload_calibrate(L);
		return rc;
	}
	rc = xp_gpuload_finish_nvtx(L);
	if (rc == 0)
		rc = xp_gpuload_calibrate(L);
	return rc < 0 ? db_error(L->db, path, rc, err, errlen) : rc;
}

int xp_gpu_load_stream(sqlite3 *db, const char *path, const struct xp_gpu_sink_ops *ops,
		       void *ctx, struct xp_gpu_load_stats *st, char *err, size_t errlen)
{
	struct gpu_loader L = { .db = db, .path = path, .ops = ops, .ctx = ctx, .st = st,
			    .unknown_sid = -1 };
	struct xp_reader *r = NULL;
	int rc;

	xp_u64map_init(&L.tab_index);
	memset(st, 0, sizeof(*st));
	if (errlen)
		err[0] = '\0';
	rc = open_stream(&r, path, err, errlen);
	if (rc < 0)
		goto out;
	if (ops->budget)
		xp_reader_set_budget(r, ops->budget(ctx));
	L.header_pid = L.pid = xp_reader_header(r)->pid;
	/* rows name their stream by file name: a run directory moves */
	L.path = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	rc = prepare_load(&L);
	if (rc < 0)
		rc = db_error(db, path, rc, err, errlen);
	else
		rc = load_records(&L, r, path, err, errlen);
	if (rc == 0) {
		st->pid = L.pid;
		st->own_pid = L.own_pid;
	}
out:
	for (int i = 0; i < S_COUNT; i++)
		sqlite3_finalize(L.ins[i]);
	for (size_t i = 0; i < L.used; i++)
		free(L.tab[i].text);
	free(L.tab);
	xp_u64map_free(&L.tab_index);
	xp_reader_close(r);
	return rc;
}
