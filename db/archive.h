/* archive.h - what a later `xpcorr diff` or `xpcorr ls` needs to know about
 * a run, recorded by ingest as META_DATA_EXPORT rows named "archive.*": host,
 * GPU model, CUDA driver, versions, command, git describe of the program's
 * directory (as xpcap took it at record time: meta.json "git"), start,
 * duration, GPU time. A run directory with its database is the archive.
 *
 *   xp_archive_record(db);                 // ingest, after the correlation
 *   struct xp_archive a;
 *   xp_archive_read(db, &a);               // diff, ls: archive.* rows, or
 *   printf("%s on %s\n", a.command, a.gpu);//   the same facts from the tables
 */
#ifndef XP_ARCHIVE_H
#define XP_ARCHIVE_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

struct xp_archive {
	char host[256];             /* meta.json hostname */
	char command[1024];         /* argv joined by spaces */
	char gpu[256];              /* GPU model names, ", "-joined */
	char driver[32];            /* CUDA driver API version, "13.0" */
	char cupti[32];             /* CUPTI version, "130001" */
	char xpcap_version[32];     /* the recorder */
	char xpcorr_version[32];    /* the ingest that wrote the database */
	char git[256];              /* `git describe --always --dirty --tags` at record time */
	char git_dir[1024];         /* where it ran; both empty for older runs */
	int64_t start_realtime_ns;  /* capture start, ns since the epoch; 0 unknown */
	int64_t duration_ns;        /* capture stop - start; else the GPU rows' span */
	int64_t gpu_ns;             /* kernels + memcpy + memset */
	int64_t sample_hz;          /* CPU sampling frequency; 0 unknown */
};

/* The facts from the run's tables (meta.*, TARGET_INFO_GPU,
 * xp_gpu_processes, the GPU activity). 0 or -EIO. */
int xp_archive_collect(sqlite3 *db, struct xp_archive *a);
/* collect, INSERT archive.* rows.
 * 0 or -EIO (message in sqlite3_errmsg). */
int xp_archive_record(sqlite3 *db);
/* archive.* rows when ingest wrote them, else xp_archive_collect. 0 or -EIO. */
int xp_archive_read(sqlite3 *db, struct xp_archive *a);

#endif
