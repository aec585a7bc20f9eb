#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Odd files and events (issue 14, point 5), through every mode and, for
# parity, a plain share, on ext4 loop filesystems of its own:
#  a. a sparse file of 4 GiB + 48 MiB with 16 MiB of data at 1 MiB,
#     across 4 GiB and at its end, holes between: copies and random
#     reads right, the copy's footprint bounded;
#  b. files of exactly one window and of a window +/- 1 byte (and two);
#  c. the file renamed, deleted (the handle kept open) and truncated
#     (above and below the reader) while a stream is paused half way:
#     the reader gets what the plain share gives it;
#  d. durable handles: a copy whose connection drops half way reconnects
#     its handle and reads on, right bytes and bounded footprint
#     (testsuite/tools/smb_durable_copy.py); smbtorture's reopen tests
#     (smb2.durable-open, smb2.durable-v2-open) pass as on plain;
#  e. a read-only share: right bytes, bounded footprint, uploads
#     refused as on a plain read-only share;
#  f. alternate data streams: 32 MiB through streams_depot (Linux
#     xattrs hold at most 64 KiB, so streams_xattr cannot), and a small
#     one through streams_xattr; a 32 MiB one refused there as on the
#     plain share;
#  g. a filesystem full to its last block: copies right, and an upload
#     that hits ENOSPC reports the plain share's error to the client;
#  h. an SMB1 client opening one file twice in DOS compatibility mode
#     (testsuite/tools/smb1_dos_open.py): smbd shares one descriptor
#     and calls SMB_VFS_CLOSE only for the last handle; the first
#     handle's stream is closed all the same (its summary is logged,
#     nothing stays cached), right bytes.
. "$(dirname "$0")/../lib/script.sh" "odd files and events" "$@"

window=$((8 * MiB))
modes="dontneed dontcache direct auto"
# smaller files stream too; the window stays 8M
tune=("cacheguard:min file size = 1M" "cacheguard:stream trigger = 512K"
	"cacheguard:window = 8M")
durable=("kernel oplocks = no" "kernel share modes = no"
	"posix locking = no" "durable handles = yes")

cg_smbd_init
# h: an SMB1 client (smbclient and the rest negotiate SMB3 as before)
cg_global "server min protocol = NT1"
odd=$CG_ROOT/mnt/odd
full=$CG_ROOT/mnt/full
if ! cg_mount_fs ext4 "$odd" 8G || ! cg_mount_fs ext4 "$full" 64M; then
	cg_fail "ext4 loop filesystems" "see $CG_ROOT/log/mkfs-ext4.out"
	exit 0
fi
# share NAME PATH MODE [smb.conf line...]: MODE plain, or cacheguard's
share()
{
	local name=$1 path=$2 mode=$3
	shift 3
	if [ "$mode" = plain ]; then
		cg_share_at "$name" "$path" "$@"
	else
		cg_share_at "$name" "$path" "vfs objects = cacheguard" \
			"cacheguard:mode = $mode" "${tune[@]}" "$@"
	fi
}
for mode in plain $modes; do
	share "odd_$mode" "$odd" "$mode" "${durable[@]}"
	share "ro_$mode" "$odd" "$mode" "read only = yes"
	share "full_$mode" "$full" "$mode"
done
cg_share_at ads_plain "$odd" "vfs objects = streams_depot"
cg_share_at xattr_plain "$odd" "vfs objects = streams_xattr"
for mode in $modes; do
	cg_share_at "ads_$mode" "$odd" \
		"vfs objects = cacheguard streams_depot" \
		"cacheguard:mode = $mode"
	cg_share_at "xattr_$mode" "$odd" \
		"vfs objects = cacheguard streams_xattr" \
		"cacheguard:mode = $mode"
done
cg_smbd_start || { cg_fail "smbd starts" "see above"; exit 1; }

readahead=$((2 * $(cg_device_readahead "$odd/.")))
bound=$((window + readahead + 32 * MiB))
echo "per-stream bound: $bound"

verify()
{
	"$CG_BUILD/smb_verify" -p "$CG_PORT" -U "$CG_USER%$CG_PASS" "$@" 2>&1
}

# getsum SHARE NAME: the checksum of a file as an smbclient get returns
# it; smbclient's errors (a get cut short) go to the log
getsum()
{
	cg_smbclient "$1" "get $2 -" 2>"$CG_ROOT/log/getsum.err" | cg_checksum
	grep -E "NT_STATUS|[Ee]rror" "$CG_ROOT/log/getsum.err" >&2 || true
}

