/* test-symindex.c - the sorted symbol index finds what libdwfl's own
 * (linear) lookup finds, on real ELF files: this test program and the libc
 * it runs with, at thousands of addresses spread over each module
 * (functions: overlapping data symbols are ranked differently). */
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-main.h"
#include "ingest/symindex.h"

static char *debuginfo_path;
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* The path of the mapped file whose name contains what, from /proc/self/maps. */
static int mapped_path(const char *what, char *buf, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[4096];
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');

		if (p && strstr(p, what)) {
			p[strcspn(p, "\n")] = '\0';
			snprintf(buf, len, "%s", p);
			found = 1;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* Compares the two lookups at n addresses over the module; returns how
 * many addresses got a name. */
static int compare(const char *path, int n)
{
	Dwfl *dwfl = dwfl_begin(&callbacks);
	Dwfl_Module *mod;
	struct xp_symindex *ix;
	Dwarf_Addr lo, hi;
	int named = 0;

	ck_assert_ptr_nonnull(dwfl);
	mod = dwfl_report_offline(dwfl, path, path, -1);
	ck_assert_msg(mod != NULL, "%s: %s", path, dwfl_errmsg(-1));
	dwfl_report_end(dwfl, NULL, NULL);
	dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
	ix = xp_symindex_build(mod);
	ck_assert_ptr_nonnull(ix);
	srand(7);
	for (int i = 0; i < n; i++) {
		uint64_t addr = lo + (uint64_t)((double)rand() / RAND_MAX * (double)(hi - lo - 1));
		GElf_Off doff = 0;
		GElf_Sym dsym;
		const char *dname = dwfl_module_addrinfo(mod, addr, &doff, &dsym, NULL, NULL, NULL);
		uint64_t off = 0, size = 0;
		const char *name = xp_symindex_lookup(ix, addr, &off, &size);

		if (name)
			named++;
		if (name && size)   /* whatever it returns contains the address */
			ck_assert_uint_lt(off, size);
		if (dname && GELF_ST_TYPE(dsym.st_info) != STT_FUNC)
			continue;   /* code addresses are what we look up; data aliases differ */
		if (dname && dsym.st_size && doff < dsym.st_size) {
			/* libdwfl found a function containing addr: the same one, or
			 * an alias of it (same start and size) */
			ck_assert_msg(name != NULL, "%s+%#lx: libdwfl %s, index nothing", path,
				      (unsigned long)(addr - lo), dname);
			ck_assert_msg(addr - off == addr - doff && size == dsym.st_size,
				      "%s+%#lx: libdwfl %s (+%#lx/%#lx), index %s (+%#lx/%#lx)", path,
				      (unsigned long)(addr - lo), dname, (unsigned long)doff,
				      (unsigned long)dsym.st_size, name, (unsigned long)off,
				      (unsigned long)size);
		} else if (dname && doff == 0) {
			ck_assert_msg(name != NULL, "%s+%#lx: libdwfl %s exactly, index nothing", path,
				      (unsigned long)(addr - lo), dname);
		}
	}
	xp_symindex_free(ix);
	dwfl_end(dwfl);
	return named;
}

START_TEST(agrees_with_libdwfl_on_libc)
{
	char path[4096];

	ck_assert_msg(mapped_path("libc.so", path, sizeof(path)), "no libc in /proc/self/maps");
	ck_assert_int_gt(compare(path, 20000), 1000);
}
END_TEST

START_TEST(agrees_with_libdwfl_on_this_program)
{
	char path[4096];

	ck_assert_msg(mapped_path("test-symindex", path, sizeof(path)), "own path not mapped");
	ck_assert_int_gt(compare(path, 20000), 100);
}
END_TEST

START_TEST(exact_and_empty)
{
	char path[4096];
	Dwfl *dwfl = dwfl_begin(&callbacks);
	Dwfl_Module *mod;
	struct xp_symindex *ix;
	uint64_t off, size;
	GElf_Sym sym;
	GElf_Addr addr;
	const char *name = NULL;
	int count;

	ck_assert(mapped_path("test-symindex", path, sizeof(path)));
	mod = dwfl_report_offline(dwfl, path, path, -1);
	dwfl_report_end(dwfl, NULL, NULL);
	ix = xp_symindex_build(mod);
	/* every sized function symbol is found at its first and last byte */
	count = dwfl_module_getsymtab(mod);
	for (int i = 1; i < count; i++) {
		const char *n = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);

		if (!n || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size || sym.st_shndx == SHN_UNDEF)
			continue;
		name = xp_symindex_lookup(ix, addr, &off, &size);
		ck_assert_ptr_nonnull(name);
		ck_assert_uint_eq(off, 0);
		name = xp_symindex_lookup(ix, addr + sym.st_size - 1, &off, &size);
		ck_assert_ptr_nonnull(name);
		ck_assert_uint_eq(off, sym.st_size - 1);
	}
	ck_assert_ptr_null(xp_symindex_lookup(ix, 0, &off, &size));
	xp_symindex_free(ix);
	dwfl_end(dwfl);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("symindex");
	TCase *tc = tcase_create("lookup");

	tcase_add_test(tc, agrees_with_libdwfl_on_libc);
	tcase_add_test(tc, agrees_with_libdwfl_on_this_program);
	tcase_add_test(tc, exact_and_empty);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(suite)
