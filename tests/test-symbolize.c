#include "check-main.h"
Suite *symbolize_suite(void) { Suite *s = suite_create("symbolize"); return s; }
XP_CHECK_MAIN(symbolize_suite)
