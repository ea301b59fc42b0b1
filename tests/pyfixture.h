/* pyfixture.h - read the line-table fixtures of tests/pylines (written by
 * gen-fixture.py under each real interpreter): code objects with their raw
 * co_linetable and the interpreter's own line for every code unit.
 *
 *   struct xp_pyfixture *fx;
 *   if (xp_pyfixture_load(&fx, "tests/pylines/lines-3.12.txt") == 0) {
 *       const struct xp_pycode_fx *c = xp_pyfixture_find(fx, "Model.forward");
 *       int line = xp_pyfixture_truth(c, 24);    // -1: no line
 *       xp_pyfixture_free(fx);
 *   }
 */
#ifndef XP_PYFIXTURE_H
#define XP_PYFIXTURE_H

#include <stddef.h>
#include <stdint.h>

struct xp_pyrange_fx {
	uint32_t start, end;        /* bytes of bytecode, [start, end) */
	int line;                   /* -1: none */
};

struct xp_pycode_fx {
	uint16_t version;           /* 0x030a .. */
	uint32_t first_line;
	uint32_t code_bytes;        /* len(co_code) */
	char qualname[128];
	char filename[256];
	uint8_t *table;
	size_t table_len;
	struct xp_pyrange_fx *ranges;
	size_t nranges;
};

struct xp_pyfixture {
	struct xp_pycode_fx *codes;
	size_t ncodes;
};

/* 0, -errno, or -EBADMSG for a line that does not parse. */
int xp_pyfixture_load(struct xp_pyfixture **out, const char *path);
void xp_pyfixture_free(struct xp_pyfixture *f);
/* The first code object of that qualified name, or NULL. */
const struct xp_pycode_fx *xp_pyfixture_find(const struct xp_pyfixture *f, const char *qualname);
/* The interpreter's line for the instruction at offset; -1: none; -2: the
 * offset is past the code. */
int xp_pyfixture_truth(const struct xp_pycode_fx *c, uint32_t offset);
/* An offset whose line is line (the first in the code), or -1. */
int64_t xp_pyfixture_offset_of(const struct xp_pycode_fx *c, int line);

#endif
