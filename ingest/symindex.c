/* symindex.c - a module's symbols sorted by address; see symindex.h. */
#include "ingest/symindex.h"

#include <gelf.h>
#include <stdlib.h>

#define BACK_SCAN 512   /* symbols looked at below the address: nesting is shallow */

struct sym {
	uint64_t start, size;
	const char *name;
	uint32_t rank;      /* 0 global, 1 weak, 2 local: the preferred alias first */
	uint32_t index;     /* in the symbol table: keeps the order stable */
};

struct xp_symindex {
	struct sym *syms;
	size_t n;
};

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static uint32_t rank_of(const GElf_Sym *s)
{
	switch (GELF_ST_BIND(s->st_info)) {
	case STB_GLOBAL: return 0;
	case STB_WEAK: return 1;
	default: return 2;
	}
}

struct xp_symindex *xp_symindex_build(Dwfl_Module *mod)
{
	struct xp_symindex *ix = calloc(1, sizeof(*ix));
	int count = dwfl_module_getsymtab(mod);

	if (!ix)
		return NULL;
	if (count > 0 && !(ix->syms = calloc((size_t)count, sizeof(*ix->syms)))) {
		free(ix);
		return NULL;
	}
	for (int i = 1; i < count; i++) {
		GElf_Sym s;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &s, &addr, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(s.st_info);

		/* what libdwfl's own lookup considers: defined, not a section,
		 * file or TLS symbol, and named */
		if (!name || !*name || s.st_shndx == SHN_UNDEF || type == STT_SECTION ||
		    type == STT_FILE || type == STT_TLS)
			continue;
		ix->syms[ix->n++] = (struct sym){ addr, s.st_size, name, rank_of(&s), (uint32_t)i };
	}
	qsort(ix->syms, ix->n, sizeof(*ix->syms), cmp_sym);
	return ix;
}

void xp_symindex_free(struct xp_symindex *ix)
{
	if (!ix)
		return;
	free(ix->syms);
	free(ix);
}

const char *xp_symindex_lookup(const struct xp_symindex *ix, uint64_t addr, uint64_t *off,
			       uint64_t *size)
{
	size_t lo = 0, hi = ix->n;
	const struct sym *exact = NULL;

	/* lo = the number of symbols starting at or below addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t j = lo, seen = 0; j-- > 0 && seen++ < BACK_SCAN;) {
		const struct sym *s = &ix->syms[j];
		const struct sym *first = s;

		/* the group of symbols starting where s does: best rank first */
		while (j > 0 && ix->syms[j - 1].start == s->start)
			first = &ix->syms[--j];
		for (const struct sym *c = first; c <= s; c++) {
			if (c->size && addr - c->start < c->size) {
				*off = addr - c->start;
				*size = c->size;
				return c->name;
			}
			if (!c->size && c->start == addr && !exact)
				exact = c;
		}
	}
	if (exact) {
		*off = 0;
		*size = 0;
		return exact->name;
	}
	return NULL;
}
