/* pyfind.c - another process's CPython interpreter (pyfind.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "capture/pyfind.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "capture/mapfile.h"
#include "capture/procmaps.h"

static const struct xp_py_offsets table[] = {
#include "src/pyoffsets.inc"
};

enum { S_RUNTIME, S_VERSION, S_NEGREF, S_DECREFSHARED, S_CODE, S_UNICODE, S_BYTES, S_FRAME,
       S_COUNT };
static const char *const sym_names[S_COUNT] = {
	"_PyRuntime", "Py_Version", "_Py_NegativeRefcount", "_Py_DecRefShared",
	"PyCode_Type", "PyUnicode_Type", "PyBytes_Type", "PyFrame_Type",
};

/* The interpreter's file as mapped: the first mapping of it, and the
 * minor its name says (libpython3.X / python3.X), 0 if none. */
struct pyfile {
	struct procmaps_entry e;
	char path[4096];
	int minor;
	int lib;
};

static int name_minor(const char *base, const char *prefix)
{
	size_t n = strlen(prefix);
	char *end;
	long m;

	if (strncmp(base, prefix, n))
		return -1;
	if (base[n] == '\0' || base[n] == ' ')
		return 0;               /* "python3": the version is in Py_Version */
	if (base[n] != '.')
		return -1;
	m = strtol(base + n + 1, &end, 10);
	return m > 0 && m < 100 && (*end == '\0' || *end == '.' || *end == ' ') ? (int)m : -1;
}

/* The interpreter's mapping of pid: 1 found (libpython preferred: then the
 * executable is a stub), 0 none, -errno. */
static int find_file(pid_t pid, struct pyfile *out)
{
	char path[64], line[4200];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct procmaps_entry e;
		const char *base;
		int m, lib;

		if (procmaps_parse_line(line, &e) || !e.ino || !e.path[0])
			continue;
		base = strrchr(e.path, '/');
		base = base ? base + 1 : e.path;
		lib = 1;
		m = name_minor(base, "libpython3");
		if (m < 0 || (m == 0 && strncmp(base, "libpython3.", 11))) {
			lib = 0;
			m = name_minor(base, "python3");
		}
		if (m < 0 || (found && (out->lib || !lib)))
			continue;
		out->e = e;
		snprintf(out->path, sizeof(out->path), "%s", e.path);
		out->e.path = out->path;
		out->minor = m;
		out->lib = lib;
		found = 1;
	}
	fclose(f);
	return found;
}

/* A symbol table's values of the names (0 when absent). */
static void scan_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, GElf_Addr *val)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; d && i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || (name[0] != '_' && name[0] != 'P'))
			continue;
		for (int k = 0; k < S_COUNT; k++)
			if (!val[k] && !strcmp(name, sym_names[k]))
				val[k] = sym.st_value;
	}
}

/* 3.10 publishes no Py_Version: its micro from PY_VERSION, the string
 * "3.10.N" in .rodata (Py_GetVersion prints it; the linker may have merged
 * it into the tail of another, as ".../versions/3.10.13"). 0 if not found. */
static unsigned rodata_micro(Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name, *p, *end;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(name, ".rodata") || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		end = (const char *)d->d_buf + d->d_size;
		for (p = d->d_buf; p + 7 < end; p++) {
			char *e;
			unsigned long micro;

			if ((p[0] >= '0' && p[0] <= '9') || p[0] == '.' || memcmp(p + 1, "3.10.", 5) ||
			    p[6] < '0' || p[6] > '9')
				continue;
			micro = strtoul(p + 6, &e, 10);
			if (e < end && !*e && micro < 256)
				return (unsigned)micro;
		}
	}
	return 0;
}

/* The names' addresses in pid: the file's symbols plus the load bias of
 * the mapping. 0 or -errno. */
