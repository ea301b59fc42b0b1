/* fuzz-pyrecords.c - libFuzzer target for the Python records of launch
 * streams (ingest/pystacks.c): code objects, Python stacks (borrowed ones
 * too), interpreter facts and losses, read from a stream, stored, then
 * asked as ingest's second pass asks them: the Python stack of every
 * launch and every frame's file, line and qualified name, named as the
 * readers name them (db/pyframe.h). Any stream gives names or clean
 * errors, never a crash, an overflow (UBSan) or a read out of bounds.
 *   scripts/fuzz pyrecords 60
 */
// fuzz-sources: ingest/pystacks.c ingest/pylines.c src/u64map.c db/pyframe.c db/pypath.c db/db_schema.c
// fuzz-seeds: fixtures/*/launch-*.xpr tests/fuzz/corpus/pyrecords/*
// fuzz-libs: -lsqlite3
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fuzz-file.h"
#include "db/pyframe.h"
#include "ingest/pystacks.h"
#include "src/runfile.h"

/* Pass 2: the stack of a launch record, and each frame's name. */
static size_t ask_launch(struct xp_pystore *ps, const struct xp_record_header *h)
{
	const struct xp_launch *l = xp_record_payload(h);
	struct xp_pystack_view v;
	char name[XP_PYLINE_NAME_MAX];
	struct xp_pyline py;
	size_t sum = 0;

	if (xp_pystore_launch(ps, l->pid, l->correlation_id, &v) != 1)
		return 0;
	for (unsigned i = 0; i < v.n; i++) {
		if (xp_pystore_frame(ps, v.frames[i].code, v.frames[i].offset, &py.file,
				     &py.qualname, &py.line) < 0)
			continue;
		sum += strlen(xp_pyline_name(&py, name, sizeof(name))) + strlen(py.file);
	}
	return sum;
}

/* One pass over the stream: 1 stores, 2 asks. */
static size_t pass(struct xp_pystore *ps, const char *path, int which)
{
	struct xp_reader *r = NULL;
	const struct xp_record_header *h;
	const char *why;
	size_t sum = 0;

	if (xp_reader_open(&r, path) == 0)
		while (xp_reader_next(r, &h) > 0 && xp_record_check(h, &why) == 0) {
			if (which == 1 && xp_pystore_record(ps, xp_reader_header(r)->pid, h) == -ENOMEM)
				break;
			if (which == 2 && h->type == XP_REC_LAUNCH)
				sum += ask_launch(ps, h);
		}
	xp_reader_close(r);
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct xp_pystore *ps;
	volatile size_t sink = 0;

	if (fd < 0)
		fd = fuzz_file("pyrecords", path, sizeof(path));
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	ps = xp_pystore_new();
	if (!ps)
		return 0;
	pass(ps, path, 1);
	sink += pass(ps, path, 2);
	for (size_t i = 0; i < xp_pystore_nprocs(ps); i++)
		sink += xp_pystore_proc(ps, i)->with_python;
	xp_pystore_free(ps);
	return 0;
}
