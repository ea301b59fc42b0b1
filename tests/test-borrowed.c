/* test-borrowed.c - the frames of launch-stack keys (ingest/borrowed.c):
 * a key gives back its latest copy's frames, by process; a copy of a key
 * already there is a check, the same or different by the stack id. */
#include <errno.h>
#include <stdint.h>

#include "borrowed.h"
#include "check-main.h"

START_TEST(keys_by_process)
{
	struct xp_borrowed *b = xp_borrowed_new();
	const uint64_t a[] = { 10, 20, 30 }, c[] = { 10, 21 };
	const uint64_t *got;
	unsigned n = 99;

	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_null(xp_borrowed_get(b, 7, 1, &n));          /* never put: missing */
	ck_assert_uint_eq(n, 99);
	ck_assert_int_eq(xp_borrowed_put(b, 7, 1, a, 3, 5), XP_BORROWED_NEW);
	ck_assert_ptr_null(xp_borrowed_get(b, 8, 1, &n));          /* another process's key 1 */
	got = xp_borrowed_get(b, 7, 1, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert(got[0] == 10 && got[1] == 20 && got[2] == 30);
	/* a check: the same stack id is the same frames, whatever the addresses */
	ck_assert_int_eq(xp_borrowed_put(b, 7, 1, c, 2, 5), XP_BORROWED_SAME);
	got = xp_borrowed_get(b, 7, 1, &n);
	ck_assert(n == 2 && got[1] == 21);                        /* the latest copy's */
	ck_assert_int_eq(xp_borrowed_put(b, 7, 1, a, 3, 6), XP_BORROWED_DIFFERED);
	ck_assert_int_eq(xp_borrowed_put(b, 8, 1, NULL, 0, 6), XP_BORROWED_NEW);
	ck_assert_ptr_nonnull(xp_borrowed_get(b, 8, 1, &n));      /* no frames is frames too */
	ck_assert_uint_eq(n, 0);
	/* key 0 is no key (ids start at 1): a damaged run's copy keeps nothing */
	ck_assert_int_eq(xp_borrowed_put(b, 0, 0, a, 3, 5), XP_BORROWED_NEW);
	ck_assert_int_eq(xp_borrowed_put(b, 0, 0, a, 3, 5), XP_BORROWED_NEW);
	ck_assert_ptr_null(xp_borrowed_get(b, 0, 0, &n));
	xp_borrowed_free(b);
}
END_TEST

/* Many keys: every one survives the table's growth. */
START_TEST(many_keys)
{
	struct xp_borrowed *b = xp_borrowed_new();
	unsigned n;

	for (uint32_t k = 1; k <= 5000; k++) {
		uint64_t ip = k * 16;

		ck_assert_int_eq(xp_borrowed_put(b, k % 3, k, &ip, 1, k), XP_BORROWED_NEW);
	}
	for (uint32_t k = 1; k <= 5000; k++) {
		const uint64_t *got = xp_borrowed_get(b, k % 3, k, &n);

		ck_assert_ptr_nonnull(got);
		ck_assert(n == 1 && got[0] == k * 16);
		ck_assert_ptr_null(xp_borrowed_get(b, (k + 1) % 3, k, &n));
	}
	xp_borrowed_free(b);
	xp_borrowed_free(NULL);
}
END_TEST

Suite *borrowed_suite(void)
{
	Suite *s = suite_create("borrowed");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, keys_by_process);
	tcase_add_test(tc, many_keys);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(borrowed_suite)
