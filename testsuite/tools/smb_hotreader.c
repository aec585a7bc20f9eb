/*
 * smb_hotreader: hotreader through an SMB client (libsmbclient)
 *
 *   smb_hotreader [hotreader options] smb://HOST[:PORT]/SHARE/PATH
 *   smb_hotreader [hotreader options] LOCAL-FILE
 *
 * The same paced, timed random reader as hotreader.c (included below),
 * for scenario B of the benchmark: the hot set is a file on the share,
 * read by a second SMB client while another one copies a large file.
 * Every read is one lseek plus one read on the libsmbclient context, so
 * one request at a time is in flight, as from a single web worker.
 * Credentials come from HOTREADER_USER and HOTREADER_PASS, not the
 * command line. A name without "smb://" is read locally, as hotreader.
 *
 * Copyright (C) 2026 The vfs_cacheguard authors
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct hr_io;
static const struct hr_io *hr_smb_select(const char *name);
#define HR_IO_SELECT hr_smb_select
#include "hotreader.c"

#include <libsmbclient.h>

struct hr_smb {
	SMBCCTX *ctx;
	SMBCFILE *file;
};

static void hr_smb_auth(SMBCCTX *c, const char *server, const char *share,
			char *wg, int wglen, char *user, int userlen,
			char *pass, int passlen)
{
	const char *u = getenv("HOTREADER_USER");
	const char *p = getenv("HOTREADER_PASS");

	snprintf(user, (size_t)userlen, "%s", u != NULL ? u : "guest");
	snprintf(pass, (size_t)passlen, "%s", p != NULL ? p : "");
}

/*
 * smb://HOST:PORT/REST -> smb://HOST/REST and PORT: the port goes to
 * smbc_setPort, which every libsmbclient version honours.
 */
static int hr_smb_split_port(const char *name, char **url, uint16_t *port)
{
	const char *host = name + strlen("smb://");
	const char *slash = strchr(host, '/');
	const char *colon = strchr(host, ':');

	*port = 0;
	if (slash == NULL || colon == NULL || colon > slash) {
		*url = strdup(name);
		return *url == NULL ? ENOMEM : 0;
	}
	*port = (uint16_t)strtoul(colon + 1, NULL, 10);
	if (asprintf(url, "%.*s%s", (int)(colon - name), name, slash) < 0) {
		return ENOMEM;
	}
	return 0;
}

static int hr_smb_connect(struct hr_smb *s, uint16_t port)
{
	s->ctx = smbc_new_context();
	if (s->ctx == NULL) {
		return ENOMEM;
	}
	smbc_setDebug(s->ctx, 0);
	smbc_setFunctionAuthDataWithContext(s->ctx, hr_smb_auth);
	smbc_setOptionUseKerberos(s->ctx, false);
	smbc_setOptionNoAutoAnonymousLogin(s->ctx, true);
	if (port != 0) {
		smbc_setPort(s->ctx, port);
	}
	if (smbc_init_context(s->ctx) == NULL) {
		int err = errno != 0 ? errno : EIO;

		smbc_free_context(s->ctx, 1);
		s->ctx = NULL;
		return err;
	}
	return 0;
}

static int hr_smb_open(const char *name, void **handle, uint64_t *size)
{
	struct hr_smb *s = calloc(1, sizeof(*s));
	struct stat st;
	char *url = NULL;
	uint16_t port = 0;
	int ret;

	if (s == NULL) {
		return ENOMEM;
	}
	ret = hr_smb_split_port(name, &url, &port);
	if (ret == 0) {
		ret = hr_smb_connect(s, port);
	}
	if (ret == 0) {
		s->file = smbc_getFunctionOpen(s->ctx)(s->ctx, url, O_RDONLY,
						       0);
		if (s->file == NULL) {
			ret = errno != 0 ? errno : EIO;
		}
	}
	if (ret == 0 &&
	    smbc_getFunctionFstat(s->ctx)(s->ctx, s->file, &st) != 0) {
		ret = errno != 0 ? errno : EIO;
	}
	free(url);
	if (ret != 0) {
		if (s->ctx != NULL) {
			smbc_free_context(s->ctx, 1);
		}
		free(s);
		return ret;
	}
	*size = (uint64_t)st.st_size;
	*handle = s;
	return 0;
}

static int hr_smb_pread(void *handle, void *buf, size_t len, uint64_t off)
{
	struct hr_smb *s = handle;
	size_t done = 0;

	if (smbc_getFunctionLseek(s->ctx)(s->ctx, s->file, (off_t)off,
					  SEEK_SET) < 0) {
		return errno != 0 ? errno : EIO;
	}
	while (done < len) {
		ssize_t n = smbc_getFunctionRead(s->ctx)(s->ctx, s->file,
							 (char *)buf + done,
							 len - done);
		if (n < 0) {
			return errno != 0 ? errno : EIO;
		}
		if (n == 0) {
			return EIO;
		}
		done += (size_t)n;
	}
	return 0;
}

static void hr_smb_close(void *handle)
{
	struct hr_smb *s = handle;

	smbc_getFunctionClose(s->ctx)(s->ctx, s->file);
	smbc_free_context(s->ctx, 1);
	free(s);
}

static const struct hr_io hr_smb_io = {
	.open = hr_smb_open,
	.pread = hr_smb_pread,
	.close = hr_smb_close,
};

static const struct hr_io *hr_smb_select(const char *name)
{
	if (strncmp(name, "smb://", strlen("smb://")) == 0) {
		return &hr_smb_io;
	}
	return &hr_local_io;
}
