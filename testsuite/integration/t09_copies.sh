#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# One copy each way through every mode, the short check of a samba
# build (the release rows of packaging/releases run it first): a cold
# 256 MiB download is byte-identical, served on the mode's path in one
# stream, and leaves at most t20's bound of the file cached (the plain
# share keeps it all); a 256 MiB upload is byte-identical and leaves at
# most t37's 48 MiB cached.
. "$(dirname "$0")/../lib/script.sh" "copies" "$@"

SIZE=$((256 * MiB + 4321))
modes="dontneed dontcache direct auto"
cg_smbd_init
cg_mode_shares "" "$modes"
cg_smbd_start || { cg_fail "smbd starts" "see above"; exit 1; }

src=$CG_ROOT/src.bin
cg_random_file "$src" "$SIZE" "$CG_SHARE/big.bin"
sync
ra=$(cg_device_readahead "$CG_SHARE")
bound=$((8 * MiB + ra + 32 * MiB))

# path MODE: how the close summary shows a stream served in MODE
path()
{
	case $1 in
	dontneed) echo "dropped [1-9]" ;;
	dontcache) echo "dontcache [1-9]" ;;
	direct | auto) echo "direct [1-9]" ;;
	esac
}

for m in plain $modes; do
	cg_drop_cache "$CG_SHARE/big.bin"
	rm -f "$CG_ROOT/back.bin"
	cg_smbclient "$m" "get big.bin $CG_ROOT/back.bin" >/dev/null 2>&1
	cg_expect "[$m] a cold download is byte-identical" \
		cmp -s "$src" "$CG_ROOT/back.bin"
	left=$(cg_resident "$CG_SHARE/big.bin")
	if [ "$m" = plain ]; then
		cg_expect_ge "[plain] the download stays cached" "$left" \
			$((SIZE * 9 / 10))
	else
		cg_expect_le "[$m] the download leaves the file out of the cache" \
			"$left" "$bound"
		line=$(grep -E " big.bin: size $SIZE " "$CG_LOG" | tail -n 1)
		cg_expect "[$m] one stream on the mode's path ($(path "$m"))" \
			grep -qE "mode ${m/auto/direct};.*$(path "$m").*streams 1 " \
			<<<"$line"
	fi
	rm -f "$CG_SHARE/up.bin"
	sync
	cg_smbclient "$m" "put $src up.bin" >/dev/null 2>&1
	# before the comparison, which reads the file into the cache
	left=$(cg_resident "$CG_SHARE/up.bin")
	cg_expect "[$m] an upload is byte-identical" \
		cmp -s "$src" "$CG_SHARE/up.bin"
	if [ "$m" = plain ]; then
		cg_expect_ge "[plain] the upload stays cached" "$left" \
			$((SIZE * 9 / 10))
	else
		cg_expect_le "[$m] the upload leaves at most 48 MiB cached" \
			"$left" $((48 * MiB))
	fi
done
exit 0
