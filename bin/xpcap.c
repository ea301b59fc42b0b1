/* xpcap.c - entry point of xpcap: dispatches to the capture commands.
 *   sudo xpcap record -o run/ -- ./app
 */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"

static const struct xp_cmd commands[] = {
	{ "record", cmd_record, "run a command (or attach) and record a run directory" },
	{ NULL, NULL, NULL },
};

int main(int argc, char **argv)
{
	return xp_cmd_dispatch("xpcap", commands, argc, argv);
}
