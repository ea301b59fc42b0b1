#include "check-main.h"
Suite *svg_suite(void) { Suite *s = suite_create("svg"); return s; }
XP_CHECK_MAIN(svg_suite)
