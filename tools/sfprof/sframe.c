// SPDX-License-Identifier: MIT
/* `sfprof sframe`: the SFrame command group. */
#include "cli.h"

static const struct cli_subcommand sframe_commands[] = {
#define SFP_SFRAME_COMMAND(name, fn, summary) { name, fn, summary },
#include "sframe-commands.def"
#undef SFP_SFRAME_COMMAND
	{ NULL, NULL, NULL },
};

int cmd_sframe(int argc, char **argv)
{
	return cli_dispatch("sframe", sframe_commands, argc, argv);
}
