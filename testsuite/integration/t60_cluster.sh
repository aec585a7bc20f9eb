#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Clustered Samba (issue 27): three CTDB nodes of Debian's ctdb on this
# machine (testsuite/lib/cluster.sh), each with its own smbd
# (clustering = yes) and the module stacked with fileid over one shared
# directory, as clustered shares are. Every mode:
#  a. a copy through every node at once, each node its own file (the
#     nodes share this machine's page cache): bytes right; each node's
#     log has its file's summary, one stream on the mode's path; each
#     file within t20's bound after; each node's lock files in its own
#     state directory.
#  b. a client that moves: a copy through node 0 whose smbd process is
#     killed part way, resumed from the same offset through node 1
#     (smbclient's reget): node 1 sees a stream that starts in the
#     middle of the file, serves it on the mode's path, within the
#     bound; the bytes are right.
# The module's lock files (budget, streams, readahead) are each node's
# own: in its state directory, and where nodes 1 and 2 have theirs on
# the shared directory by mistake (one FUSE mount of it, whose locks
# both see, as a cluster filesystem's), in a directory per node there,
# which each logs at level 0. So, between nodes 1 and 2:
#  c. a direct stream paused on node 1 holds all of node 1's direct
#     memory: node 1 reads another file in the next mode, node 2
#     direct.
#  d. a dontcache stream paused on node 1 claims what it will read: a
#     second reader of the file on node 1 reads through the cache for
#     it, one on node 2 does not (the nodes' page caches are their own).
set -u
. "$(dirname "$0")/../lib/check.sh"
cg_need_root "a CTDB cluster"
cg_need_command "a CTDB cluster" ctdbd "no ctdbd (make deps installs ctdb)"
. "$(dirname "$0")/../lib/cluster.sh"
cg_cluster_enter "$0" "$@"

MiB=1048576
SIZE=$((128 * MiB + 4321))
MODES="dontneed dontcache direct auto"
NODES=3

cg_cluster_init "$NODES"
for m in $MODES; do
	cg_cluster_share "$m" "vfs objects = cacheguard fileid" \
		"cacheguard:mode = $m" "cacheguard:window = 8M"
done
# one direct stream's prefetch buffer (8 MiB) of 12M
cg_cluster_share budget "vfs objects = cacheguard fileid" \
	"cacheguard:mode = direct" "cacheguard:window = 8M" \
	"cacheguard:direct memory = 12M"
# nodes 1 and 2: the state directory on the shared one by mistake
for n in 1 2; do
	cg_node_state_on_shared "$n" ||
		{ cg_fail "node $n: a FUSE mount of the shared directory" \
			"bindfs failed"; exit 1; }
done
cg_cluster_start || { cg_fail "the cluster starts" "see above"; exit 1; }
cg_pass "three CTDB nodes and their smbds are up"

# t20's bound: window + twice the device's readahead + 32 MiB, or a
# stream with the kernel's readahead: 4 x read_ahead_kb + 16 MiB
ra_kb=$(cat "/sys/dev/block/$(stat -c '%Hd:%Ld' "$CG_SHARED")/../queue/read_ahead_kb" \
	"/sys/dev/block/$(stat -c '%Hd:%Ld' "$CG_SHARED")/queue/read_ahead_kb" \
	2>/dev/null | head -n 1)
dev_ra=$((${ra_kb:-4096} * 1024))
bound=$((8 * MiB + 2 * dev_ra + 32 * MiB))
kernel_bound=$((4 * dev_ra + 16 * MiB))
bound=$((bound > kernel_bound ? bound : kernel_bound))
echo "bound: $bound bytes"

src=$CG_CLUSTER/src.bin
head -c "$SIZE" /dev/urandom >"$src"

# node_dir N: where node N keeps the module's files: its state
# directory's "cacheguard", or "cacheguard.nodeN" where that is on the
# shared directory (nodes 1 and 2), as the node sees it (the locks of
# the FUSE mount are its own)
node_dir()
{
	if [ "$1" = 0 ]; then
		echo "$(cg_node_state 0)/cacheguard"
	else
		echo "$(cg_node_state "$1")/cacheguard.node$1"
	fi
}

# path MODE: what the close summary says of a stream served in MODE
path_of()
{
	case $1 in
	dontneed) echo "dropped [1-9]" ;;
	dontcache) echo "dontcache [1-9]" ;;
	direct | auto) echo "direct [1-9]" ;;
	esac
}

