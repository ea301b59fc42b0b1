/* pylines.c - Python line tables, offline; see pylines.h. Every read is
 * bounded by the table: a table comes from a run, which may be damaged. */
#include "ingest/pylines.h"

int xp_pylines_known(uint16_t py_version)
{
	return py_version >= 0x030a && py_version <= 0x030d;
}

/* 3.10: (bytes covered, line delta) pairs; the delta -128 marks bytecode
 * without a line and leaves the running line as it was. Ranges of length 0
 * only carry line deltas too large for one byte. */
static int line_310(const uint8_t *t, size_t len, int64_t line, uint32_t offset)
{
	uint64_t end = 0;

	for (size_t i = 0; i + 1 < len; i += 2) {
		uint64_t start = end;
		int delta = (int8_t)t[i + 1];

		end += t[i];
		if (delta != -128)
			line += delta;
		if (offset >= start && offset < end)
			return delta == -128 || line < 0 || line > INT32_MAX ? -1 : (int)line;
	}
	return -1;
}

/* 6-bit chunks, least significant first, bit 6: more follow. The
 * interpreter writes an int's delta (33 bits with the sign): six chunks at
 * most; a longer varint is a damaged table, not a bigger number. */
static int varint(const uint8_t *t, size_t len, size_t *i, uint64_t *v)
{
	unsigned shift = 0;
	uint8_t b;

	*v = 0;
	do {
		if (*i >= len || shift > 30)
			return -1;
		b = t[(*i)++];
		*v |= (uint64_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	return 0;
}

/* 3.11+: entries of a first byte (bit 7 set, code in bits 3-6, code units
 * covered - 1 in bits 0-2) and bytes without bit 7. Only the start line
 * matters here: codes 13 and 14 carry its delta as a signed varint right
 * after the first byte, 10-12 carry it in the code, 0-9 keep the line, 15
 * has none. The rest of an entry is skipped to the next byte with bit 7
 * set, as the interpreter does. The interpreter keeps the running line in
 * an int: a table whose line leaves 0 .. INT32_MAX on the way is damaged,
 * and the walk stops before the sum could overflow. */
static int line_311(const uint8_t *t, size_t len, int64_t line, uint32_t offset)
{
	uint64_t end = 0, unit = offset / 2, u;
	size_t i = 0;

	while (i < len) {
		uint8_t first = t[i++];
		unsigned code = (first >> 3) & 15;
		uint64_t start = end;

		if (!(first & 0x80))
			return -1;          /* not at an entry: damaged */
		end += (first & 7u) + 1;
		if (code == 13 || code == 14) {
			if (varint(t, len, &i, &u))
				return -1;
			line += u & 1 ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
		} else if (code >= 10 && code <= 12) {
			line += code - 10;
		}
		if (line < 0 || line > INT32_MAX)
			return -1;
		while (i < len && !(t[i] & 0x80))
			i++;
		if (unit >= start && unit < end)
			return code == 15 ? -1 : (int)line;
	}
	return -1;
}

int xp_pylines_line(uint16_t py_version, const uint8_t *table, size_t len,
		    uint32_t first_line, uint32_t offset)
{
	if (!table || !xp_pylines_known(py_version))
		return -1;
	if (py_version == 0x030a)
		return line_310(table, len, first_line, offset);
	return line_311(table, len, first_line, offset);
}
