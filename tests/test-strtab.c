/* test-strtab.c - the string interner gives one id per distinct string. */
#include <stdio.h>
#include <string.h>

#include "check-main.h"
#include "src/strtab.h"

START_TEST(same_string_same_id)
{
	struct xp_strtab *t = xp_strtab_new();
	int64_t a, b, c;
	int fresh;

	ck_assert_int_eq(xp_strtab_intern(t, "main", 4, &a, &fresh), 0);
	ck_assert_int_eq(fresh, 1);
	ck_assert_int_eq(xp_strtab_intern(t, "main", 4, &b, &fresh), 0);
	ck_assert_int_eq(fresh, 0);
	ck_assert_int_eq(a, b);
	/* a prefix is another string: lengths are part of the key */
	ck_assert_int_eq(xp_strtab_intern(t, "mainx", 4, &c, &fresh), 0);
	ck_assert_int_eq(c, a);
	ck_assert_int_eq(xp_strtab_intern(t, "mai", 3, &c, &fresh), 0);
	ck_assert_int_ne(c, a);
	ck_assert_int_eq(fresh, 1);
	ck_assert_str_eq(xp_strtab_get(t, a), "main");
	ck_assert_str_eq(xp_strtab_get(t, c), "mai");
	ck_assert_ptr_null(xp_strtab_get(t, 0));
	ck_assert_ptr_null(xp_strtab_get(t, 99));
	xp_strtab_free(t);
}
END_TEST

START_TEST(many_strings_survive_growth)
{
	struct xp_strtab *t = xp_strtab_new();
	char buf[32];
	int64_t id;
	int fresh;

	for (int i = 0; i < 100000; i++) {
		int n = snprintf(buf, sizeof(buf), "sym%d", i);

		ck_assert_int_eq(xp_strtab_intern(t, buf, (size_t)n, &id, &fresh), 0);
		ck_assert_int_eq(fresh, 1);
		ck_assert_int_eq(id, i + 1);    /* dense, in order */
	}
	for (int i = 0; i < 100000; i += 997) {
		int n = snprintf(buf, sizeof(buf), "sym%d", i);

		ck_assert_int_eq(xp_strtab_intern(t, buf, (size_t)n, &id, &fresh), 0);
		ck_assert_int_eq(fresh, 0);
		ck_assert_int_eq(id, i + 1);
		ck_assert_str_eq(xp_strtab_get(t, id), buf);
	}
	ck_assert_uint_eq(xp_strtab_count(t), 100000);
	xp_strtab_free(t);
}
END_TEST

START_TEST(empty_and_binary_strings)
{
	struct xp_strtab *t = xp_strtab_new();
	int64_t e, z;
	int fresh;

	ck_assert_int_eq(xp_strtab_intern(t, "", 0, &e, &fresh), 0);
	ck_assert_int_eq(xp_strtab_intern(t, "a\0b", 3, &z, &fresh), 0);
	ck_assert_int_ne(e, z);
	ck_assert_str_eq(xp_strtab_get(t, e), "");
	xp_strtab_free(t);
}
END_TEST

Suite *strtab_suite(void)
{
	Suite *s = suite_create("strtab");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, same_string_same_id);
	tcase_add_test(tc, many_strings_survive_growth);
	tcase_add_test(tc, empty_and_binary_strings);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(strtab_suite)
