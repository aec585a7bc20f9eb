#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# cacheguard:stream ioprio (issue 28): the I/O a stream's own jobs issue
# carries the share's priority, and nothing else does. One 64 MiB get
# per share under strace (ioprio_set, pread64, preadv2 of every smbd
# thread): on a direct share with "idle" the O_DIRECT reads of the pool
# threads are issued while the thread is in the idle class, and each
# thread gets its own priority back after; on a dontcache share with
# "low" the uncached reads are at best-effort 7; the same on the
# synchronous read path (aio read size = 0), where smbd's own thread
# reads; a share without the option makes no ioprio_set call. Whether the device's scheduler
# honours it is the benchmark's question (make bench, scenarios D, E).
. "$(dirname "$0")/../lib/script.sh" "stream I/O priority" "$@"
cg_need_command "stream I/O priority" strace \
	"no strace (make deps installs it)"

SIZE=$((64 * MiB))

cg_smbd_init
cg_share direct_idle "vfs objects = cacheguard" "cacheguard:mode = direct" \
	"cacheguard:stream ioprio = idle"
cg_share direct_none "vfs objects = cacheguard" "cacheguard:mode = direct"
cg_share dontcache_low "vfs objects = cacheguard" \
	"cacheguard:mode = dontcache" "cacheguard:stream ioprio = low"
cg_share dontcache_low_sync "vfs objects = cacheguard" \
	"cacheguard:mode = dontcache" "cacheguard:stream ioprio = low" \
	"aio read size = 0"
cg_share direct_idle_sync "vfs objects = cacheguard" \
	"cacheguard:mode = direct" "cacheguard:stream ioprio = idle" \
	"aio read size = 0"
cg_smbd_start || { cg_fail "smbd starts" "see above"; exit 1; }
head -c "$SIZE" /dev/urandom >"$CG_SHARE/big.bin"
chmod 0644 "$CG_SHARE/big.bin"

# traced SHARE: a cold get of big.bin from SHARE under strace; the trace
# in $CG_ROOT/strace.SHARE
traced()
{
	cg_traced_get "$1" big.bin -e trace=ioprio_set,pread64,preadv2
}

# read_in CLASS SHARE: "IN OTHER SETS RESTORES": bytes read while the
# reading thread was in CLASS (strace's IOPRIO_CLASS_IDLE, ..._BE, 7),
# bytes read otherwise, ioprio_set calls into CLASS and out of it
read_in()
{
	awk -v class="$1" '
	{ tid = $1 }
	/ioprio_set\(/ {
		if (index($0, class)) { in_class[tid] = 1; sets++ }
		else { in_class[tid] = 0; restores++ }
		next
	}
	# a read, or its end where another thread interrupted its line
	/(pread64|preadv2)[( ].* = [0-9]+$/ {
		n = $NF
		if (in_class[tid]) inside += n; else other += n
	}
	END { printf "%d %d %d %d\n", inside, other, sets, restores }' \
		"$CG_ROOT/strace.$2"
}

# in_class SHARE CLASS WHAT: a get from SHARE reads (almost) all of the
# file while the reading thread is in CLASS (strace's words), and every
# thread that entered it left it again
in_class()
{
	local inside other sets restores

	traced "$1"
	read -r inside other sets restores <<<"$(read_in "$2" "$1")"
	echo "$1: $inside bytes read at $3, $other outside;" \
		"$sets sets, $restores restores"
	cg_expect_ge "[$1] the stream's reads are at $3" \
		"$inside" $((SIZE * 9 / 10))
	cg_expect "[$1] every thread gets its priority back ($sets/$restores)" \
		test "$sets" -gt 0 -a "$sets" = "$restores"
}

in_class direct_idle "IOPRIO_CLASS_IDLE, 0" "the idle class"
in_class dontcache_low "IOPRIO_CLASS_BE, 7" "best-effort 7"
in_class dontcache_low_sync "IOPRIO_CLASS_BE, 7" "best-effort 7"
in_class direct_idle_sync "IOPRIO_CLASS_IDLE, 0" "the idle class"

traced direct_none
cg_expect "[direct_none] without the option, no ioprio_set call" \
	test "$(grep -c 'ioprio_set(' "$CG_ROOT/strace.direct_none")" = 0
