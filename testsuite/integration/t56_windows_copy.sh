#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Windows' way of copying (issue 25, point 2), from smb_win_copy.py: the
# file opened for sequential access, buffered or unbuffered (robocopy /J),
# 1 MiB requests with ten outstanding on one connection, multi-credit,
# answered in any order; an upload announces the file's size first. For
# the plain share and each mode, a cold 128 MiB download in both opens
# and an upload in both: the bytes are right, what stays cached during
# and after is within the drop-behind's bound (t20's, and t37's for
# uploads), and the close summary shows the stream on the mode's path.
# A file below min file size and a file already cached (hot) stay
# cached. Throughput is printed against plain's, not checked.
. "$(dirname "$0")/../lib/script.sh" "a Windows-pattern client" "$@"

SIZE=$((128 * MiB + 4321))
MODES="dontneed dontcache direct auto"
tool=$CG_TOP/testsuite/tools/smb_win_copy.py

cg_smbd_init
cg_mode_shares "" "$MODES" "cacheguard:window = 8M"
cg_smbd_start || { cg_fail "smbd starts" "see above"; exit 1; }

big=$CG_SHARE/big.bin
src=$CG_ROOT/src.bin
cg_random_file "$src" "$SIZE" "$big"
# t20's bound: window + twice the device's readahead + 32 MiB, or a
# stream with the kernel's readahead: 4 x read_ahead_kb + 16 MiB
dev_ra=$(cg_device_readahead "$big")
[ "$dev_ra" -gt 0 ] || dev_ra=$((4 * MiB))
bound=$((8 * MiB + 2 * dev_ra + 32 * MiB))
kernel_bound=$((4 * dev_ra + 16 * MiB))
bound=$((bound > kernel_bound ? bound : kernel_bound))
echo "bound: $bound bytes"

# win SHARE PATH LOCAL [OPTION...]: smb_win_copy.py; sets out, rc, mbs
win()
{
	local share=$1 path=$2 local=$3 secs
	shift 3
	out=$(/usr/bin/python3 "$tool" -p "$CG_PORT" -U "$CG_USER%$CG_PASS" \
		"$@" "//127.0.0.1/$share/$path" "$local" 2>&1)
	rc=$?
	secs=$(sed -n 's/^ok [0-9]* bytes in \([0-9.]*\) s.*/\1/p' <<<"$out")
	mbs=$(awk -v s="${secs:-0}" -v n="$SIZE" \
		'BEGIN { printf "%d", (s > 0 ? n / s / 1e6 : 0) }')
}

# summary SHARE-FILE KIND: the last close summary of the file, a read
# summary ("size") or an upload's ("written")
summary()
{
	grep "$1: $2 " "$CG_LOG" | tail -n 1
}

declare -A rate
for m in plain $MODES; do
	for open in buffered unbuffered; do
		opt=()
		[ "$open" = unbuffered ] && opt=(-u)
		# --- the download ---
		sync
		cg_drop_cache "$big"
		cg_sample_start "$big"
		win "$m" big.bin "$src" "${opt[@]}"
		cg_sample_stop
		if [ "$rc" = 77 ]; then
			cg_skip "[$m] a Windows-pattern client" "$out"
			exit 0
		fi
		cg_expect "[$m] $open download is byte-identical" \
			grep -q "^ok .*most outstanding 10$" <<<"$out"
		rate[$m-$open-get]=$mbs
		resident=$(cg_resident "$big")
		if [ "$m" = plain ]; then
			cg_expect_ge "[plain] $open download stays cached" \
				"$(cg_kept "$big")" $((SIZE * 95 / 100))
		else
			cg_expect_le "[$m] $open download: cached after" \
				"$resident" "$bound"
			cg_expect_le "[$m] $open download: peak cached" \
				"$CG_PEAK" "$bound"
			s=$(summary big.bin size)
			case $m in
			dontneed) path="dropped [1-9]" ;;
			dontcache) path="dontcache [1-9]" ;;
			direct | auto) path="direct [1-9]" ;;
			esac
			cg_expect "[$m] $open download: one stream, $path" \
				grep -qE "mode ${m/auto/direct};.*$path.*streams 1 .*fallbacks 0" \
				<<<"$s"
		fi
		# --- the upload, its size announced first ---
		up=$CG_SHARE/up_$m.bin
		rm -f "$up"
		sync
		cg_sample_start "$up" 2>/dev/null
		win "$m" "up_$m.bin" "$src" -w "${opt[@]}"
		cg_sample_stop
		rate[$m-$open-put]=$mbs
		# before the comparison, which reads the file into the cache
		resident=$(cg_resident "$up")
		kept=$(cg_kept "$up")
		cg_expect "[$m] $open upload is byte-identical" \
			cmp "$src" "$up"
		if [ "$m" = plain ]; then
			cg_expect_ge "[plain] $open upload stays cached" \
				"$kept" $((SIZE * 95 / 100))
		else
			# t37's bounds: 4 windows held and the writes in flight
			cg_expect_le "[$m] $open upload: cached after" \
				"$resident" $((48 * MiB))
			cg_expect_le "[$m] $open upload: peak cached" \
				"$CG_PEAK" $((64 * MiB))
			cg_expect "[$m] $open upload: one write stream" \
				grep -qE "up_$m.bin: written $SIZE .*streams 1" \
				<<<"$(summary "up_$m.bin" written)"
		fi
	done
done

# --- a small file and a hot file are the page cache's -----------------------
small=$CG_SHARE/small.bin
head -c $((8 * MiB)) /dev/urandom >"$small"
chmod 0644 "$small"
cp "$small" "$CG_ROOT/small.local"
cg_drop_cache "$small"
win dontneed small.bin "$CG_ROOT/small.local"
cg_expect "[dontneed] a small file is byte-identical" grep -q "^ok " <<<"$out"
cg_expect_ge "[dontneed] a small file stays cached" \
	"$(cg_kept "$small")" $((8 * MiB))
cat "$big" >/dev/null
win direct big.bin "$src"
cg_expect "[direct] a hot file is byte-identical" grep -q "^ok " <<<"$out"
cg_expect_ge "[direct] a hot file stays cached" "$(cg_kept "$big")" \
	$((SIZE * 95 / 100))
cg_expect "[direct] the summary counts it hot" \
	grep -qE "hot [1-9]" <<<"$(summary big.bin size)"

for open in buffered unbuffered; do
	for dir in get put; do
		line="$open $dir MB/s: plain ${rate[plain-$open-$dir]}"
		for m in $MODES; do
			line+=", $m ${rate[$m-$open-$dir]}"
		done
		echo "$line"
	done
done
