/* pylines.h - the line of a Python instruction, offline, from the raw line
 * table of its code object (co_linetable) as the injection library copied it
 * (runfmt_py.h, XP_REC_PYCODE). Two formats:
 *   3.10: pairs of bytes (bytecode bytes covered, signed line delta; -128:
 *         no line), CPython's Objects/lnotab_notes.txt of 3.10;
 *   3.11-3.13: location entries (a first byte with bit 7 set: a code and
 *         the code units covered, then varints), Objects/locations.md.
 * The same walk as the interpreter's PyCode_Addr2Line, bounded by the table.
 *
 *   int line = xp_pylines_line(0x030c, table, len, co_firstlineno, offset);
 *   if (line < 0) ... no line (an instruction without a location, or a bad offset)
 */
#ifndef XP_PYLINES_H
#define XP_PYLINES_H

#include <stddef.h>
#include <stdint.h>

/* 1 when py_version (0x030a .. 0x030d) names a table format known here. */
int xp_pylines_known(uint16_t py_version);

/* The line of the instruction at offset (bytes from the start of the
 * bytecode), or -1: no line recorded for it, an offset past the table, an
 * unknown version or a table that ends inside an entry. */
int xp_pylines_line(uint16_t py_version, const uint8_t *table, size_t len,
		    uint32_t first_line, uint32_t offset);

#endif
