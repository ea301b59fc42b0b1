/* test-mappings.c - an address means what its mapping meant at the time. */
#include <errno.h>
#include <stdint.h>

#include "check-main.h"
#include "ingest/mappings.h"

#define A 0x7f0000000000ull

START_TEST(dlopen_dlclose_exec_over_time)
{
	struct xp_mappings *ms = xp_mappings_new();
	const struct xp_mapping *m;

	/* libA from /proc at start, then the range reused by libB at ts 300 */
	ck_assert_int_eq(xp_mappings_add(ms, 7, 100, A, 0x1000, 0x2000, 1, 1), 0);
	ck_assert_int_eq(xp_mappings_add(ms, 7, 300, A, 0x1000, 0, 2, 0), 0);
	m = xp_mappings_lookup(ms, 7, 50, A + 0x10);    /* from /proc: valid from 0 */
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_eq(m->module, 1);
	ck_assert_uint_eq(m->pgoff, 0x2000);
	ck_assert_uint_eq(xp_mappings_lookup(ms, 7, 299, A)->module, 1);
	ck_assert_uint_eq(xp_mappings_lookup(ms, 7, 300, A)->module, 2);
	ck_assert_uint_eq(xp_mappings_lookup(ms, 7, 999, A + 0xfff)->module, 2);
	ck_assert_ptr_null(xp_mappings_lookup(ms, 7, 999, A + 0x1000));
	ck_assert_int_eq(xp_mappings_time_dependent(ms, 7), 1);
	/* exec at 500 ends everything; a new image at 600 */
	ck_assert_int_eq(xp_mappings_exec(ms, 7, 500), 0);
	ck_assert_ptr_null(xp_mappings_lookup(ms, 7, 550, A));
	ck_assert_int_eq(xp_mappings_add(ms, 7, 600, A, 0x1000, 0, 3, 0), 0);
	ck_assert_uint_eq(xp_mappings_lookup(ms, 7, 700, A)->module, 3);
	ck_assert_uint_eq(xp_mappings_lookup(ms, 7, 400, A)->module, 2);
	xp_mappings_free(ms);
}
END_TEST

START_TEST(late_side_band_record_still_used)
{
	struct xp_mappings *ms = xp_mappings_new();

	/* the mmap event carries ts 200 but a sample at 190 already ran there */
	ck_assert_int_eq(xp_mappings_add(ms, 8, 200, A, 0x1000, 0, 4, 0), 0);
	ck_assert_uint_eq(xp_mappings_lookup(ms, 8, 190, A)->module, 4);
	ck_assert_int_eq(xp_mappings_time_dependent(ms, 8), 0);
	ck_assert_ptr_null(xp_mappings_lookup(ms, 9, 190, A));      /* other process */
	xp_mappings_free(ms);
}
END_TEST

START_TEST(fork_inherits_until_exec)
{
	struct xp_mappings *ms = xp_mappings_new();

	ck_assert_int_eq(xp_mappings_add(ms, 10, 0, A, 0x1000, 0, 5, 1), 0);
	ck_assert_int_eq(xp_mappings_fork(ms, 11, 10, 100), 0);
	ck_assert_uint_eq(xp_mappings_lookup(ms, 11, 150, A)->module, 5);
	ck_assert_int_eq(xp_mappings_exec(ms, 11, 200), 0);
	ck_assert_ptr_null(xp_mappings_lookup(ms, 11, 250, A));
	ck_assert_uint_eq(xp_mappings_lookup(ms, 11, 150, A)->module, 5);
	xp_mappings_free(ms);
}
END_TEST

/* The BPF exec record fires after the new image is mapped; the exec's
 * comm before. In either file order the program's mapping stays. */
START_TEST(exec_record_after_the_new_image)
{
	/* file orders: comm, mmap, exec (the exec read last); exec, comm, mmap
	 * (the BPF ring read first); comm, exec, mmap */
	static const char orders[3][4] = { "cme", "ecm", "cem" };

	for (int o = 0; o < 3; o++) {
		struct xp_mappings *ms = xp_mappings_new();

		ck_assert_int_eq(xp_mappings_add(ms, 7, 10, A, 0x1000, 0, 1, 0), 0);  /* old image */
		for (const char *step = orders[o]; *step; step++) {
			if (*step == 'c')
				ck_assert_int_eq(xp_mappings_comm_exec(ms, 7, 100), 0);
			else if (*step == 'm')
				ck_assert_int_eq(xp_mappings_add(ms, 7, 101, A + 0x10000, 0x1000, 0, 2, 0), 0);
			else
				ck_assert_int_eq(xp_mappings_exec(ms, 7, 105), 0);
		}
		ck_assert_uint_eq(xp_mappings_lookup(ms, 7, 200, A + 0x10000)->module, 2);
		ck_assert_ptr_null(xp_mappings_lookup(ms, 7, 200, A));     /* the old image ended */
		ck_assert_uint_eq(xp_mappings_lookup(ms, 7, 50, A)->module, 1);
		xp_mappings_free(ms);
	}
	/* without the comm (older runs): as before, the exec record ends all before it */
	{
		struct xp_mappings *ms = xp_mappings_new();

		ck_assert_int_eq(xp_mappings_add(ms, 7, 101, A, 0x1000, 0, 2, 0), 0);
		ck_assert_int_eq(xp_mappings_exec(ms, 7, 105), 0);
		ck_assert_ptr_null(xp_mappings_lookup(ms, 7, 200, A));
		xp_mappings_free(ms);
	}
}
END_TEST

START_TEST(bad_ranges_refused)
{
	struct xp_mappings *ms = xp_mappings_new();

	ck_assert_int_eq(xp_mappings_add(ms, 1, 0, A, 0, 0, 1, 0), -EINVAL);
	ck_assert_int_eq(xp_mappings_add(ms, 1, 0, UINT64_MAX - 10, 0x1000, 0, 1, 0), -EINVAL);
	ck_assert_uint_eq(xp_mappings_count(ms), 0);
	xp_mappings_free(ms);
}
END_TEST

Suite *mappings_suite(void)
{
	Suite *s = suite_create("mappings");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, dlopen_dlclose_exec_over_time);
	tcase_add_test(tc, late_side_band_record_still_used);
	tcase_add_test(tc, fork_inherits_until_exec);
	tcase_add_test(tc, exec_record_after_the_new_image);
	tcase_add_test(tc, bad_ranges_refused);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(mappings_suite)
