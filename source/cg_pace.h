/*
 * vfs_cacheguard engine: a stream's claim on the device
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

#ifndef CG_PACE_H
#define CG_PACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * How many of a stream's reads may be at the device at once
 * (cacheguard:stream pacing), from what they take. The stream's baseline
 * is the least a read of it ever cost (ns per MiB); from its smoothed
 * cost it knows how many of its reads wait in a queue rather than at
 * the device, as TCP Vegas does: window x (1 - baseline / cost). None:
 * the window grows by one after a window's worth of reads; most of one
 * or more: it falls by that many, never below one, which keeps the copy
 * moving. A growth that a fall follows was a probe that failed: the next
 * one waits twice as long (up to CG_PACE_MAX_WAIT reads), so that on a
 * disk that serves one read at a time the stream stays at one (at two,
 * a neighbour's read on mq-deadline can wait for its read_expire). On a
 * device that serves reads side by side (NVMe, a RAID) the cost does not
 * rise with the depth, and the window grows to the device's queues.
 * The baseline never rises: a neighbour that stays keeps the stream at
 * one for good, and streams cannot lift each other's baselines by
 * growing (a baseline that followed the device's cost would let them).
 *
 * Where the device counts its reads (a block device's stat in sysfs),
 * each read also says how many bytes of others the device read while it
 * was out, and that rules instead of the latency: others there, the
 * stream falls to one read at the device at once, sent in pieces of
 * CG_PACE_PIECE (a neighbour's read waits for the piece the device
 * serves, not for the whole fill); none for CG_PACE_CLEAR_NS of reads,
 * it sends whole reads again and grows by one after a window's worth,
 * to its max, as an unpaced stream runs. Where the device's cost is
 * per request rather than per byte (a throttle of IOPS, a cloud volume
 * that counts requests), pieces only slow the stream: a piece twice as
 * large is tried now and then, and kept when the device read 80% faster
 * with it, everybody's bytes counted, or the stream 80% and the device
 * 10% (streams that share a throttle). A stream starts as if others were there: it has not looked yet.
 * A read that came back while others of the process were out cannot
 * tell (CG_DEV_HIDDEN: its count may hold theirs): in pieces the stream
 * waits for one that can; deep, it takes it for nobody, and after
 * CG_PACE_LOOK_NS of such reads it looks: one read out until one comes
 * back alone. Its first read that cannot tell
 * (no count) makes its reads whole, and the latency rules from then on.
 */
struct cg_pace {
	unsigned max;		/* the window at most; 0: not paced */
	unsigned window;	/* reads the stream may have at the device */
	unsigned peak;		/* the most it ever had */
	unsigned inflight;	/* reads it has */
	unsigned credit;	/* reads in a row with none queued */
	unsigned hold;		/* reads to come back before it moves again */
	unsigned wait;		/* credits the next growth needs at least */
	bool probing;		/* it grew, and has not moved since */
	uint64_t cost;		/* smoothed, ns per MiB; 0: no sample */
	uint64_t base;		/* the lowest cost seen; 0: none yet */
	uint64_t cuts, grows;
	/* the device counts others' reads (cg_pace_done's others) */
	size_t piece;		/* bytes per request at once; 0: whole */
	uint64_t clear_ns;	/* reads' time since others were seen */
	uint64_t shared;	/* reads that saw others */
	/* the piece's size, probed (cg_pace.c, "pieces") */
	size_t settled;		/* the size to cut to; 0: CG_PACE_PIECE */
	size_t biggest;		/* the largest read sampled */
	uint64_t psum;		/* the device's cost per MiB, summed */
	uint64_t psum_own;	/* the stream's own, summed */
	unsigned pn;		/* reads summed */
	unsigned pskip;		/* reads to leave out (sent at another) */
	uint64_t pprev;		/* probing: the half size's cost; 0 */
	uint64_t pprev_own;	/* and the stream's own */
	unsigned pwait;		/* rounds the next probe waits */
	unsigned pdue;		/* rounds left before it */
	bool looking;		/* deep: down to one read, to count exactly */
	bool counts;		/* the device counted its last read */
	uint64_t look_ns;	/* reads' time since it last looked */
};

/* A read's piece at the device while others read it, at first */
#define CG_PACE_PIECE (512 * 1024)

/* A deep stream's reads' time between looks (down to one read out) */
#define CG_PACE_LOOK_NS (400 * 1000 * 1000ULL)

/* Reads a piece's size is judged by (a round) */
#define CG_PACE_ROUND 8

/* Others gone this long (the stream's reads' time summed): whole reads */
#define CG_PACE_CLEAR_NS (50 * 1000 * 1000ULL)

/* Credits a growth waits for at most after failed probes */
#define CG_PACE_MAX_WAIT 256

/* Reads smaller than this are counted but not sampled: their cost is
 * the device's per-request one, not its bandwidth */
#define CG_PACE_SAMPLE_MIN (64 * 1024)

/* max 0: never paced (cg_pace_may_start is always true) */
void cg_pace_init(struct cg_pace *p, unsigned max);

/* The stream may send one more read to the device now */
bool cg_pace_may_start(const struct cg_pace *p);

/* It did */
void cg_pace_started(struct cg_pace *p);

/*
 * One came back: it took ns for bytes (0 ns: not sampled); others: the
 * bytes of others the device read meanwhile, -1 where it does not count
 * them (the latency decides), CG_DEV_HIDDEN where the count could not
 * tell (cg_dev.h)
 */
void cg_pace_done(struct cg_pace *p, uint64_t ns, size_t bytes,
		  int64_t others);

/*
 * The device counts others' reads and the stream reads whole: it met
 * nobody for CG_PACE_CLEAR_NS (a request it lacks may read on its own,
 * as unpaced)
 */
bool cg_pace_alone(const struct cg_pace *p);

/* What the stream's next read sends at once; 0: all of it */
size_t cg_pace_piece(const struct cg_pace *p);

/* The stream's baseline, ns per MiB; 0 before a sample */
uint64_t cg_pace_base(const struct cg_pace *p);

#endif
