/* symbolize.c - per-module libdwfl handles and symbol lookup; see symbolize.h.
 * Each module gets its own Dwfl reported at bias 0, so an ELF virtual
 * address is the lookup address; file offsets become virtual addresses
 * through the PT_LOAD program headers, as the loader laid them out. */
#include "ingest/symbolize.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "src/array.h"
#include "src/runfile.h"
#include "src/safeopen.h"
#include "ingest/symindex.h"
#include "src/u64map.h"

#define MAX_LOADS 64                /* PT_LOAD headers kept per module */
#define MAX_CU_RANGES (1u << 20)    /* address ranges of compile units per module */

/* One address range of a compile unit, for modules without .debug_aranges
 * (clang does not emit it by default): dwfl_module_addrdie finds nothing
 * there, so the CUs are indexed by their DW_AT_ranges / low_pc-high_pc. */
struct cu_range {
	Dwarf_Addr start, end;      /* [start, end), module addresses incl. bias */
	Dwarf_Die cu;
	Dwarf_Addr bias;
};

struct load {
	uint64_t offset, filesz, vaddr;
};

struct module {
	char *path;                 /* as recorded, owned */
	uint8_t build_id[20];
	size_t build_id_len;
	enum xp_module_status status;
	Dwfl *dwfl;                 /* owned, NULL unless OK */
	Dwfl_Module *mod;
	struct load loads[MAX_LOADS];
	size_t nloads;
	struct cu_range *cus;       /* built on first need, sorted by start */
	size_t ncus;
	int cus_built;
	struct xp_symindex *syms;   /* built on first lookup; NULL: use libdwfl's */
	int syms_built;
	dev_t dev;                  /* the file opened, when OK */
	ino_t ino;
};

struct xp_symbolizer {
	char *root;                 /* --symfs prefix or NULL */
	struct module *mods;
	uint32_t count;
	size_t cap;
	struct xp_u64map by_key;    /* (hash(path), hash(build id)) -> id + 1 */
	char *debuginfo_path;       /* for dwfl_standard_find_debuginfo */
	Dwfl_Callbacks cb;
};

static uint64_t hash_bytes(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++) {
		h ^= s[i];
		h *= 0x100000001b3ull;
	}
	return xp_hash64(h + len);
}

struct xp_symbolizer *xp_symbolizer_new(const char *root)
{
	struct xp_symbolizer *sy = calloc(1, sizeof(*sy));

	if (!sy)
		return NULL;
	xp_u64map_init(&sy->by_key);
	/* "-": no CRC check against the file; then .debug next to it and the
	 * build-id tree under /usr/lib/debug (searched by build id first) */
	sy->debuginfo_path = strdup("-:.debug:/usr/lib/debug");
	if (root)
		sy->root = strdup(root);
	if (!sy->debuginfo_path || (root && !sy->root)) {
		xp_symbolizer_free(sy);
		return NULL;
	}
	sy->cb.find_elf = dwfl_build_id_find_elf;
	sy->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	sy->cb.section_address = dwfl_offline_section_address;
	sy->cb.debuginfo_path = &sy->debuginfo_path;
	return sy;
}

void xp_symbolizer_free(struct xp_symbolizer *sy)
{
	if (!sy)
		return;
	for (uint32_t i = 0; i < sy->count; i++) {
		free(sy->mods[i].path);
		free(sy->mods[i].cus);
		xp_symindex_free(sy->mods[i].syms);
		if (sy->mods[i].dwfl)
			dwfl_end(sy->mods[i].dwfl);
	}
	free(sy->mods);
	xp_u64map_free(&sy->by_key);
	free(sy->debuginfo_path);
	free(sy->root);
	free(sy);
}

static int is_file_path(const char *path)
{
	/* "[vdso]", "//anon", "" and "memfd:..." have nothing to open; a path
	 * with a ".." component (the kernel never records one) could climb
	 * out of --symfs, so it is not opened either */
	return path[0] == '/' && path[1] != '/' && !strstr(path, "/../") &&
	       !(strlen(path) >= 3 && !strcmp(path + strlen(path) - 3, "/.."));
}

int xp_symbolizer_module(struct xp_symbolizer *sy, const char *path,
			 const uint8_t *build_id, size_t build_id_len,
			 uint32_t *module)
{
	uint64_t *slot;
	struct module *m;
	int fresh, err;

	if (build_id_len > sizeof(m->build_id))
		build_id_len = sizeof(m->build_id);
	err = xp_u64map_upsert(&sy->by_key, hash_bytes(path, strlen(path)),
			       hash_bytes(build_id, build_id_len), &slot, &fresh);
	if (err)
		return err;
	if (!fresh) {
		*module = (uint32_t)(*slot - 1);
		return 0;
	}
	if (sy->count >= XP_SYMBOLIZER_MAX_MODULES)
		return -E2BIG;
	if (xp_array__reserve((void **)&sy->mods, &sy->cap, (size_t)sy->count + 1, sizeof(*sy->mods),
			      16))
		return -ENOMEM;
	m = &sy->mods[sy->count];
	memset(m, 0, sizeof(*m));
	m->path = strdup(path);
	if (!m->path)
		return -ENOMEM;
	if (build_id_len)
		memcpy(m->build_id, build_id, build_id_len);
	m->build_id_len = build_id_len;
	m->status = is_file_path(path) ? XP_MODULE_UNOPENED : XP_MODULE_ANON;
	*slot = ++sy->count;
	*module = sy->count - 1;
	return 0;
}

