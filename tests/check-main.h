/* check-main.h - one Check suite per test program:
 *   Suite *runfile_suite(void) { ... }
 *   XP_CHECK_MAIN(runfile_suite)
 * Each suite is its own meson test, so failures name their module. */
#ifndef XP_CHECK_MAIN_H
#define XP_CHECK_MAIN_H

#include <check.h>
#include <stdlib.h>

#define XP_CHECK_MAIN(suite_fn)                                          \
	int main(void)                                                   \
	{                                                                \
		SRunner *sr = srunner_create(suite_fn());                \
		int failed;                                              \
		srunner_run_all(sr, CK_NORMAL);                          \
		failed = srunner_ntests_failed(sr);                      \
		srunner_free(sr);                                        \
		return failed ? EXIT_FAILURE : EXIT_SUCCESS;             \
	}

#endif
