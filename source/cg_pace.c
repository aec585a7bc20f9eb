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

/*
 * The kernel's io.latency controller and TCP's congestion control do
 * this for their own queues: a read that took longer than the stream's
 * own reads take when nobody else is there says that somebody was, and
 * the stream sends fewer; reads back at the baseline let it send more.
 * Why a window of one, on mq-deadline (this project's virtio disk and
 * most SATA and SCSI disks): a sequential stream with a second request
 * queued always has the next one in sector order, and a neighbour's
 * random read waits behind it until the scheduler's read_expire
 * (500 ms); at one the neighbour's read goes next
 * (docs/benchmarks.md, "What the device's scheduler does with a
 * stream's depth").
 */

#include "cg_dev.h"
#include "cg_pace.h"

#define CG_MIB (1024 * 1024ULL)

void cg_pace_init(struct cg_pace *p, unsigned max)
{
	*p = (struct cg_pace){
		.max = max,
		.window = 1,
		.piece = max != 0 ? CG_PACE_PIECE : 0,
	};
}

bool cg_pace_may_start(const struct cg_pace *p)
{
	return p->max == 0 || p->inflight < (p->looking ? 1 : p->window);
}

void cg_pace_started(struct cg_pace *p)
{
	if (p->max == 0) {
		return;		/* unpaced: nobody counts */
	}
	p->inflight++;
	if (p->inflight > p->peak) {
		p->peak = p->inflight;
	}
}

uint64_t cg_pace_base(const struct cg_pace *p)
{
	return p->base;
}

/* cost of a read, ns per MiB; costs saturate rather than wrap */
static uint64_t cg_pace_cost(uint64_t ns, size_t bytes)
{
	if (ns > UINT64_MAX / CG_MIB) {
		return UINT64_MAX / 2;
	}
	return ns * CG_MIB / bytes;
}

/* The window moved: decide again once the reads sent before are back */
static void cg_pace_moved(struct cg_pace *p)
{
	p->credit = 0;
	p->hold = p->inflight + 2;
}

bool cg_pace_alone(const struct cg_pace *p)
{
	return p->max != 0 && p->counts && p->piece == 0;
}

size_t cg_pace_piece(const struct cg_pace *p)
{
	return p->piece;
}

/*
 * Pieces: on a disk a read in pieces costs about what it costs whole
 * (the bytes cost, a request little), and the neighbour waits for one
 * piece. Under a throttle of requests (blkio's io.max, a cloud volume's
 * IOPS) each piece costs a request's slot, and 512 KiB pieces cut the
 * stream to a slot's worth of them. So after a round at its size the
 * piece tries twice that for a round, and keeps it when the device read
 * 80% faster meanwhile (a MiB cost at most 55% of what it did: near the
 * half that a throttle of requests gives; a disk slow to turn a request
 * round gains 10-60%, not worth a neighbour's wait for the larger
 * piece), everybody's bytes (the stream's and others' over the time its
 * reads took): there requests, not bytes, are dear.
 * Not the stream's own speed alone: beside other streams a larger piece
 * takes a larger share of the same device, which is no gain. But where
 * N streams share a throttle, one that doubles its piece doubles its own
 * speed and the device's by only 1/N: so its own 80% with the device's
 * 10% is a gain too. Else back to the half, and the next try waits twice
 * as many rounds (up to 64).
 */
static void cg_pace_pieces(struct cg_pace *p,
			   uint64_t ns,
			   size_t bytes,
			   uint64_t others)
{
	uint64_t c, own;
	bool gain;

	if (p->pskip > 0) {
		p->pskip--;	/* sent before the size changed */
		return;
	}
	if (bytes < p->piece || bytes < CG_PACE_SAMPLE_MIN) {
		return;
	}
	if (bytes > p->biggest) {
		p->biggest = bytes;
	}
	p->psum += cg_pace_cost(ns, bytes + others);
	p->psum_own += cg_pace_cost(ns, bytes);
	if (++p->pn < CG_PACE_ROUND) {
		return;
	}
	c = p->psum / p->pn;
	own = p->psum_own / p->pn;
	p->psum = 0;
	p->psum_own = 0;
	p->pn = 0;
	if (p->pprev != 0) {
		gain = c * 20 <= p->pprev * 11 ||
		       (own * 20 <= p->pprev_own * 11 &&
			c * 10 <= p->pprev * 9);
		if (!gain) {
			p->piece /= 2;
			p->pwait = p->pwait == 0 ? 4 : 2 * p->pwait;
			if (p->pwait > 64) {
				p->pwait = 64;
			}
		} else {
			p->pwait = 0;
		}
		p->settled = p->piece;
		p->pprev = 0;
		p->pdue = p->pwait;
		p->pskip = 1;
		return;
	}
	if (p->pdue > 0) {
		p->pdue--;
		return;
	}
	if (2 * p->piece > p->biggest) {
		return;		/* already as large as its reads */
	}
	p->pprev = c;
	p->pprev_own = own;
	p->piece *= 2;
	p->pskip = 1;
}

