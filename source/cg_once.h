/*
 * vfs_cacheguard engine: a job that runs once, in whichever thread comes
 * first, and is waited for until it is overdue
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

#ifndef CG_ONCE_H
#define CG_ONCE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * A direct stream's job runs in a thread of smbd's pool, or on smbd's
 * main thread when the synchronous path needs its bytes first: whoever
 * comes first runs it (cg_once_try), never twice. Who comes second while
 * it runs waits for it, but only until a deadline (cg_once_wait): a
 * synchronous read must never block much longer than a plain pread of
 * its bytes, so a job overdue is left to its thread and the caller reads
 * on its own. The mutex is the only synchronisation: no condition
 * variable, and the monotonic clock, so that setting the wall clock
 * neither stretches a wait nor cuts it.
 */
struct cg_once {
	pthread_mutex_t lock;	/* held while it runs */
	bool ran;		/* under lock */
	uint64_t started_ns;	/* atomic; CLOCK_MONOTONIC, 0: not yet */
};

/* 0, or an errno value */
int cg_once_init(struct cg_once *o);
void cg_once_destroy(struct cg_once *o);

/*
 * Run fn(arg) unless it ran or runs. True once it has run, here or
 * before; false while another thread runs it.
 */
bool cg_once_try(struct cg_once *o, void (*fn)(void *arg), void *arg);

/* When a thread started running it (cg_now_ns); 0: not yet */
uint64_t cg_once_started(const struct cg_once *o);

/*
 * Another thread runs it: wait until it is done, or until deadline_ns
 * (cg_now_ns) at most. True once it has run; false at the deadline,
 * or at once when the deadline has passed.
 */
bool cg_once_wait(struct cg_once *o, uint64_t deadline_ns);

#endif
