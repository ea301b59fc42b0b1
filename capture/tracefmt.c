/* tracefmt.c - see tracefmt.h. */
#include "capture/tracefmt.h"

#include <errno.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/rundir.h"

#define TRACEFS "/sys/kernel/tracing"

static const char *const roots[] = { TRACEFS, "/sys/kernel/debug/tracing" };

static int find_format(const char *system, const char *event, char *path, size_t len)
{
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		snprintf(path, len, "%s/events/%s/%s/format", roots[i], system, event);
		if (access(path, R_OK) == 0)
			return 0;
	}
	return -ENOENT;
}

int tracefmt_save(struct rundir *rd, const char *system, const char *event)
{
	char src[512], name[300];
	int err;

	if (find_format(system, event, src, sizeof(src))) {
		/* not mounted: mount it where the kernel expects it, and retry */
		if (mount("tracefs", TRACEFS, "tracefs", 0, NULL) && errno != EBUSY)
			return -errno;
		if (find_format(system, event, src, sizeof(src)))
			return -ENOENT;
	}
	err = rundir_mkdir(rd, "tracepoints");
	if (err && err != -EEXIST)
		return err;
	snprintf(name, sizeof(name), "tracepoints/%s.format", event);
	return rundir_copy_file(rd, src, name, NULL);
}
