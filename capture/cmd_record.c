/* cmd_record.c - placeholder until the capture issue lands. */
#include <stdio.h>
#include "cmd.h"

int cmd_record(int argc, char **argv)
{
	(void)argc; (void)argv;
	fprintf(stderr, "xpcap record: not built yet\n");
	return XP_EXIT_FAIL;
}
