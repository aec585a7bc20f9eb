/*
 * cgoptions: the option table as the docs test sees it
 *
 *   cgoptions                     every cg_options[] entry as
 *                                 "name<TAB>default", one per line
 *   cgoptions check NAME VALUE    parse one smb.conf value the way the
 *                                 module does; print the module's error
 *                                 sentence and exit 1 if it is refused
 *
 * testsuite/integration/t05_docs.sh compares the man page and README.md
 * with this output, so the docs cannot drift from the code.
 *
 * Copyright (C) 2026 The vfs_cacheguard authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <stdio.h>
#include <string.h>

#include "cg_options.h"

static int cg_check(const char *name, const char *value)
{
	struct cg_config cfg;
	char err[256];

	cg_config_init(&cfg);
	if (cg_config_set(&cfg, name, value, err, sizeof(err)) != 0 ||
	    cg_config_check(&cfg, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const struct cg_option *o = NULL;

	if (argc == 4 && strcmp(argv[1], "check") == 0) {
		return cg_check(argv[2], argv[3]);
	}
	if (argc != 1) {
		fprintf(stderr, "usage: cgoptions [check NAME VALUE]\n");
		return 2;
	}
	for (o = cg_options; o->name != NULL; o++) {
		printf("%s\t%s\n", o->name, o->def);
	}
	return 0;
}