# cold_copy SHARE NAME PATH SUM SAME-CHECK RESIDENT-CHECK: a cold copy of
# NAME (PATH on the server) from SHARE has the checksum SUM, and leaves
# at most $bound of the file cached
cold_copy()
{
	sync
	cg_drop_cache "$3"
	cg_expect "$5" test "$(getsum "$1" "$2")" = "$4"
	cg_expect_le "$6" "$(cg_resident "$3")" "$bound"
}

# --- a. sparse, data beyond 4 GiB -----------------------------------------
sparse=$odd/sparse.bin
sparse_size=$((4 * GiB + 48 * MiB))
sparse_at="$MiB $((4 * GiB - 8 * MiB)) $((4 * GiB + 32 * MiB))"
truncate -s "$sparse_size" "$sparse"
for at in $sparse_at; do
	head -c $((16 * MiB)) /dev/urandom >"$CG_ROOT/data.$at"
	dd if="$CG_ROOT/data.$at" of="$sparse" bs=1M seek=$((at / MiB)) \
		conv=notrunc status=none
done
# sparse_bytes: the file's bytes, from what was written where: reading
# its 4 GiB of holes would fill the page cache with zero pages (36 s)
sparse_bytes()
{
	local pos=0 at

	for at in $sparse_at; do
		head -c $((at - pos)) /dev/zero
		cat "$CG_ROOT/data.$at"
		pos=$((at + 16 * MiB))
	done
	head -c $((sparse_size - pos)) /dev/zero
}
sum=$(sparse_bytes | cg_checksum)
echo "sparse file: $(du -k "$sparse" | cut -f1) KiB allocated of" \
	"$(($(stat -c %s "$sparse") / 1024)) KiB"
for mode in $modes; do
	cold_copy "odd_$mode" sparse.bin "$sparse" "$sum" \
		"[odd_$mode] sparse 4 GiB + 48 MiB: copy byte-identical" \
		"[odd_$mode] sparse file: resident after the copy"
	cg_drop_cache "$sparse"
	out=$(verify -n 300 -s 11 -m $MiB random \
		"//127.0.0.1/odd_$mode/sparse.bin" "$sparse")
	cg_expect "[odd_$mode] sparse file: 300 random reads ($out)" \
		grep -q '^ok ' <<<"$out"
done
cg_drop_cache "$sparse"

echo "time so far: ${SECONDS}s"
# --- b. one window, and a window +/- 1 ------------------------------------
sizes="$((window - 1)) $window $((window + 1)) $((2 * window - 1))
$((2 * window)) $((2 * window + 1))"
for size in $sizes; do
	head -c "$size" /dev/urandom >"$odd/w$size"
done
sync
for mode in $modes; do
	bad=
	for size in $sizes; do
		cg_drop_cache "$odd/w$size"
		[ "$(getsum "odd_$mode" "w$size")" = \
			"$(cg_checksum <"$odd/w$size")" ] ||
			bad="$bad $size"
		cg_drop_cache "$odd/w$size"
		verify -n 1 -s 5 -m $((window / 3)) seq \
			"//127.0.0.1/odd_$mode/w$size" "$odd/w$size" |
			grep -q '^ok ' || bad="$bad $size(seq)"
	done
	cg_expect "[odd_$mode] a window, two, each +/- 1: right bytes" \
		test -z "$bad"
	[ -n "$bad" ] && echo "wrong:$bad"
done

echo "time so far: ${SECONDS}s"
# --- c. renamed, deleted, truncated under a paused stream -----------------
orig=$CG_ROOT/ev.orig
head -c $((96 * MiB)) /dev/urandom >"$orig"
# event SHARE WHAT: smb_readpause's verdict on ev.bin after WHAT
event()
{
	local share=$1 what=$2 reader

	rm -f "$odd/ev.bin" "$odd/ev.moved" "$CG_ROOT/ready" "$CG_ROOT/go"
	cp "$orig" "$odd/ev.bin"
	sync
	cg_drop_cache "$odd/ev.bin"
	"$CG_BUILD/smb_readpause" -p "$CG_PORT" -U "$CG_USER%$CG_PASS" \
		-b $((32 * MiB)) -r "$CG_ROOT/ready" -w "$CG_ROOT/go" -t 60 \
		"//127.0.0.1/$share/ev.bin" "$orig" >"$CG_ROOT/ev.out" 2>&1 &
	reader=$!
	for _ in $(seq 1 600); do
		[ -e "$CG_ROOT/ready" ] && break
		sleep 0.1
	done
	case $what in
	rename) mv "$odd/ev.bin" "$odd/ev.moved" ;;
	delete) rm "$odd/ev.bin" ;;
	truncate48M) truncate -s $((48 * MiB)) "$odd/ev.bin" ;;
	truncate16M) truncate -s $((16 * MiB)) "$odd/ev.bin" ;;
	esac
	touch "$CG_ROOT/go"
	wait "$reader"
	echo "exit $? $(grep -v '^paused at' "$CG_ROOT/ev.out" | tr '\n' ' ')"
}
for what in rename delete truncate48M truncate16M; do
	want=$(event odd_plain "$what")
	echo "[odd_plain] $what mid-stream: $want"
	for mode in $modes; do
		got=$(event "odd_$mode" "$what")
		name="[odd_$mode] $what mid-stream: as the plain share"
		if [ "$got" = "$want" ]; then
			cg_pass "$name ($got)"
		else
			cg_fail "$name" "got '$got', plain '$want'"
		fi
	done
