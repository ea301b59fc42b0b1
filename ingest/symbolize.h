/* symbolize.h - ELF symbols for (module, file offset), offline, in-process.
 * A module is a path plus the build id the capture recorded; each is opened
 * once with elfutils libdwfl (.symtab, else .dynsym, with separate debug info
 * found by build id under /usr/lib/debug/.build-id), and checked against
 * the recorded build id: a file that changed on disk is never guessed from.
 *
 *   struct xp_symbolizer *sy = xp_symbolizer_new(NULL);
 *   uint32_t mod;
 *   xp_symbolizer_module(sy, "/usr/lib/libfoo.so", build_id, 20, &mod);
 *   char name[512];
 *   if (xp_symbolizer_lookup(sy, mod, file_offset, name, sizeof(name)) == 0)
 *       puts(name);                 // demangled: "ns::Widget::draw(int)"
 *   xp_symbolizer_free(sy);
 *
 * Dwarf stack-copy unwinding (unwind.h) reports the files this opened and
 * verified, through xp_symbolizer_open() and xp_symbolizer_file().
 */
#ifndef XP_SYMBOLIZE_H
#define XP_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

enum xp_module_status {
	XP_MODULE_UNOPENED = 0,     /* not looked at yet, or no fd was left (EMFILE):
				       tried again at the next use */
	XP_MODULE_OK = 1,           /* symbols available */
	XP_MODULE_MISSING = 2,      /* file not found or unreadable */
	XP_MODULE_NOT_ELF = 3,      /* opened, not an ELF file dwfl accepts */
	XP_MODULE_BUILD_ID_MISMATCH = 4, /* file on disk is not the one that ran */
	XP_MODULE_ANON = 5,         /* no file: anonymous, [vdso], [heap], ... */
};

#define XP_INLINE_NAME_LEN 512
#define XP_INLINE_MAX 8             /* inline levels kept per address */

struct xp_symbolizer;

/* root: prefix for module paths (like perf --symfs), or NULL. */
struct xp_symbolizer *xp_symbolizer_new(const char *root);
void xp_symbolizer_free(struct xp_symbolizer *sy);
/* The module id of (path, build id); the file is opened lazily. 0, -ENOMEM,
 * -E2BIG past XP_SYMBOLIZER_MAX_MODULES. */
int xp_symbolizer_module(struct xp_symbolizer *sy, const char *path,
			 const uint8_t *build_id, size_t build_id_len,
			 uint32_t *module);
/* Function containing file offset off of the module, demangled, into buf.
 * 0; -ENOENT no symbol there; -ENODATA module unusable (see its status). */
int xp_symbolizer_lookup(struct xp_symbolizer *sy, uint32_t module, uint64_t off,
			 char *buf, size_t buflen);
/* Functions inlined at file offset off, innermost first, from DWARF (when
 * the module or its separate debug file has it): up to max names into
 * names[]. Returns how many; 0 when nothing is inlined there or no DWARF. */
int xp_symbolizer_inlines(struct xp_symbolizer *sy, uint32_t module, uint64_t off,
			  char (*names)[XP_INLINE_NAME_LEN], int max);
enum xp_module_status xp_symbolizer_status(struct xp_symbolizer *sy,
					   uint32_t module);
/* Opens module now if it was not yet (checking its build id); its status. */
enum xp_module_status xp_symbolizer_open(struct xp_symbolizer *sy, uint32_t module);
/* The file read for module: its path under the --symfs root. 0, or
 * -ENAMETOOLONG / -EINVAL. */
int xp_symbolizer_file(const struct xp_symbolizer *sy, uint32_t module,
		       char *buf, size_t buflen);
/* The file of an OK module opened again for reading (for another libdwfl
 * session), checked as the first time and to be the same file: a fd the
 * caller owns, -ESTALE if another file took its place, -errno. */
int xp_symbolizer_fd(const struct xp_symbolizer *sy, uint32_t module);
const char *xp_symbolizer_path(const struct xp_symbolizer *sy, uint32_t module);
uint32_t xp_symbolizer_count(const struct xp_symbolizer *sy);
/* The build id recorded for module (length 0 if none). */
size_t xp_symbolizer_build_id(const struct xp_symbolizer *sy, uint32_t module,
			      const uint8_t **id);
/* Demangles C++ (Itanium ABI) names into buf; copies other names as they are. */
void xp_demangle(const char *name, char *buf, size_t buflen);
/* The whole demangled name (or a copy of name), malloc'd; NULL on OOM. */
char *xp_demangle_dup(const char *name);

#define XP_SYMBOLIZER_MAX_MODULES 65536

#endif
