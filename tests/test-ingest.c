#include "check-main.h"
Suite *ingest_suite(void) { Suite *s = suite_create("ingest"); return s; }
XP_CHECK_MAIN(ingest_suite)