done
cg_expect "no smbd panicked" test "$(grep -c PANIC "$CG_LOG")" = 0

echo "time so far: ${SECONDS}s"
# --- d. durable handles ----------------------------------------------------
# smbtorture's reconnects of durable handles of small files it writes,
# compared with plain
tests="smb2.durable-open.reopen1 smb2.durable-open.reopen1a
smb2.durable-open.reopen2 smb2.durable-open.reopen2a
smb2.durable-open.reopen3 smb2.durable-open.reopen4
smb2.durable-open.file-position smb2.durable-v2-open.reopen1
smb2.durable-v2-open.reopen2 smb2.durable-v2-open.reopen2b"
# torture SHARE: "test verdict" lines of one smbtorture run of $tests
torture()
{
	# shellcheck disable=SC2086
	smbtorture "//127.0.0.1/$1" -p "$CG_PORT" -U "$CG_USER%$CG_PASS" \
		$tests 2>&1 | sed -nE \
		's/^(success|failure|error|skip): ([^ ]*).*/\2 \1/p'
}
want=$(torture odd_plain)
echo "[odd_plain] smbtorture:" $want
for mode in $modes; do
	got=$(torture "odd_$mode")
	n=$(echo "$want" | grep -c ' success$')
	name="[odd_$mode] smbtorture durable reopen tests as plain ($n succeed)"
	if [ "$got" = "$want" ] && [ "$n" -gt 0 ]; then
		cg_pass "$name"
	else
		cg_fail "$name" "$(diff <(echo "$want") <(echo "$got") |
			grep '^[<>]' | tr '\n' ' ')"
	fi
done

# A client whose connection drops half way through a 96 MiB copy
# reconnects its durable handle and reads on (smb_durable_copy.py,
# python3-impacket): right bytes in every mode, and the copy's
# footprint stays bounded across the reconnect
for mode in plain $modes; do
	cp "$orig" "$odd/dur.bin"
	sync
	cg_drop_cache "$odd/dur.bin"
	out=$("$CG_TOP/testsuite/tools/smb_durable_copy.py" -p "$CG_PORT" \
		-U "$CG_USER%$CG_PASS" "//127.0.0.1/odd_$mode/dur.bin" \
		"$orig" 2>&1)
	rc=$?
	if [ "$rc" = 77 ]; then
		cg_skip "[odd_$mode] durable reconnect mid-copy" "$out"
		continue
	fi
	cg_expect "[odd_$mode] durable reconnect mid-copy: $out" \
		test "$rc" = 0
	[ "$mode" = plain ] && continue
	cg_expect_le "[odd_$mode] durable reconnect mid-copy: resident after" \
		"$(cg_resident "$odd/dur.bin")" "$bound"
done

echo "time so far: ${SECONDS}s"
# --- e. read-only share ----------------------------------------------------
r=$odd/r.bin
head -c $((64 * MiB)) /dev/urandom >"$r"
sum=$(cg_checksum <"$r")
head -c $MiB /dev/urandom >"$CG_ROOT/up.bin"
put_status()
{
	cg_smbclient "$1" "put $CG_ROOT/up.bin $2" 2>&1 |
		grep -o 'NT_STATUS_[A-Z_]*' | sort -u | tr '\n' ' '
}
want=$(put_status ro_plain up_ro.bin)
for mode in $modes; do
	cold_copy "ro_$mode" r.bin "$r" "$sum" \
		"[ro_$mode] copy byte-identical" \
		"[ro_$mode] resident after the copy"
	got=$(put_status "ro_$mode" up_ro.bin)
	cg_expect "[ro_$mode] an upload is refused as on plain ($want)" \
		test -n "$want" -a "$got" = "$want" -a ! -e "$odd/up_ro.bin"
done

