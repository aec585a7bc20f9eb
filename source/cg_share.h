/*
 * vfs_cacheguard engine: streams of one file in several processes
 *
 * Copyright (C) 2026 The vfs_cacheguard authors
 *
 * This program is free software; you can redistribute it and/or modify
 * it under the terms of the GNU General Public License as published by
 * the Free Software Foundation; either version 3 of the License, or
 * (at your option) any later version.
 *
 * This program is distributed in the hope that it will be useful,
 * but WITHOUT ANY WARRANTY; without even the implied warranty of
 * MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
 * GNU General Public License for more details.
 *
 * You should have received a copy of the GNU General Public License
 * along with this program.  If not, see <http://www.gnu.org/licenses/>.
 */

#ifndef CG_SHARE_H
#define CG_SHARE_H

#include "cg_stream.h"

struct cg_sys;

/* The slot of the file dev, ino in the stream file: cg_stream.share.slot */
uint64_t cg_share_slot(uint64_t dev, uint64_t ino);

/* An active stream joins the file's streams */
void cg_share_begin(struct cg_stream *s);
/* Whether a sibling (same client) streams the file: then no stray */
bool cg_share_sibling_active(const struct cg_stream *s);
/*
 * The stream needs the file from "from" on: move its claim (once a
 * window), retry kept bytes; true when it just learned others read it
 */
bool cg_share_update(struct cg_stream *s, int fd, uint64_t from);
/* DONTNEED [off, end) except what others claim: the lowest byte kept */
uint64_t cg_share_drop(struct cg_stream *s, int fd, uint64_t off, uint64_t end);
/* Its claim past its front, which others may have kept, once it met one */
struct cg_range cg_share_leftover(const struct cg_stream *s);
/* Give up its claim; close_it: drop its leftover and close the fd */
void cg_share_end(struct cg_stream *s, int fd, bool close_it);

#endif /* CG_SHARE_H */
