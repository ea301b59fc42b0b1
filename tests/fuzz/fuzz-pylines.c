/* fuzz-pylines.c - libFuzzer target for the Python line-table walk
 * (ingest/pylines.c): any table, version, first line and offset gives a
 * line in 0 .. INT32_MAX or -1, never a read past the table, an overflow
 * (UBSan) or a hang. The first 10 bytes choose the rest: version (2),
 * first line (4), offset (4); the table follows.
 *   scripts/fuzz pylines 60
 */
// fuzz-sources: ingest/pylines.c
// fuzz-seeds: tests/fuzz/corpus/pylines/*
#include <stdlib.h>
#include <string.h>

#include "ingest/pylines.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint16_t version;
	uint32_t first_line, offset;
	uint8_t *table;
	size_t len;
	int line;

	if (size < 10)
		return 0;
	memcpy(&version, data, 2);
	memcpy(&first_line, data + 2, 4);
	memcpy(&offset, data + 6, 4);
	/* 3.10 .. 3.13 most of the time, whatever else now and then */
	if (!(version & 0x8000))
		version = 0x030a + version % 4;
	/* a copy of exactly the table's length, so ASan sees a read past it */
	len = size - 10;
	table = malloc(len ? len : 1);
	if (!table)
		return 0;
	memcpy(table, data + 10, len);
	/* the offset asked, and every unit up to it for short tables */
	line = xp_pylines_line(version, table, len, first_line, offset);
	if (line < -1)
		abort();
	for (uint32_t off = 0; len < 256 && off < 2 * len + 8; off += 2)
		if (xp_pylines_line(version, table, len, first_line, off) < -1)
			abort();
	free(table);
	return 0;
}
