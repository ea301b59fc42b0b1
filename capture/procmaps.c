/* procmaps.c - see procmaps.h. Build ids of the files are read with libelf
 * (buildid.c), so mappings from /proc carry them like live mmap records. */
#include "capture/procmaps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>

#include "capture/buildid.h"
#include "capture/mapfile.h"

int procmaps_parse_line(char *line, struct procmaps_entry *e)
{
	char perms[5];
	int path_at = 0;
	size_t len;

	len = strlen(line);
	if (len && line[len - 1] == '\n')
		line[--len] = '\0';
	memset(e, 0, sizeof(*e));
	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %n",
		   &e->start, &e->end, perms, &e->pgoff, &e->maj, &e->min, &e->ino,
		   &path_at) < 7 || !path_at ||
	    strlen(perms) != 4 || e->end < e->start)
		return -EINVAL;
	e->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
		  (perms[2] == 'x' ? PROT_EXEC : 0);
	e->path = line + path_at;
	return 0;
}

int procmaps_walk(pid_t pid, uint64_t ts, procmaps_fn fn, void *ctx)
{
	char fname[64], line[4096 + 128];
	struct procmaps_entry e;
	struct mapfile_id id;
	struct xp_mmap m;
	FILE *f;

	snprintf(fname, sizeof(fname), "/proc/%d/maps", (int)pid);
	f = fopen(fname, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		size_t n = 0;

		if (procmaps_parse_line(line, &e) || !(e.prot & PROT_EXEC))
			continue;
		memset(&m, 0, sizeof(m));
		m.ts = ts;
		m.pid = (uint32_t)pid;
		m.tid = (uint32_t)pid;
		m.addr = e.start;
		m.len = e.end - e.start;
		m.pgoff = e.pgoff;
		m.prot = e.prot;
		m.flags = XP_MMAP_FROM_PROC;
		id = (struct mapfile_id){ .pid = pid, .start = e.start, .end = e.end,
					  .dev = makedev(e.maj, e.min), .ino = e.ino, .path = e.path };
		if (e.path[0] == '/' && buildid_read_mapping(&id, m.build_id, XP_BUILD_ID_MAX, &n) == 0) {
			m.build_id_size = (uint8_t)n;
			m.flags |= XP_MMAP_HAS_BUILD_ID;
		}
		m.path_len = (uint16_t)strnlen(e.path, UINT16_MAX);
		fn(ctx, &m, e.path);
	}
	fclose(f);
	return 0;
}

int procmaps_count_exec(pid_t pid)
{
	char fname[64], line[4096 + 128];
	struct procmaps_entry e;
	int n = 0;
	FILE *f;

	snprintf(fname, sizeof(fname), "/proc/%d/maps", (int)pid);
	f = fopen(fname, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		n += procmaps_parse_line(line, &e) == 0 && (e.prot & PROT_EXEC);
	fclose(f);
	return n;
}