# summary NODE FILE: the last close summary of FILE in NODE's log
summary()
{
	grep "$2: size " "$(cg_node_log "$1")" | tail -n 1
}

for m in $MODES; do
	# --- a. every node at once, each its own file ---
	for ((n = 0; n < NODES; n++)); do
		f=$CG_SHARED/${m}_$n.bin
		cp "$src" "$f"
		chmod 0644 "$f"
		sync
		"$CG_BUILD/cgcache" drop "$f"
	done
	pids=()
	for ((n = 0; n < NODES; n++)); do
		rm -f "$CG_CLUSTER/got.$n"
		cg_node_smbclient "$n" "$m" \
			"get ${m}_$n.bin $CG_CLUSTER/got.$n" \
			>"$CG_CLUSTER/get.$n.out" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
	for ((n = 0; n < NODES; n++)); do
		cg_expect "[$m] node $n: its copy is byte-identical" \
			cmp "$src" "$CG_CLUSTER/got.$n"
		cg_expect "[$m] node $n: one stream, $(path_of "$m")" \
			grep -qE "mode ${m/auto/direct};.*$(path_of "$m").*streams 1 .*fallbacks 0" \
			<<<"$(summary "$n" "${m}_$n.bin")"
		cg_expect_le "[$m] node $n: its file cached after" \
			"$("$CG_BUILD/cgcache" stat "$CG_SHARED/${m}_$n.bin")" \
			"$bound"
		cg_expect "[$m] node $n: lock files in its own directory" \
			test -n "$(ls "$(node_dir "$n")" 2>/dev/null |
				grep -E '^(budget|streams|readahead)$')"
	done

	# --- b. a client that moves from node 0 to node 1 ---
	f=$CG_SHARED/${m}_move.bin
	cp "$src" "$f"
	chmod 0644 "$f"
	sync
	"$CG_BUILD/cgcache" drop "$f"
	got=$CG_CLUSTER/move.$m
	rm -f "$got"
	cg_node_smbclient 0 "$m" "get ${m}_move.bin $got" \
		>"$CG_CLUSTER/move0.out" 2>&1 &
	client=$!
	for i in $(seq 1 200); do
		[ "$(stat -c %s "$got" 2>/dev/null || echo 0)" -ge $((32 * MiB)) ] &&
			break
		sleep 0.05
	done
	# the node's smbd process serving the copy dies, as a node does
	for pid in $(pgrep -P "$(cg_node_pid 0)"); do
		ls -l "/proc/$pid/fd" 2>/dev/null | grep -q "/${m}_move.bin\$" &&
			kill -9 "$pid"
	done
	wait "$client"
	had=$(stat -c %s "$got" 2>/dev/null || echo 0)
	cg_expect "[$m] the copy through node 0 stopped part way ($had bytes)" \
		test "$had" -gt 0 -a "$had" -lt "$SIZE"
	# node 1 has a page cache of its own, without what node 0's
	# readahead left of the file here (a killed process drops nothing)
	"$CG_BUILD/cgcache" drop "$f"
	cg_node_smbclient 1 "$m" "reget ${m}_move.bin $got" \
		>"$CG_CLUSTER/move1.out" 2>&1
	cg_expect "[$m] resumed through node 1, the copy is byte-identical" \
		cmp "$src" "$got"
	cg_expect "[$m] node 1 served the rest as one stream, $(path_of "$m")" \
		grep -qE "size $SIZE read $((SIZE - had)) mode ${m/auto/direct};.*$(path_of "$m").*streams 1 " \
		<<<"$(summary 1 "${m}_move.bin")"
	cg_expect_le "[$m] the moved copy's file cached after" \
		"$("$CG_BUILD/cgcache" stat "$f")" "$bound"
	rm -f "$CG_SHARED/${m}"_*.bin
done