/* Reads the PT_LOAD headers that map file offsets to addresses. */
static int read_loads(struct module *m, Elf *elf)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	for (size_t i = 0; i < n && m->nloads < MAX_LOADS; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		m->loads[m->nloads++] = (struct load){
			.offset = ph.p_offset, .filesz = ph.p_filesz, .vaddr = ph.p_vaddr,
		};
	}
	return m->nloads ? 0 : -ENOEXEC;
}

/* path as read: under the --symfs root when there is one */
static int full_path(const struct xp_symbolizer *sy, const char *path, char *buf, size_t buflen)
{
	int n = snprintf(buf, buflen, "%s%s", sy->root ? sy->root : "", path);

	return n < 0 || (size_t)n >= buflen ? -ENAMETOOLONG : 0;
}

static void open_module(struct xp_symbolizer *sy, struct module *m)
{
	char full[4096];
	const void *bid = NULL;
	struct stat st;
	GElf_Addr bias;
	Elf *elf;
	int fd;

	m->status = XP_MODULE_MISSING;
	if (full_path(sy, m->path, full, sizeof(full)))
		return;
	/* read-only, and never a FIFO, tty or device that a hostile run
	 * names: opening one could block or have side effects, reading one
	 * never end; it is checked before it is opened */
	fd = xp_open_regular(AT_FDCWD, full, XP_OPEN_FOLLOW, &st);
	if (fd == -EMFILE || fd == -ENFILE) {
		m->status = XP_MODULE_UNOPENED;     /* the process's limit, not the file: later */
		return;
	}
	if (fd == -ENXIO)
		m->status = XP_MODULE_NOT_ELF;
	if (fd < 0)
		return;
	m->dev = st.st_dev;
	m->ino = st.st_ino;
	m->status = XP_MODULE_NOT_ELF;
	m->dwfl = dwfl_begin(&sy->cb);
	if (!m->dwfl) {
		close(fd);
		return;
	}
	/* dwfl takes the fd when it succeeds; base 0 keeps ELF addresses as
	 * they are */
	m->mod = dwfl_report_elf(m->dwfl, m->path, full, fd, 0, false);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod) {
		close(fd);
		goto unusable;
	}
	elf = dwfl_module_getelf(m->mod, &bias);
	if (!elf || read_loads(m, elf))
		goto unusable;
	if (m->build_id_len) {
		int len = dwelf_elf_gnu_build_id(elf, &bid);

		if (len != (int)m->build_id_len || memcmp(bid, m->build_id, (size_t)len)) {
			m->status = XP_MODULE_BUILD_ID_MISMATCH;
			goto unusable;
		}
	}
	m->status = XP_MODULE_OK;
	return;
unusable:
	dwfl_end(m->dwfl);
	m->dwfl = NULL;
	m->mod = NULL;
}

/* The module (opened on first use) and the address in it of file offset
 * off, bias included. 0, -EINVAL, -ENODATA unusable module, -ENOENT outside
 * every loadable segment. */
static int module_addr(struct xp_symbolizer *sy, uint32_t module, uint64_t off,
		       struct module **out, GElf_Addr *addr)
{
	struct module *m;
	GElf_Addr bias;

	if (module >= sy->count)
		return -EINVAL;
	m = &sy->mods[module];
	if (m->status == XP_MODULE_UNOPENED)
		open_module(sy, m);
	if (m->status != XP_MODULE_OK)
		return -ENODATA;
	for (size_t i = 0; i < m->nloads; i++) {
		const struct load *l = &m->loads[i];

		if (off >= l->offset && off - l->offset < l->filesz) {
			dwfl_module_getelf(m->mod, &bias);
			*addr = l->vaddr + (off - l->offset) + bias;
			*out = m;
			return 0;
		}
	}
	return -ENOENT;
}

