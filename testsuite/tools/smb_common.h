/*
 * What the libsmbclient test tools share: -p PORT, -U USER%PASS and a
 * context that logs in with them.
 *
 * Copyright (C) 2026 The vfs_cacheguard authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef SMB_COMMON_H
#define SMB_COMMON_H

#include <errno.h>
#include <libsmbclient.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The test smbd's account (testsuite/lib/smbd.sh) unless -U says else */
static char *smbt_user = "root";
static char *smbt_pass = "cacheguard";

static void smbt_auth(SMBCCTX *c,
		      const char *srv,
		      const char *shr,
		      char *wg,
		      int wglen,
		      char *un,
		      int unlen,
		      char *pw,
		      int pwlen)
{
	snprintf(un, unlen, "%s", smbt_user);
	snprintf(pw, pwlen, "%s", smbt_pass);
}

/* -U USER%PASS */
static void smbt_set_user(const char *arg)
{
	char *pct = NULL;

	smbt_user = strdup(arg);
	pct = smbt_user != NULL ? strchr(smbt_user, '%') : NULL;
	if (pct != NULL) {
		*pct = '\0';
		smbt_pass = pct + 1;
	}
}

/*
 * The options the tools share: -p PORT and -U USER%PASS, and -s SEED
 * (the seed of random()) where seed is not NULL. True when getopt's opt
 * is one of them (its optarg taken), false for the tool's own.
 */
static bool smbt_option(int opt, int *port, unsigned *seed)
{
	switch (opt) {
	case 'p':
		*port = atoi(optarg);
		return true;
	case 'U':
		smbt_set_user(optarg);
		return true;
	case 's':
		if (seed == NULL) {
			return false;
		}
		*seed = (unsigned)strtoul(optarg, NULL, 0);
		return true;
	default:
		return false;
	}
}

/* A context logged in as smbt_user on port; NULL and a message on error */
static SMBCCTX *smbt_connect(int port)
{
	SMBCCTX *ctx = smbc_new_context();

	if (ctx == NULL) {
		fprintf(stderr, "smbc_new_context: %s\n", strerror(errno));
		return NULL;
	}
	smbc_setFunctionAuthDataWithContext(ctx, smbt_auth);
	smbc_setPort(ctx, port);
	if (smbc_init_context(ctx) == NULL) {
		fprintf(stderr, "smbc_init_context: %s\n", strerror(errno));
		smbc_free_context(ctx, 1);
		return NULL;
	}
	return ctx;
}

#endif /* SMB_COMMON_H */
