/*
 * vfs_cacheguard engine: the prefetch segment table of direct streams,
 * and direct mode's buffers on transparent huge pages
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
 * No I/O and no threads here: the glue starts the reads and reports
 * their end. A segment is one slot of the buffer. While its read is in
 * flight (LOADING) or a HIT is copied out (pinned), a thread uses the
 * slot, which is never handed out again until that is reported; a write
 * meanwhile marks it stale, and it is freed at the last report.
 *
 * A READY segment was read under a settled version (cg_prefetch.h): a
 * change after the fill's fstat() has a later ctime and so drops it; a
 * change before it is in the bytes read (the inode lock covers a buffered
 * write, and an O_DIRECT read writes back dirty pages first). A short
 * segment ends at end of file, which the version check keeps true.
 */

#define _GNU_SOURCE	/* MADV_DONTFORK, MADV_HUGEPAGE */
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#include "cg_prefetch.h"
#include "cg_sys.h"
#include "cg_util.h"

static uint64_t cg_div_up(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

void cg_prefetch_init(struct cg_prefetch *pf, uint64_t ahead, size_t align)
{
	size_t seg = CG_PREFETCH_SEG;

	*pf = (struct cg_prefetch){.ahead = ahead};
	if (ahead == 0) {
		return;
	}
	/* At least four segments, so that several reads overlap */
	while (seg > CG_PREFETCH_MIN_SEG && ahead < 4 * (uint64_t)seg) {
		seg /= 2;
	}
	if (cg_is_pow2(align) && align > seg) {
		seg = align;
	}
	while (cg_div_up(ahead, seg) > CG_PREFETCH_MAX_SEGS) {
		seg *= 2;
	}
	pf->seg_size = seg;
	pf->nseg = (unsigned)cg_div_up(ahead, seg);
}

size_t cg_prefetch_align(uint64_t ahead, size_t align, uint64_t max_request)
{
	size_t seg = CG_MAX(align, CG_HUGE_PAGE);

	while (seg < max_request && 2 * seg <= CG_PREFETCH_DEV_SEG &&
	       4 * (uint64_t)seg <= ahead) {
		seg *= 2;
	}
	return seg;
}

size_t cg_prefetch_memory(const struct cg_prefetch *pf)
{
	return pf->seg_size * pf->nseg;
}

/*
 * A client with inflight reads outstanding waits on inflight * max_read
 * below the front; the table covers that and two reads past it, since a
 * slot frees only as the client sends its next read. At most most bytes,
 * so a few deep streams cannot take a shared budget.
 */
unsigned cg_prefetch_wanted(const struct cg_prefetch *pf,
			    unsigned inflight,
			    uint64_t most)
{
	uint64_t want;
	uint64_t nseg;

	if (pf->nseg == 0) {
		return 0;	/* prefetch is off */
	}
	want = (uint64_t)pf->max_read * ((uint64_t)inflight + 2);
	want = CG_MIN(want, most);
	nseg = CG_MIN(cg_div_up(want, pf->seg_size), CG_PREFETCH_MAX_SEGS);
	return nseg > pf->nseg ? (unsigned)nseg : pf->nseg;
}

/* Slots from nseg on are still free: nothing touches them (see init) */
void cg_prefetch_grow(struct cg_prefetch *pf, unsigned nseg)
{
	if (pf->nseg == 0 || nseg <= pf->nseg || nseg > CG_PREFETCH_MAX_SEGS) {
		return;
	}
	pf->nseg = nseg;
	pf->ahead = CG_MAX(pf->ahead, cg_prefetch_memory(pf));
}

/* Requests this far behind the front still belong to the stream */
static uint64_t cg_pf_reorder(const struct cg_prefetch *pf)
{
	return pf->ahead + pf->seg_size;
}

void cg_prefetch_note_read(struct cg_prefetch *pf, uint64_t off, size_t n)
{
	uint64_t end = n > UINT64_MAX - off ? UINT64_MAX : off + n;

	pf->max_read = CG_MAX(pf->max_read, n);
	if (end > pf->front || pf->front - end > cg_pf_reorder(pf)) {
		pf->front = end;
	}
}

/* The segment holding file offset pos, or -1; a stale READY one holds none */
static int cg_pf_find(const struct cg_prefetch *pf, uint64_t pos)
{
	unsigned i;

	for (i = 0; i < pf->nseg; i++) {
		const struct cg_pf_seg *s = &pf->seg[i];

		if (s->state != CG_PF_FREE &&
		    !(s->state == CG_PF_READY && s->stale) && pos >= s->off &&
		    pos - s->off < pf->seg_size) {
			return (int)i;
		}
	}
	return -1;
}

int cg_pf_version_now(int fd, struct cg_pf_version *v)
{
	struct timespec now;
	struct stat st;

	clock_gettime(CLOCK_REALTIME_COARSE, &now);
	if (fstat(fd, &st) != 0) {
		return -1;
	}
	*v = (struct cg_pf_version){
		.ctime_ns = (uint64_t)st.st_ctim.tv_sec * 1000000000 +
			    (uint64_t)st.st_ctim.tv_nsec,
		.size = (uint64_t)st.st_size,
		.clock_ns = (uint64_t)now.tv_sec * 1000000000 +
			    (uint64_t)now.tv_nsec,
	};
	return 0;
}

/* Note the clock of version v; hold fills back while it is not settled */
static bool cg_pf_note_version(struct cg_prefetch *pf,
			       const struct cg_pf_version *v)
{
	uint64_t margin = v->ctime_ns % 1000000000 == 0 ? CG_PF_COARSE_TS_NS
							: CG_PF_TICK_NS;
	/* The clock from which any later change gets a ctime other than v's */
	uint64_t settles = v->ctime_ns > UINT64_MAX - margin
				   ? UINT64_MAX
				   : v->ctime_ns + margin;

	pf->clock_ns = CG_MAX(pf->clock_ns, v->clock_ns);
	if (v->clock_ns >= settles) {
		return true;	/* served until the version changes */
	}
	pf->hold_ns = CG_MAX(pf->hold_ns, settles);
	return false;
}

/* A READY segment is stale only while pinned: the last unpin frees it */
static void cg_pf_discard(struct cg_prefetch *pf, struct cg_pf_seg *s)
{
	if (s->state == CG_PF_READY && !s->stale) {
		pf->discarded++;
	}
	if (s->state == CG_PF_READY && s->pins == 0) {
		*s = (struct cg_pf_seg){.state = CG_PF_FREE};
	} else if (s->state != CG_PF_FREE) {
		/* a thread still writes the slot or copies out of it */
		s->stale = true;
	}
}

/* The file as v saw it is the file as now sees it */
static bool cg_pf_version_same(const struct cg_pf_version *v,
			       const struct cg_pf_version *now)
{
	return v->ctime_ns == now->ctime_ns && v->size == now->size;
}

void cg_prefetch_validate(struct cg_prefetch *pf,
			  const struct cg_pf_version *now)
{
	unsigned i;

	cg_pf_note_version(pf, now);
	for (i = 0; i < pf->nseg; i++) {
		struct cg_pf_seg *s = &pf->seg[i];

		if (s->state == CG_PF_READY && !s->stale &&
		    !cg_pf_version_same(&s->ver, now)) {
			cg_pf_discard(pf, s);
		}
	}
}

enum cg_pf_lookup cg_prefetch_lookup(const struct cg_prefetch *pf,
				     uint64_t off,
				     size_t n,
				     size_t *avail)
{
	uint64_t pos = off;
	uint64_t end;
	bool pending = false;

	if (n > UINT64_MAX - off) {
		return CG_PF_MISS;
	}
	end = off + n;
	while (pos < end) {
		int i = cg_pf_find(pf, pos);
		const struct cg_pf_seg *s = NULL;

		if (i < 0) {
			return CG_PF_MISS;
		}
		s = &pf->seg[i];
		if (s->state == CG_PF_LOADING) {
			pending = true;
			pos = s->off + pf->seg_size;
			continue;
		}
		pos = CG_MAX(pos, CG_MIN(end, s->off + s->len));
		if (s->len < pf->seg_size) {
			break;	/* end of file inside this segment */
		}
	}
	if (pending) {
		return CG_PF_PENDING;
	}
	*avail = (size_t)(pos - off);
	return CG_PF_HIT;
}

unsigned cg_prefetch_pin(struct cg_prefetch *pf,
			 uint64_t off,
			 size_t n,
			 struct cg_pf_piece *pieces,
			 unsigned max)
{
	uint64_t pos = off;
	uint64_t end = n > UINT64_MAX - off ? UINT64_MAX : off + n;
	unsigned np = 0;

	while (pos < end && np < max) {
		int i = cg_pf_find(pf, pos);
		struct cg_pf_seg *s = NULL;
		size_t chunk;

		if (i < 0 || pf->seg[i].state != CG_PF_READY) {
			break;
		}
		s = &pf->seg[i];
		/* EOF inside it: a piece of no bytes, its version checks EOF */
		chunk = (size_t)(CG_MAX(pos, CG_MIN(end, s->off + s->len)) -
				 pos);
		pieces[np++] = (struct cg_pf_piece){
			.slot = (unsigned)i,
			.from = (size_t)i * pf->seg_size +
				(size_t)(pos - s->off),
			.len = chunk,
			.ver = s->ver,
		};
		s->pins++;
		pos += chunk;
		if (chunk == 0 || s->len < pf->seg_size) {
			break;
		}
	}
	return np;
}

bool cg_prefetch_pieces_current(const struct cg_pf_piece *pieces,
				unsigned np,
				const struct cg_pf_version *now)
{
	unsigned i;

	for (i = 0; i < np; i++) {
		if (!cg_pf_version_same(&pieces[i].ver, now)) {
			return false;
		}
	}
	return true;
}

size_t cg_prefetch_copy_pieces(const struct cg_sys *sys,
			       const uint8_t *mem,
			       const struct cg_pf_piece *pieces,
			       unsigned np,
			       uint8_t *dst)
{
	size_t done = 0;
	unsigned i;

	for (i = 0; i < np; i++) {
		cg_sys_copy(sys, dst + done, mem + pieces[i].from,
			    pieces[i].len);
		done += pieces[i].len;
	}
	return done;
}

void cg_prefetch_unpin(struct cg_prefetch *pf,
		       const struct cg_pf_piece *pieces,
		       unsigned np,
		       bool copied)
{
	unsigned i;

	for (i = 0; i < np; i++) {
		/* from cg_prefetch_pin: READY until its last unpin */
		struct cg_pf_seg *s = &pf->seg[pieces[i].slot];

		s->pins--;
		if (copied && !s->stale) {
			s->used += pieces[i].len;
		}
		if (s->pins == 0 && (s->stale || s->used >= s->len)) {
			/* all of it went out, or it may be stale: free it */
			*s = (struct cg_pf_seg){.state = CG_PF_FREE};
		}
	}
}

/*
 * A slot for a new segment: a free one, else the lowest unpinned READY
 * segment outside [lo, hi) (behind every request that may want it, or
 * beyond the window). Never a LOADING one: a thread writes into it.
 */
static int cg_pf_slot(struct cg_prefetch *pf, uint64_t lo, uint64_t hi)
{
	int best = -1;
	unsigned i;

	for (i = 0; i < pf->nseg; i++) {
		const struct cg_pf_seg *s = &pf->seg[i];
		bool outside = s->off + pf->seg_size <= lo || s->off >= hi;

		if (s->state == CG_PF_FREE) {
			return (int)i;
		}
		if (s->state == CG_PF_READY && s->pins == 0 && outside &&
		    (best < 0 || s->off < pf->seg[best].off)) {
			best = (int)i;
		}
	}
	return best;
}

bool cg_prefetch_next_fill(struct cg_prefetch *pf,
			   uint64_t file_size,
			   uint64_t keep,
			   unsigned *slot,
			   uint64_t *off,
			   size_t *len)
{
	uint64_t limit;
	uint64_t lo;
	uint64_t o;
	int i;

	/* Requests larger than the table are never a HIT: no fills for them */
	if (pf->nseg == 0 || pf->max_read > cg_prefetch_memory(pf) ||
	    pf->clock_ns < pf->hold_ns) {
		return false;
	}
	limit = pf->ahead > UINT64_MAX - pf->front ? UINT64_MAX
						   : pf->front + pf->ahead;
	limit = CG_MIN(limit, file_size);
	lo = pf->front > cg_pf_reorder(pf) ? pf->front - cg_pf_reorder(pf) : 0;
	lo = CG_MIN(lo, keep);
	/* The first segment up to limit not loaded, LOADING in a slot */
	for (o = pf->front - pf->front % pf->seg_size; o < limit;
	     o += pf->seg_size) {
		if (cg_pf_find(pf, o) >= 0) {
			continue;
		}
		i = cg_pf_slot(pf, lo, limit);
		if (i < 0) {
			return false;
		}
		pf->seg[i] = (struct cg_pf_seg){
			.state = CG_PF_LOADING,
			.off = o,
		};
		pf->fills++;
		*slot = (unsigned)i;
		*off = o;
		*len = pf->seg_size;
		return true;
	}
	return false;
}

void cg_prefetch_filled(struct cg_prefetch *pf,
			unsigned slot,
			ssize_t got,
			const struct cg_pf_version *ver)
{
	/* LOADING since cg_prefetch_next_fill: only this report ends it */
	struct cg_pf_seg *s = &pf->seg[slot];
	bool settled = cg_pf_note_version(pf, ver);

	if (s->stale || got < 0 || !settled) {
		pf->discarded += s->stale ? 1 : 0;
		pf->unsettled += !s->stale && got >= 0 ? 1 : 0;
		*s = (struct cg_pf_seg){.state = CG_PF_FREE};
		return;
	}
	s->state = CG_PF_READY;
	s->len = CG_MIN((size_t)got, pf->seg_size);
	s->used = 0;
	s->ver = *ver;
}

void cg_prefetch_invalidate(struct cg_prefetch *pf, uint64_t off, uint64_t n)
{
	uint64_t end = n > UINT64_MAX - off ? UINT64_MAX : off + n;
	unsigned i;

	if (n == 0) {
		return;
	}
	for (i = 0; i < pf->nseg; i++) {
		struct cg_pf_seg *s = &pf->seg[i];
		bool overlap = off < s->off + pf->seg_size && end > s->off;
		/* a write past a segment's end of file moves the end */
		bool grows = s->state == CG_PF_READY &&
			     s->len < pf->seg_size && end > s->off + s->len;

		if (s->state != CG_PF_FREE && (overlap || grows)) {
			cg_pf_discard(pf, s);
		}
	}
}

void cg_prefetch_reset(struct cg_prefetch *pf)
{
	cg_prefetch_invalidate(pf, 0, UINT64_MAX);
}

void *cg_buf_map(size_t len)
{
	void *p = mmap(NULL, (len > 0 ? len : 1), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		return NULL;
	}
	/* never in a child of smbd: an O_DIRECT read may be in flight */
	(void)madvise(p, (len > 0 ? len : 1), MADV_DONTFORK);
	return p;
}

/* The pages are faulted in by the fills' O_DIRECT reads, in the pool */
void *cg_buf_reserve(size_t reserve, size_t used)
{
	size_t len = reserve + CG_HUGE_PAGE;
	uint8_t *p = mmap(NULL, len, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uint8_t *a = NULL;

	if (p == MAP_FAILED) {
		return NULL;
	}
	a = (uint8_t *)(((uintptr_t)p + CG_HUGE_PAGE - 1) &
			~((uintptr_t)CG_HUGE_PAGE - 1));
	if (a > p) {
		munmap(p, (size_t)(a - p));
	}
	/* a - p < CG_HUGE_PAGE: some of the mapping lies past the reserve */
	munmap(a + reserve, (size_t)(p + len - (a + reserve)));
#ifdef MADV_HUGEPAGE
	(void)madvise(a, reserve, MADV_HUGEPAGE);
#endif
	(void)madvise(a, reserve, MADV_DONTFORK);
	if (mprotect(a, used, PROT_READ | PROT_WRITE) != 0) {
		munmap(a, reserve);
		return NULL;
	}
	return a;
}

bool cg_buf_commit(void *p, size_t off, size_t len)
{
	return mprotect((uint8_t *)p + off, len, PROT_READ | PROT_WRITE) == 0;
}

void cg_buf_unmap(void *p, size_t len)
{
	if (p != NULL) {
		munmap(p, (len > 0 ? len : 1));
	}
}
