/* test-kallsyms.c - kernel symbol lookup from a kallsyms snapshot. */
#include <stdio.h>
#include <string.h>

#include "check-main.h"
#include "ingest/kallsyms.h"

static struct xp_kallsyms *parse(const char *text)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct xp_kallsyms *k = NULL;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(xp_kallsyms_parse(&k, f), 0);
	fclose(f);
	return k;
}

START_TEST(lookup_by_address)
{
	/* out of order on purpose: the parser sorts */
	struct xp_kallsyms *k = parse(
		"ffffffff81002000 T schedule\n"
		"ffffffff81000000 T _stext\n"
		"ffffffff81001000 t do_syscall_64\n"
		"ffffffff81003000 D jiffies\n"
		"ffffffffc0100000 t nv_ioctl\t[nvidia]\n"
		"garbage line\n"
		"ffffffff81004000 X\n");
	const char *mod;

	ck_assert_uint_eq(xp_kallsyms_count(k), 4);
	ck_assert_uint_eq(xp_kallsyms_skipped(k), 3);   /* data, garbage, no name */
	ck_assert_str_eq(xp_kallsyms_lookup(k, 0xffffffff81001000, &mod), "do_syscall_64");
	ck_assert_ptr_null(mod);
	ck_assert_str_eq(xp_kallsyms_lookup(k, 0xffffffff81001fff, NULL), "do_syscall_64");
	ck_assert_str_eq(xp_kallsyms_lookup(k, 0xffffffff81002000, NULL), "schedule");
	/* after a data symbol: still the text symbol before it */
	ck_assert_str_eq(xp_kallsyms_lookup(k, 0xffffffff81003100, NULL), "schedule");
	ck_assert_str_eq(xp_kallsyms_lookup(k, 0xffffffffc0100010, &mod), "nv_ioctl");
	ck_assert_str_eq(mod, "nvidia");
	ck_assert_ptr_null(xp_kallsyms_lookup(k, 0xffffffff80000000, NULL));
	xp_kallsyms_free(k);
}
END_TEST

START_TEST(unprivileged_zero_addresses_resolve_nothing)
{
	struct xp_kallsyms *k = parse("0000000000000000 T _stext\n0000000000000000 T schedule\n");

	ck_assert_ptr_null(xp_kallsyms_lookup(k, 0xffffffff81001000, NULL));
	xp_kallsyms_free(k);
}
END_TEST

START_TEST(overlong_line_skipped)
{
	char text[5000];
	struct xp_kallsyms *k;

	memset(text, 'a', sizeof(text));
	memcpy(text, "ffffffff81000000 T ", 19);
	memcpy(text + 3000, "\nffffffff81001000 T ok\n", 24);
	k = parse(text);
	ck_assert_uint_eq(xp_kallsyms_count(k), 1);
	ck_assert_str_eq(xp_kallsyms_lookup(k, 0xffffffff81001001, NULL), "ok");
	xp_kallsyms_free(k);
}
END_TEST

/* A NUL byte right where an overlong line's rest begins made the skipping
 * loop index before its buffer (found by scripts/fuzz kallsyms, input in
 * tests/fuzz/regress/kallsyms/). The line is skipped, the next one kept. */