/* A read with nobody else: one more after a window's worth */
static void cg_pace_credit(struct cg_pace *p)
{
	if (++p->credit < p->window || p->window == p->max) {
		return;
	}
	p->window++;
	p->grows++;
	p->credit = 0;
}

/*
 * A read whose count could not tell: in pieces, nothing learnt; deep,
 * taken for nobody, and now and then the stream looks (one read out,
 * until one comes back with none of ours out)
 */
static void cg_pace_hidden(struct cg_pace *p, uint64_t ns)
{
	if (p->piece != 0) {
		return;
	}
	if (p->looking) {
		if (p->inflight == 0) {
			p->looking = false;	/* others of ours still out */
		}
		return;
	}
	cg_pace_credit(p);
	p->look_ns += ns;
	if (p->look_ns >= CG_PACE_LOOK_NS) {
		p->looking = true;
		p->look_ns = 0;
	}
}

/*
 * The device told who else read it: others there, one read in pieces;
 * gone for CG_PACE_CLEAR_NS, whole reads, one more after a window's
 * worth of them
 */
static void cg_pace_counted(struct cg_pace *p,
			    uint64_t ns,
			    size_t bytes,
			    int64_t others)
{
	if (others == CG_DEV_HIDDEN) {
		cg_pace_hidden(p, ns);
		return;
	}
	p->looking = false;
	p->look_ns = 0;
	if (others > 0) {
		p->shared++;
		p->clear_ns = 0;
		p->credit = 0;
		if (p->window > 1 || p->piece == 0) {
			p->cuts++;
		}
		p->window = 1;
		if (p->piece == 0) {
			p->piece = p->settled != 0 ? p->settled
						   : CG_PACE_PIECE;
			p->pskip = 1;
			p->pn = 0;
			p->psum = 0;
			p->psum_own = 0;
			p->pprev = 0;
			return;
		}
		cg_pace_pieces(p, ns, bytes, (uint64_t)others);
		return;
	}
	if (p->piece != 0) {
		cg_pace_pieces(p, ns, bytes, 0);
		p->clear_ns += ns;
		if (p->clear_ns < CG_PACE_CLEAR_NS) {
			return;
		}
		p->piece = 0;
	}
	cg_pace_credit(p);
}

void cg_pace_done(struct cg_pace *p, uint64_t ns, size_t bytes,
		  int64_t others)
{
	uint64_t cost;
	uint64_t q4;	/* reads queued, in quarters */

	if (p->inflight > 0) {
		p->inflight--;
	}
	if (p->max == 0 || ns == 0) {
		return;
	}
	if (others >= 0 || others == CG_DEV_HIDDEN) {
		p->counts = true;
		cg_pace_counted(p, ns, bytes, others);
		return;
	}
	p->counts = false;
	p->piece = 0;	/* nothing tells: whole reads, the latency rules */
	if (bytes < CG_PACE_SAMPLE_MIN) {
		return;
	}
	cost = cg_pace_cost(ns, bytes);
	if (p->base == 0 || cost < p->base) {
		p->base = cost;
	}
	p->cost = p->cost == 0 ? cost : (3 * p->cost + cost) / 4;
	if (p->hold > 0) {
		p->hold--;
		return;
	}
	q4 = p->cost <= p->base ? 0
	     : 4 * (uint64_t)p->window * (p->cost - p->base) / p->cost;
	if (q4 >= 3) {
		unsigned fall = q4 / 4 > 1 ? (unsigned)(q4 / 4) : 1;

		if (p->window > 1) {
			p->window = fall < p->window ? p->window - fall : 1;
			p->cuts++;
			if (p->probing) {
				p->wait = p->wait == 0 ? 4 : 2 * p->wait;
				if (p->wait > CG_PACE_MAX_WAIT) {
					p->wait = CG_PACE_MAX_WAIT;
				}
			}
			p->probing = false;
			cg_pace_moved(p);
		}
		p->credit = 0;
		return;
	}
	if (q4 > 1) {
		p->credit = 0;	/* some queued: the window holds */
		return;
	}
	if (++p->credit < p->window || p->credit < p->wait ||
	    p->window == p->max) {
		return;
	}
	if (p->probing) {
		p->wait = 0;	/* the last growth held */
	}
	p->window++;
	p->grows++;
	p->probing = true;
	cg_pace_moved(p);
}