int xp_symbolizer_lookup(struct xp_symbolizer *sy, uint32_t module, uint64_t off,
			 char *buf, size_t buflen)
{
	struct module *m;
	const char *name;
	GElf_Off sym_off;
	GElf_Sym sym;
	GElf_Addr addr;
	int err = module_addr(sy, module, off, &m, &addr);

	if (err)
		return err;
	if (!m->syms_built) {
		m->syms = xp_symindex_build(m->mod);
		m->syms_built = 1;
	}
	if (m->syms) {
		uint64_t size;

		name = xp_symindex_lookup(m->syms, addr, &sym_off, &size);
		sym.st_size = size;
	} else {
		name = dwfl_module_addrinfo(m->mod, addr, &sym_off, &sym, NULL, NULL, NULL);
	}
	if (!name || !*name)
		return -ENOENT;
	/* a symbol without size matches any address after it: only trust it
	 * for the address itself */
	if (sym.st_size == 0 && sym_off != 0)
		return -ENOENT;
	xp_demangle(name, buf, buflen);
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void build_cu_ranges(struct module *m)
{
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;
	size_t cap = 0;

	m->cus_built = 1;
	while ((cu = dwfl_module_nextcu(m->mod, cu, &bias))) {
		Dwarf_Addr base, start, end;
		ptrdiff_t off = 0;

		while ((off = dwarf_ranges(cu, off, &base, &start, &end)) > 0) {
			/* out of memory: no inline frames, nothing worse */
			if (m->ncus >= MAX_CU_RANGES ||
			    xp_array__reserve((void **)&m->cus, &cap, m->ncus + 1, sizeof(*m->cus), 64))
				goto done;
			m->cus[m->ncus++] = (struct cu_range){ start + bias, end + bias, *cu, bias };
		}
	}
done:
	if (m->ncus)
		qsort(m->cus, m->ncus, sizeof(*m->cus), cmp_range);
}

/* The compile unit containing addr, through .debug_aranges, else the CU
 * range index. */
static Dwarf_Die *cu_of(struct module *m, Dwarf_Addr addr, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(m->mod, addr, bias);
	size_t lo = 0, hi;

	if (cu)
		return cu;
	if (!m->cus_built)
		build_cu_ranges(m);
	hi = m->ncus;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->cus[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ranges of different CUs do not overlap; look at the closest below */
	if (lo > 0 && addr < m->cus[lo - 1].end) {
		*bias = m->cus[lo - 1].bias;
		return &m->cus[lo - 1].cu;
	}
	return NULL;
}

int xp_symbolizer_inlines(struct xp_symbolizer *sy, uint32_t module, uint64_t off,
			  char (*names)[XP_INLINE_NAME_LEN], int max)
{
	Dwarf_Die *cu, *scopes = NULL;
	Dwarf_Addr dbias;
	struct module *m;
	GElf_Addr addr;
	int n, count = 0;

	if (module_addr(sy, module, off, &m, &addr))
		return 0;
	cu = cu_of(m, addr, &dbias);
	if (!cu)
		return 0;   /* no DWARF for this address: no inline information */
	n = dwarf_getscopes(cu, addr - dbias, &scopes);
	/* scopes run from the innermost out; stop at the enclosing function */
	for (int i = 0; i < n && count < max; i++) {
		int tag = dwarf_tag(&scopes[i]);
		Dwarf_Attribute attr;
		const char *name;

		if (tag == DW_TAG_subprogram)
			break;
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		/* the linkage name demangles to the full C++ signature */
		name = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_linkage_name, &attr));
		if (!name)
			name = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_name, &attr));
		xp_demangle(name ? name : "[inlined]", names[count], XP_INLINE_NAME_LEN);
		count++;
	}
	free(scopes);
	return count;
}

enum xp_module_status xp_symbolizer_status(struct xp_symbolizer *sy,
					   uint32_t module)
{
	if (module >= sy->count)
		return XP_MODULE_MISSING;
	return sy->mods[module].status;
}

enum xp_module_status xp_symbolizer_open(struct xp_symbolizer *sy, uint32_t module)
{
	if (module >= sy->count)
		return XP_MODULE_MISSING;
	if (sy->mods[module].status == XP_MODULE_UNOPENED)
		open_module(sy, &sy->mods[module]);
	return sy->mods[module].status;
}

int xp_symbolizer_file(const struct xp_symbolizer *sy, uint32_t module,
		       char *buf, size_t buflen)
{
	if (module >= sy->count)
		return -EINVAL;
	return full_path(sy, sy->mods[module].path, buf, buflen);
}

int xp_symbolizer_fd(const struct xp_symbolizer *sy, uint32_t module)
{
	char full[4096];
	struct stat st;
	int fd, err;

	if (module >= sy->count || sy->mods[module].status != XP_MODULE_OK)
		return -EINVAL;
	err = full_path(sy, sy->mods[module].path, full, sizeof(full));
	if (err)
		return err;
	fd = xp_open_regular(AT_FDCWD, full, XP_OPEN_FOLLOW, &st);
	if (fd >= 0 && (st.st_dev != sy->mods[module].dev || st.st_ino != sy->mods[module].ino)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

const char *xp_symbolizer_path(const struct xp_symbolizer *sy, uint32_t module)
{
	return module < sy->count ? sy->mods[module].path : NULL;
}

uint32_t xp_symbolizer_count(const struct xp_symbolizer *sy)
{
	return sy->count;
}

size_t xp_symbolizer_build_id(const struct xp_symbolizer *sy, uint32_t module,
			      const uint8_t **id)
{
	if (module >= sy->count)
		return 0;
	*id = sy->mods[module].build_id;
	return sy->mods[module].build_id_len;
}