START_TEST(nul_after_overlong_line)
{
	static char text[1024 + 256];
	struct xp_kallsyms *m = NULL;
	size_t n = 0;
	FILE *f;

	memset(text, 'a', 1024 - 1);
	n = 1024 - 1;
	text[n++] = '\0';
	n += (size_t)sprintf(text + n, "rest\nffffffff81000000 T _stext\nffffffff81000100 T next_one\n");
	f = fmemopen(text, n, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(xp_kallsyms_parse(&m, f), 0);
	fclose(f);
	ck_assert_uint_ge(xp_kallsyms_count(m), 1);
	ck_assert_uint_eq(xp_kallsyms_skipped(m), 1);
	xp_kallsyms_free(m);
}
END_TEST

START_TEST(cut_in_a_line)
{
	/* xpcap killed while copying: the half line is not a symbol "fu", and
	 * nothing past the last whole symbol belongs to it */
	struct xp_kallsyms *k = parse(
		"ffffffff81000000 T _stext\n"
		"ffffffff81001000 T do_syscall_64\n"
		"ffffffff81002000 t __x64_sys_futex\n"
		"ffffffff81003000 T fu");

	ck_assert_int_eq(xp_kallsyms_complete(k), 0);
	ck_assert_uint_eq(xp_kallsyms_count(k), 3);
	ck_assert_uint_eq(xp_kallsyms_bytes(k), 26 + 33 + 35 + 21);
	/* until the caller says it is truncated, the usual extent */
	ck_assert_str_eq(xp_kallsyms_lookup(k, 0xffffffff81003020, NULL), "__x64_sys_futex");
	xp_kallsyms_set_truncated(k);
	ck_assert_str_eq(xp_kallsyms_lookup(k, 0xffffffff81002000, NULL), "__x64_sys_futex");
	ck_assert_ptr_null(xp_kallsyms_lookup(k, 0xffffffff81002010, NULL));
	ck_assert_ptr_null(xp_kallsyms_lookup(k, 0xffffffffc0100100, NULL));
	ck_assert_int_eq(xp_kallsyms_beyond(k, 0xffffffffc0100100), 1);
	ck_assert_int_eq(xp_kallsyms_beyond(k, 0xffffffff81001010), 0);
	ck_assert_str_eq(xp_kallsyms_lookup(k, 0xffffffff81001010, NULL), "do_syscall_64");
	xp_kallsyms_free(k);
}
END_TEST

START_TEST(whole_copy_complete)
{
	struct xp_kallsyms *k = parse("ffffffff81000000 T _stext\n");

	ck_assert_int_eq(xp_kallsyms_complete(k), 1);
	ck_assert_uint_eq(xp_kallsyms_bytes(k), 26);
	ck_assert_int_eq(xp_kallsyms_beyond(k, 0xffffffffc0100100), 0);
	xp_kallsyms_free(k);
}
END_TEST

START_TEST(last_symbol_extent_bounded)
{
	/* a module's last function, the kernel's text end: no function is a
	 * MiB long, and an end marker names nothing */
	struct xp_kallsyms *k = parse(
		"ffffffff81000000 T _stext\n"
		"ffffffff81001000 T schedule\n"
		"ffffffff81002000 T _etext\n"
		"ffffffff81800000 T _sinittext\n"
		"ffffffff81801000 T _einittext\n"
		"ffffffff81900000 T __entry_text_end\n"
		"ffffffffc0100000 t nv_ioctl\t[nvidia]\n");

	ck_assert_str_eq(xp_kallsyms_lookup(k, 0xffffffff81001ff0, NULL), "schedule");
	ck_assert_ptr_null(xp_kallsyms_lookup(k, 0xffffffff81002000, NULL));
	ck_assert_ptr_null(xp_kallsyms_lookup(k, 0xffffffff81002100, NULL));
	ck_assert_str_eq(xp_kallsyms_lookup(k, 0xffffffff81800010, NULL), "_sinittext");
	ck_assert_ptr_null(xp_kallsyms_lookup(k, 0xffffffff81801010, NULL));
	ck_assert_ptr_null(xp_kallsyms_lookup(k, 0xffffffff81900010, NULL));
	ck_assert_str_eq(xp_kallsyms_lookup(k, 0xffffffffc0100000 + 0xfffff, NULL), "nv_ioctl");
	ck_assert_ptr_null(xp_kallsyms_lookup(k, 0xffffffffc0100000 + XP_KSYM_MAX_EXTENT, NULL));
	xp_kallsyms_free(k);
}
END_TEST

Suite *kallsyms_suite(void)
{
	Suite *s = suite_create("kallsyms");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, lookup_by_address);
	tcase_add_test(tc, unprivileged_zero_addresses_resolve_nothing);
	tcase_add_test(tc, overlong_line_skipped);
	tcase_add_test(tc, nul_after_overlong_line);
	tcase_add_test(tc, cut_in_a_line);
	tcase_add_test(tc, whole_copy_complete);
	tcase_add_test(tc, last_symbol_extent_bounded);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(kallsyms_suite)
