/* test-timearg.c - --since/--until +OFFSET (cmd/timearg.c): units, and
 * what is refused: NaN (which compares false to every bound, so it was
 * taken and then converted to an integer, undefined), infinities, more
 * than 1e18 ns, and a start time that no offset fits after. */
#include <errno.h>
#include <stdint.h>

#include "check-main.h"
#include "cmd/timearg.h"

START_TEST(offsets_parsed)
{
	static const struct { const char *arg; int64_t ns; } ok[] = {
		{ "+1.5s", 1500000000 }, { "+200ms", 200000000 }, { "+50us", 50000 },
		{ "+1000ns", 1000 }, { "+1500000000", 1500000000 }, { "+0s", 0 },
		{ "+1e6s", 1000000000000000 }, { "+0x10ns", 16 }, { "+1e9s", 1000000000000000000 },
	};
	int64_t ns;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		ns = -1;
		ck_assert_msg(xp_cmd_parse_offset(ok[i].arg, &ns) == 0, "%s refused", ok[i].arg);
		ck_assert_int_eq(ns, ok[i].ns);
	}
}
END_TEST

START_TEST(not_numbers_refused)
{
	static const char *const bad[] = {
		"+nan", "+NAN", "+nan(0x7)", "+nans", "+-nan", "+inf", "+infinity", "+infs",
		"+-inf", "+1e400s", "+1.1e9s", "+1e19", "+1e16ms", "-1s", "+-1s", "1s", "+", "+s",
		"+1.5x", "+1.5 s", "+1e309ms",
	};
	int64_t ns = 42;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(xp_cmd_parse_offset(bad[i], &ns) == -EINVAL, "%s taken as %lld",
			      bad[i], (long long)ns);
	ck_assert_int_eq(ns, 42);
}
END_TEST

/* a received database's start time is any integer: the sum is refused,
 * never wrapped to a time before the run's start */
START_TEST(sum_past_int64_refused)
{
	int64_t t = 0;

	ck_assert_int_eq(xp_cmd_offset_time(1000, 500, &t), 0);
	ck_assert_int_eq(t, 1500);
	ck_assert_int_eq(xp_cmd_offset_time(INT64_MAX - 10, 10, &t), 0);
	ck_assert_int_eq(t, INT64_MAX);
	ck_assert_int_eq(xp_cmd_offset_time(INT64_MAX - 10, 11, &t), -ERANGE);
	ck_assert_int_eq(xp_cmd_offset_time(INT64_MAX, 1000000000000000, &t), -ERANGE);
}
END_TEST

Suite *timearg_suite(void)
{
	Suite *s = suite_create("timearg");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, offsets_parsed);
	tcase_add_test(tc, not_numbers_refused);
	tcase_add_test(tc, sum_past_int64_refused);
	suite_add_tcase(s, tc);
	return s;
}

XP_CHECK_MAIN(timearg_suite)
