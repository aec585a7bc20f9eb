#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# make bench-ablation: the mechanisms whose scenario pairs.sh and the
# mixed workload (run) do not measure, each with and without it, in the
# scenario it exists for, in one run (docs/benchmarks.md, "What each
# mechanism pays"). Counted figures (bytes the device read, bytes left
# cached), not timings, wherever the mechanism's point is one:
#
#   readers	reader claims (cacheguard:reader gap): 4 clients read one
#		384 MiB file through a dontneed share, 16 MiB apart at
#		32 MiB/s each, as clients behind a network link; the
#		device's read bytes over the file's size, with the claims
#		(reader gap 128M, the default) and without (0)
#   hot		the hot check (cacheguard:hot threshold): a 256 MiB file
#		fully cached (someone else's hot data) copied through the
#		default share and a dontneed one: MB/s, what the device
#		read, what of it is still cached after the copy, with the
#		check (50, the default) and without (0)
#   upload	RWF_DONTCACHE writes: a 1 GiB upload through a dontcache
#		share and a dontneed one (write-behind alone), ABL_ROUNDS
#		rounds alternating: MB/s, what is cached after, smbd's CPU
#
# The prefetch's growth, the readahead memory budget and stream ioprio
# have their scenarios in pairs.sh and run, with configurations of the
# form MODE@KEY=VALUE (see docs/benchmarks.md for the commands).
#
#   ABL_PARTS	"readers hot upload"
#   ABL_ROUNDS	3 (uploads)
. "$(dirname "$0")/begin.sh" \
	"a private mount namespace, dropping the files' pages" "$@"

MiB=1048576
parts=${ABL_PARTS:-readers hot upload}
rounds=${ABL_ROUNDS:-3}
cg_smbd_init
cg_guard_shares "dontneed dontneed@reader_gap=0 dontneed@hot_threshold=0
	default default@hot_threshold=0 dontcache" ""
cg_smbd_start || { echo "ablation.sh: smbd does not start" >&2; exit 2; }
fs=$CG_SHARE
dev=$(lsblk -no PKNAME "$(df --output=source "$fs" | tail -n 1)" \
	2>/dev/null)
[ -n "$dev" ] || dev=$(basename "$(df --output=source "$fs" | tail -n 1)")

# fail WHAT: a figure could not be had; stop, never print a made-up one
fail()
{
	echo "ablation.sh: $1" >&2
	exit 2
}

readers()
{
	local c share i before got clients

	head -c $((384 * MiB)) /dev/urandom >"$fs/shared.bin"
	cp "$fs/shared.bin" "$CG_ROOT/shared.ref"
	chmod 0644 "$fs/shared.bin"
	echo "== reader claims: 4 readers of one 384 MiB file, dontneed"
	printf '%-28s %14s %14s\n' configuration "device MiB" "x the file"
	for c in dontneed dontneed@reader_gap=0; do
		share=$(cg_guard_share_name "$c")
		sync
		cg_drop_cache "$fs/shared.bin"
		rm -f "$CG_ROOT"/ready.* "$CG_ROOT"/go.*
		clients=
		for i in 1 2 3 4; do
			"$CG_BUILD/smb_readpause" -p "$CG_PORT" \
				-U "$CG_USER%$CG_PASS" -r "$CG_ROOT/ready.$i" \
				-w "$CG_ROOT/go.$i" -t 60 -R 32 \
				"//127.0.0.1/$share/shared.bin" \
				"$CG_ROOT/shared.ref" >"$CG_ROOT/r.$i" 2>&1 &
			clients="$clients $!"
		done
		for i in 1 2 3 4; do
			cg_wait_file "$CG_ROOT/ready.$i" || fail "reader $i"
		done
		before=$(cg_dev_read "$dev")
		for i in 1 2 3 4; do
			[ "$i" = 1 ] || sleep 0.5
			touch "$CG_ROOT/go.$i"
		done
		# shellcheck disable=SC2086
		wait $clients
		got=$(($(cg_dev_read "$dev") - before))
		for i in 1 2 3 4; do
			grep -q '^ok ' "$CG_ROOT/r.$i" ||
				fail "reader $i of $c: $(cat "$CG_ROOT/r.$i")"
		done
		cg_number "the device's read bytes" "$got" >/dev/null ||
			fail "the device's count"
		printf '%-28s %14.0f %14.2f\n' "$c" $((got / MiB)) \
			"$(awk -v g="$got" -v s=$((384 * MiB)) \
				'BEGIN { print g / s }')"
	done
	rm -f "$fs/shared.bin" "$CG_ROOT/shared.ref"
}

