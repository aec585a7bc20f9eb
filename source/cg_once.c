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

#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* pthread_mutex_clocklock */
#endif

#include <time.h>

#include "cg_once.h"
#include "cg_util.h"

int cg_once_init(struct cg_once *o)
{
	o->ran = false;
	o->started_ns = 0;
	return pthread_mutex_init(&o->lock, NULL);
}

void cg_once_destroy(struct cg_once *o)
{
	pthread_mutex_destroy(&o->lock);
}

bool cg_once_try(struct cg_once *o, void (*fn)(void *arg), void *arg)
{
	if (pthread_mutex_trylock(&o->lock) != 0) {
		return false;
	}
	if (!o->ran) {
		__atomic_store_n(&o->started_ns, cg_now_ns(),
				 __ATOMIC_RELEASE);
		fn(arg);
		o->ran = true;
	}
	pthread_mutex_unlock(&o->lock);
	return true;
}

uint64_t cg_once_started(const struct cg_once *o)
{
	return __atomic_load_n(&o->started_ns, __ATOMIC_ACQUIRE);
}

bool cg_once_wait(struct cg_once *o, uint64_t deadline_ns)
{
	struct timespec until;
	bool ran;

	if (deadline_ns <= cg_now_ns()) {
		return false;
	}
	until = (struct timespec){
		.tv_sec = (time_t)(deadline_ns / 1000000000),
		.tv_nsec = (long)(deadline_ns % 1000000000),
	};
	if (pthread_mutex_clocklock(&o->lock, CLOCK_MONOTONIC, &until) != 0) {
		return false;
	}
	ran = o->ran;
	pthread_mutex_unlock(&o->lock);
	return ran;
}
