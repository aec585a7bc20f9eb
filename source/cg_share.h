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
/*
 * Whether another stream of the same client reads the file now: each
 * read of this one is then a piece of the client's one scan, which its
 * readahead sends through any of its handles, never a stray
 */
bool cg_share_sibling_active(const struct cg_stream *s);
/*
 * The stream still needs the file from "from" on (no read in flight
 * starts below it): move its claim (once a window), learn whether others
 * read the file, retry kept bytes. True when it has just learned that
 * others do: what the stream makes of that is cg_stream.c's.
 */
bool cg_share_update(struct cg_stream *s, int fd, uint64_t from);
/* DONTNEED [off, end) except what others claim: the lowest byte kept */
uint64_t cg_share_drop(struct cg_stream *s, int fd, uint64_t off,
		       uint64_t end);
/*
 * What streams ahead may have kept for this one that it has not read:
 * the part of its claim past its front, once it has seen another
 */
struct cg_range cg_share_leftover(const struct cg_stream *s);
/*
 * The stream ended: give up its claim. close_it (no reads in flight):
 * drop its leftover first, and close the descriptor
 */
void cg_share_end(struct cg_stream *s, int fd, bool close_it);

#endif /* CG_SHARE_H */