static int file_symbols(pid_t pid, const struct pyfile *pf, uintptr_t *addr, unsigned *micro)
{
	struct mapfile_id id = { .pid = pid, .start = pf->e.start, .end = pf->e.end,
				 .dev = makedev(pf->e.maj, pf->e.min), .ino = pf->e.ino,
				 .path = pf->path };
	GElf_Addr val[S_COUNT] = { 0 };
	int64_t bias = 0;
	int have_bias = 0, fd = mapfile_open(&id);
	size_t phnum;
	Elf_Scn *scn = NULL;
	Elf *elf;

	if (fd < 0)
		return fd;
	if (elf_version(EV_CURRENT) == EV_NONE || !(elf = elf_begin(fd, ELF_C_READ, NULL))) {
		close(fd);
		return -EINVAL;
	}
	for (int pass = 0; pass < 2 && !val[S_RUNTIME]; pass++) {
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;

			if (gelf_getshdr(scn, &sh) &&
			    sh.sh_type == (pass == 0 ? SHT_DYNSYM : SHT_SYMTAB))
				scan_symbols(elf, scn, &sh, val);
		}
	}
	/* the segment the mapping starts in gives the bias */
	if (elf_getphdrnum(elf, &phnum) == 0) {
		for (size_t i = 0; i < phnum && !have_bias; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
			    (ph.p_offset & ~0xfffull) != pf->e.pgoff)
				continue;
			bias = (int64_t)(pf->e.start - pf->e.pgoff) - (int64_t)(ph.p_vaddr - ph.p_offset);
			have_bias = 1;
		}
	}
	if (!val[S_VERSION] && pf->minor == 10)
		*micro = rodata_micro(elf);
	elf_end(elf);
	close(fd);
	if (!have_bias)
		return -ENOEXEC;
	for (int k = 0; k < S_COUNT; k++)
		addr[k] = val[k] ? (uintptr_t)((int64_t)val[k] + bias) : 0;
	return 0;
}

int pyfind(pid_t pid, struct pyfind *f)
{
	struct pyfile pf;
	uintptr_t a[S_COUNT];
	uint64_t version = 0;
	unsigned micro = 0;
	char vs[32];
	int minor, err;

	memset(f, 0, sizeof(*f));
	f->pp.pid = pid;
	err = find_file(pid, &pf);
	if (err <= 0) {
		snprintf(f->reason, sizeof(f->reason), err ? "cannot read its mappings: %s"
			 : "no Python interpreter mapped%s", err ? strerror(-err) : "");
		return err ? -1 : 0;
	}
	err = file_symbols(pid, &pf, a, &micro);
	if (err) {
		snprintf(f->reason, sizeof(f->reason), "cannot read the symbols of %.120s: %s",
			 pf.path, strerror(-err));
		return -1;
	}
	if (!a[S_RUNTIME]) {
		snprintf(f->reason, sizeof(f->reason), "%.120s has no _PyRuntime symbol", pf.path);
		return -1;
	}
	f->runtime = a[S_RUNTIME];
	/* 3.11+ publish their version; 3.10 has no Py_Version: its file's name */
	if (a[S_VERSION] && xp_py_peek(pid, &version, a[S_VERSION], 4)) {
		snprintf(f->reason, sizeof(f->reason), "memory unreadable (process_vm_readv: %s)",
			 strerror(errno));
		return -1;
	}
	f->pp.hexversion = a[S_VERSION] ? (uint32_t)version : pf.minor == 10 ?
			   0x030a00f0u | micro << 8 : 0;
	minor = f->pp.hexversion >> 16 & 0xff;
	snprintf(vs, sizeof(vs), "%u.%u.%u", f->pp.hexversion >> 24, minor,
		 f->pp.hexversion >> 8 & 0xff);
	if (minor == 10 && !a[S_VERSION] && !micro)
		snprintf(vs, sizeof(vs), "3.10");
	if (f->pp.hexversion >> 24 != 3 || minor < XP_PY_MINOR_FIRST || minor > XP_PY_MINOR_LAST) {
		snprintf(f->reason, sizeof(f->reason), f->pp.hexversion ? "Python %s: version not "
			 "supported (the reader knows 3.10 to 3.13)" : "Python of unknown version%s",
			 f->pp.hexversion ? vs : "");
		return -1;
	}
	if (a[S_NEGREF] || a[S_DECREFSHARED]) {
		snprintf(f->reason, sizeof(f->reason), "Python %s %s build: not supported", vs,
			 a[S_NEGREF] ? "debug" : "free-threaded");
		return -1;
	}
	f->pp.o = &table[minor - XP_PY_MINOR_FIRST];
	f->pp.code_type = a[S_CODE];
	f->pp.unicode_type = a[S_UNICODE];
	f->pp.bytes_type = a[S_BYTES];
	f->pp.frame_type = a[S_FRAME];
	if (!f->pp.code_type || !f->pp.unicode_type || !f->pp.bytes_type || !f->pp.frame_type) {
		snprintf(f->reason, sizeof(f->reason), "Python %s: type objects not found", vs);
		return -1;
	}
	if (minor == 13 && xp_py_check_debug_offsets(&f->pp, f->runtime, vs, f->reason,
						     sizeof(f->reason)))
		return -1;
	snprintf(f->reason, sizeof(f->reason), "Python %s, offsets of %s%s", vs, f->pp.o->from,
		 minor == 13 ? " checked against _Py_DebugOffsets" : "");
	return 1;
}