hot()
{
	local c share left before got t0 t1

	head -c $((256 * MiB)) /dev/urandom >"$fs/hot.bin"
	chmod 0644 "$fs/hot.bin"
	echo "== the hot check: a fully cached 256 MiB file copied"
	printf '%-28s %8s %12s %20s\n' configuration MB/s "device MiB" \
		"cached after, MiB"
	for c in default default@hot_threshold=0 dontneed \
		dontneed@hot_threshold=0; do
		share=$(cg_guard_share_name "$c")
		cat "$fs/hot.bin" >/dev/null
		before=$(cg_dev_read "$dev")
		t0=$EPOCHREALTIME
		cg_smbclient "$share" "get hot.bin /dev/null" >/dev/null 2>&1 ||
			fail "the copy of hot.bin through $c"
		t1=$EPOCHREALTIME
		got=$(($(cg_dev_read "$dev") - before))
		left=$(cg_number "residency of hot.bin" \
			"$(cg_resident "$fs/hot.bin")") || fail "residency"
		printf '%-28s %8.0f %12.1f %20.1f\n' "$c" \
			"$(awk -v a="$t0" -v b="$t1" -v n=$((256 * MiB)) \
				'BEGIN { print n / (b - a) / 1e6 }')" \
			"$(awk -v b="$got" 'BEGIN { print b / 1048576 }')" \
			"$(awk -v b="$left" 'BEGIN { print b / 1048576 }')"
	done
	rm -f "$fs/hot.bin"
}

upload()
{
	local c share r out secs st mt left
	declare -A tsecs tst res

	head -c $((1024 * MiB)) /dev/urandom >"$CG_ROOT/up.src"
	echo "== uploads: 1 GiB, $rounds rounds"
	for r in $(seq 1 "$rounds"); do
		for c in dontcache dontneed; do
			share=$(cg_guard_share_name "$c")
			rm -f "$fs/up.bin"
			sync
			out=$(cg_smbd_measure "$CG_ROOT/put.out" cg_smbclient \
				"$share" "put $CG_ROOT/up.src up.bin") ||
				fail "the upload through $c"
			read -r secs st mt <<<"$out"
			left=$(cg_number "residency of up.bin" \
				"$(cg_resident "$fs/up.bin")") || fail "residency"
			cmp -s "$CG_ROOT/up.src" "$fs/up.bin" ||
				fail "the upload through $c differs"
			tsecs[$c]=$(awk -v a="${tsecs[$c]:-0}" -v b="$secs" \
				'BEGIN { print a + b }')
			tst[$c]=$((${tst[$c]:-0} + st))
			[ "$left" -gt "${res[$c]:-0}" ] && res[$c]=$left
		done
	done
	printf '%-28s %8s %20s %16s\n' configuration MB/s \
		"most cached after MiB" "smbd CPU s/GiB"
	for c in dontcache dontneed; do
		printf '%-28s %8.0f %20.1f %16s\n' "$c" \
			"$(awk -v s="${tsecs[$c]}" -v n="$rounds" \
				'BEGIN { print n * 1073741824 / s / 1e6 }')" \
			"$(awk -v b="${res[$c]}" 'BEGIN { print b / 1048576 }')" \
			"$(cg_per_gib "${tst[$c]}" $((rounds << 30)))"
	done
	rm -f "$CG_ROOT/up.src" "$fs/up.bin"
}

for p in $parts; do
	case $p in
	readers | hot | upload) "$p" ;;
	*) fail "unknown part '$p' (readers, hot, upload)" ;;
	esac
done
