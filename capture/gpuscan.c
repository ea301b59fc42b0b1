/* gpuscan.c - see gpuscan.h. */
#include "capture/gpuscan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "src/runfile.h"
#include "src/runfmt_gpu.h"
#include "src/safeopen.h"

#define SCAN_RECORDS 512        /* the status of the library's start comes first */
#define SCAN_FILES 4096

/* The first fatal status among the first records of one stream: 1, 0, or -errno. */
static int scan_stream(const char *path, struct gpuscan *out)
{
	struct xp_read_budget budget = { .records = SCAN_RECORDS, .expand = XP_READ_EXPAND_DEFAULT };
	const struct xp_record_header *rec;
	struct xp_reader *r;
	int err, found = 0;

	err = xp_reader_open(&r, path);
	if (err)
		return err;
	xp_reader_set_budget(r, &budget);
	while (!found && xp_reader_next(r, &rec) > 0) {
		const struct xp_gpu_status *st = (const void *)(rec + 1);
		size_t room = rec->size - sizeof(*rec);

		if (rec->type != XP_REC_GPU_STATUS || room < sizeof(*st) ||
		    st->severity != XP_GPU_STATUS_FATAL)
			continue;
		found = 1;
		if (out->fatal++)
			break;
		out->code = st->code;
		snprintf(out->text, sizeof(out->text), "%.*s",
			 (int)(st->text_len <= room - sizeof(*st) ? st->text_len : 0),
			 (const char *)(st + 1));
	}
	xp_reader_close(r);
	return found;
}

int gpuscan_run(int dirfd, struct gpuscan *out)
{
	struct dirent *de;
	unsigned seen = 0;
	char path[64 + sizeof(de->d_name)];
	/* a description of its own: readdir must not move dirfd's offset */
	DIR *d = xp_opendir_at(dirfd, ".");

	memset(out, 0, sizeof(*out));
	if (!d)
		return -errno;
	while ((de = readdir(d)) && seen < SCAN_FILES) {
		int pid = 0, n = 0, found;

		if (sscanf(de->d_name, "gpu-%d.xpr%n", &pid, &n) != 1 || de->d_name[n] || pid <= 0)
			continue;
		seen++;
		/* through the directory already opened: a renamed or swapped
		 * run path cannot send root elsewhere; the file itself is
		 * opened without following a link */
		snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dirfd, de->d_name);
		found = scan_stream(path, out);
		if (found < 0)
			continue;
		out->streams++;
		if (found && out->fatal == 1)
			out->pid = pid;
	}
	closedir(d);
	return 0;
}