# --- the module's lock files are each node's own ---------------------------
# pause_on N SHARE FILE: a client of node N reads 24 MiB of FILE and
# waits for $CG_CLUSTER/go; returns once it has paused (its pid: $reader)
pause_on()
{
	rm -f "$CG_CLUSTER/paused" "$CG_CLUSTER/go"
	"$CG_BUILD/smb_readpause" -p 445 -U "$CG_USER%$CG_PASS" \
		-b $((24 * MiB)) -r "$CG_CLUSTER/paused" \
		-w "$CG_CLUSTER/go" -t 60 \
		"//$(cg_node_ip "$1")/$2/$3" "$CG_SHARED/$3" \
		>"$CG_CLUSTER/pause.out" 2>&1 &
	reader=$!
	cg_wait_file "$CG_CLUSTER/paused"
}

# resume: the paused client reads to the end; its bytes must be right
resume()
{
	touch "$CG_CLUSTER/go"
	wait "$reader"
	cg_expect "$1: the paused client's bytes are right" \
		grep -q '^ok ' "$CG_CLUSTER/pause.out"
}

# cold FILE...: written, synced and out of the page cache
cold()
{
	local f

	for f in "$@"; do
		[ -e "$f" ] || head -c $((64 * MiB)) /dev/urandom >"$f"
		chmod 0644 "$f"
	done
	sync
	for f in "$@"; do
		"$CG_BUILD/cgcache" drop "$f"
	done
}

# get_on N SHARE FILE TAG: FILE cold, copied through node N: right
get_on()
{
	cold "$CG_SHARED/$3"
	cg_node_smbclient "$1" "$2" "get $3 $CG_CLUSTER/$3.$1" >/dev/null 2>&1
	cg_expect "$4 node $1: its copy of $3 is right" \
		cmp "$CG_SHARED/$3" "$CG_CLUSTER/$3.$1"
}

# --- c. each node's direct memory is counted apart ---
p1=$CG_SHARED/p1.bin
p2=$CG_SHARED/p2.bin
cold "$p1" "$p2"
pause_on 1 budget p1.bin
cg_expect "[budget] a stream paused on node 1 holds 8 MiB of node 1's 12M" \
	test "$("$CG_BUILD/cgcache" budget "$(node_dir 1)/budget" \
		$((12 * MiB)))" = $((8 * MiB))
for n in 1 2; do
	get_on "$n" budget p2.bin "[budget]"
done
cg_expect "[budget] node 1, its memory spent: the next mode, saying why" \
	grep -qE "direct 0; .*fallbacks 1: no room in direct memory" \
	<<<"$(summary 1 p2.bin)"
cg_expect "[budget] node 2, its memory its own: read direct" \
	grep -qE "mode direct; .* direct [1-9].*fallbacks 0$" \
	<<<"$(summary 2 p2.bin)"
resume "[budget]"

# --- d. streams of one file on two nodes are not one node's ---
s=$CG_SHARED/s.bin
cold "$s"
pause_on 1 dontcache s.bin
for n in 1 2; do
	get_on "$n" dontcache s.bin "[streams]"
done
# smb_readpause's stream is still open: the last summaries are the gets'
cg_expect "[streams] node 1: the second reader read through the cache for the paused one" \
	grep -qE "served buffered [1-9][0-9]* " <<<"$(summary 1 s.bin)"
cg_expect "[streams] node 2: the second reader read uncached, alone on its node" \
	grep -qE "served buffered 0 dontcache [1-9]" <<<"$(summary 2 s.bin)"
resume "[streams]"
rm -f "$p1" "$p2" "$s" "$CG_CLUSTER"/p2.bin.* "$CG_CLUSTER"/s.bin.*

for ((n = 0; n < NODES; n++)); do
	cg_expect "node $n: a direct budget file of its own" \
		test -f "$(node_dir "$n")/budget"
done
cg_expect "node 0's files are not in the shared directory" \
	test ! -e "$CG_CLUSTER/shared/state/cacheguard"
# levels N TEXT: the debug level of each message of node N's log that
# holds TEXT, from the header line before it, one per line
levels()
{
	awk -v t="$2" '
		/^\[/ { hdr = $0; next }
		index($0, t) {
			match(hdr, /, +[0-9]+[],]/)
			print substr(hdr, RSTART + 1, RLENGTH - 2) + 0
		}' "$(cg_node_log "$1")"
}
for n in 0 1 2; do
	want="0 "
	[ "$n" = 0 ] && want=""
	got=$(levels "$n" "is on a filesystem other nodes mount too" |
		sort -u | tr '\n' ' ')
	cg_expect "node $n: a state directory on the shared one is logged at level 0, a local one not ('$got')" \
		test "$got" = "$want"
done