echo "time so far: ${SECONDS}s"
# --- f. alternate data streams ---------------------------------------------
head -c $((32 * MiB)) /dev/urandom >"$CG_ROOT/ads.bin"
sum=$(cg_checksum <"$CG_ROOT/ads.bin")
head -c 3000 /dev/urandom >"$CG_ROOT/ads_small.bin"
small_sum=$(cg_checksum <"$CG_ROOT/ads_small.bin")
echo base >"$CG_ROOT/base.txt"
for mode in plain $modes; do
	f=ads_$mode.txt
	cg_smbclient "ads_$mode" "put $CG_ROOT/base.txt $f;
		put $CG_ROOT/ads.bin $f:big" >"$CG_ROOT/ads.out" 2>&1
	sync
	while read -r s; do
		cg_drop_cache "$s"
	done < <(find "$odd/.streams" -type f 2>/dev/null)
	cg_expect "[ads_$mode] streams_depot: a 32 MiB stream read back" \
		test "$(getsum "ads_$mode" "$f:big")" = "$sum"
	cg_expect "[ads_$mode] ... the file itself unchanged" \
		test "$(cat "$odd/$f")" = base
	f=xattr_$mode.txt
	cg_smbclient "xattr_$mode" "put $CG_ROOT/base.txt $f;
		put $CG_ROOT/ads_small.bin $f:small" >"$CG_ROOT/ads.out" 2>&1
	cg_expect "[xattr_$mode] streams_xattr: 3000 byte stream" \
		test "$(getsum "xattr_$mode" "$f:small")" = "$small_sum"
	# how the client then loses its connection varies between runs
	got=$(cg_smbclient "xattr_$mode" "put $CG_ROOT/ads.bin $f:big" 2>&1 |
		grep -o 'NT_STATUS_[A-Z_]*' | sort -u |
		grep -v -e CONNECTION_DISCONNECTED -e INVALID_NETWORK_RESPONSE |
		tr '\n' ' ')
	if [ "$mode" = plain ]; then
		want_big=$got
		echo "[xattr_plain] a 32 MiB stream: ${got:-stored}"
	else
		name="[xattr_$mode] a 32 MiB stream: as plain"
		cg_expect "$name (${want_big:-stored})" \
			test "$got" = "$want_big"
	fi
done

echo "time so far: ${SECONDS}s"
# --- g. full to the last block ---------------------------------------------
data=$full/data.bin
head -c $((24 * MiB)) /dev/urandom >"$data"
sum=$(cg_checksum <"$data")
dd if=/dev/zero of="$full/fill1" bs=1M status=none 2>/dev/null
dd if=/dev/zero of="$full/fill2" bs=1024 status=none 2>/dev/null
sync
free=$(stat -f -c '%a' "$full")
cg_expect "the filesystem is full ($free blocks free)" test "$free" = 0
want=$(put_status full_plain up_full.bin)
rm -f "$full/up_full.bin"
echo "[full_plain] an upload: $want"
for mode in $modes; do
	cg_drop_cache "$data"
	cg_expect "[full_$mode] copy on a full filesystem byte-identical" \
		test "$(getsum "full_$mode" data.bin)" = "$sum"
	got=$(put_status "full_$mode" up_full.bin)
	rm -f "$full/up_full.bin"
	cg_expect "[full_$mode] an upload reports ENOSPC as plain ($want)" \
		test -n "$want" -a "$got" = "$want"
done

# --- h. SMB1 DOS opens: one descriptor, one SMB_VFS_CLOSE ------------------
for mode in plain $modes; do
	f=dos_$mode.bin
	head -c $((32 * MiB)) /dev/urandom >"$odd/$f"
	cp "$odd/$f" "$CG_ROOT/$f"
	chown "$CG_USER" "$odd/$f"
	cg_drop_cache "$odd/$f"
	out=$(/usr/bin/python3 "$CG_TOP/testsuite/tools/smb1_dos_open.py" \
		-p "$CG_PORT" -U "$CG_USER%$CG_PASS" \
		"//127.0.0.1/odd_$mode/$f" "$CG_ROOT/$f" 2>&1)
	rc=$?
	if [ "$rc" = 77 ]; then
		cg_skip "[odd_$mode] SMB1 DOS opens" "$out"
		continue
	fi
	cg_expect "[odd_$mode] two SMB1 DOS opens of one file: right bytes" \
		grep -q "^ok " <<<"$out"
	[ "$mode" = plain ] && continue
	cg_expect "[odd_$mode] the first DOS handle's stream closed (summary)" \
		grep -qE "$f: size .* streams 1" "$CG_LOG"
	cg_expect_le "[odd_$mode] what the DOS handles left cached (MiB)" \
		$(($(cg_resident "$odd/$f") / MiB)) 16
	rm -f "$odd/$f" "$CG_ROOT/$f"
done
echo "time: ${SECONDS}s"
exit 0
