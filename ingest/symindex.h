/* symindex.h - a module's symbol table sorted by address, for lookups in
 * O(log n): libdwfl's dwfl_module_addrinfo scans every symbol on every call,
 * ~1300 lookups/s on a 45k-symbol library (libtorch has far more).
 *   struct xp_symindex *ix = xp_symindex_build(mod);   // once per module
 *   name = xp_symindex_lookup(ix, addr, &off);        // NULL: no symbol
 *   xp_symindex_free(ix);                             // before dwfl_end
 * Names point into libdwfl's copy of the ELF: valid while its Dwfl lives. */
#ifndef XP_SYMINDEX_H
#define XP_SYMINDEX_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

struct xp_symindex;

/* NULL when out of memory (callers fall back to libdwfl). */
struct xp_symindex *xp_symindex_build(Dwfl_Module *mod);
void xp_symindex_free(struct xp_symindex *ix);

/* The symbol containing addr (module address, bias included): the sized
 * symbol with the closest start at or below addr, a global one before a
 * weak or local alias; else a sizeless symbol exactly at addr. *off is addr
 * minus its start, *size its size. NULL when none. */
const char *xp_symindex_lookup(const struct xp_symindex *ix, uint64_t addr, uint64_t *off,
			       uint64_t *size);

#endif
