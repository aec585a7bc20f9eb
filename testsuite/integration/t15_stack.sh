#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# cacheguard stacked over a lower module (issue 9, points 4 and 5):
# "vfs objects = cacheguard cgtest", cgtest being the test-only module
# of testsuite/modules/vfs_cgtest.c, in every mode and beside a plain
# share that has cgtest alone:
#  a. cgtest owns the I/O, like vfs_ceph: smbd's descriptor is a decoy
#     file's (with and without conn->have_proc_fds). A get is
#     byte-identical, no decoy byte reaches the client, and cacheguard
#     says once per share that it leaves the files alone. With proc fds
#     only fstat(2) of the descriptor tells the decoy: cgtest answers
#     SMB_VFS_FSTAT with the real file's stat.
#  b. cgtest fails the read covering one byte mid-stream with EIO: the
#     client gets the error the plain share gives (same NT_STATUS), on
#     the async and the sync read path, or else the right bytes; never
#     a short or wrong file. Also with a pause before the bad byte, so
#     the read runs in a new second (cacheguard's status file is
#     rewritten then).
#  c. cgtest's reads come back short: the result equals the plain
#     share's, byte-identical whenever that one is.
. "$(dirname "$0")/../lib/script.sh" "stacking over a lower module" "$@"

SIZE=$((96 * MiB + 123))
EIO_AT=$((48 * MiB + 12345))
MODES="dontneed dontcache direct auto"

cg_smbd_init
if [ ! -f "$CG_BUILD/cgtest.so" ]; then
	cg_fail "build/cgtest.so exists" "build it with make build"
	exit 0
fi

# The decoy: bigger than the file, every byte 0xa5, never in any file
decoy=$CG_ROOT/decoy.bin
head -c $((128 * MiB)) /dev/zero | tr '\0' '\245' >"$decoy"
chmod 0644 "$decoy"

# stack_share NAME MODE [smb.conf line...]: cgtest alone (MODE plain) or
# under cacheguard, with sizes small enough for SIZE to stream at once
stack_share()
{
	local name=$1 mode=$2
	shift 2
	if [ "$mode" = plain ]; then
		cg_share "$name" "vfs objects = cgtest" "$@"
	else
		cg_share "$name" "vfs objects = cacheguard cgtest" \
			"cacheguard:mode = $mode" \
			"cacheguard:min file size = 1M" \
			"cacheguard:stream trigger = 1M" "$@"
	fi
}

foreign=("cgtest:foreign fd = yes" "cgtest:decoy = $decoy")
for mode in plain $MODES; do
	stack_share "ff_$mode" "$mode" "${foreign[@]}"
	stack_share "ffp_$mode" "$mode" "${foreign[@]}" "cgtest:proc fds = yes"
	stack_share "ffs_$mode" "$mode" "${foreign[@]}" "aio read size = 0"
	stack_share "eio_$mode" "$mode" "cgtest:eio offset = $EIO_AT"
	stack_share "eios_$mode" "$mode" "cgtest:eio offset = $EIO_AT" \
		"aio read size = 0"
	stack_share "short_$mode" "$mode" "cgtest:short reads = yes"
done
# sendfile's EINTR: the header went out, smbd sends the rest itself
for mode in plain dontneed; do
	stack_share "sfeintr_$mode" "$mode" "use sendfile = yes" \
		"aio read size = 0" "cgtest:sendfile eintr offset = $EIO_AT"
done
cg_smbd_start || { cg_fail "smbd starts" "see above"; exit 1; }

big=$CG_SHARE/big.bin
got=$CG_ROOT/got.bin
head -c "$SIZE" /dev/urandom >"$big"
chmod 0644 "$big"

# get SHARE: a cold smbclient get of big.bin into $got; sets rc and
# status (the NT_STATUS codes smbclient printed, space-separated)
get()
{
	rm -f "$got"
	sync
	cg_drop_cache "$big"
	cg_drop_cache "$decoy"
	cg_smbclient "$1" "get big.bin $got" >"$CG_ROOT/get.out" 2>&1
	rc=$?
	status=$(grep -o 'NT_STATUS_[A-Z0-9_]*' "$CG_ROOT/get.out" |
		sort -u | tr '\n' ' ')
	status=${status% }
}

# what_got: the local copy, described against big.bin
what_got()
{
	local n

	if [ ! -f "$got" ]; then
		echo "no file"
		return
	fi
	n=$(stat -c %s "$got")
	if cmp -s "$big" "$got"; then
		echo "byte-identical"
	elif [ "$n" -ne "$SIZE" ]; then
		echo "$n bytes of $SIZE"
	else
		echo "wrong bytes from byte $(cmp "$big" "$got" |
			sed 's/.*differ: byte \([0-9]*\).*/\1/')"
	fi
}

# decoy_blocks FILE: 4 KiB blocks of FILE that hold the decoy's bytes
decoy_blocks()
{
	python3 -c '
import sys
b = open(sys.argv[1], "rb").read()
d = b"\xa5" * 4096
print(sum(1 for i in range(0, len(b) - 4095, 4096) if b[i:i + 4096] == d))
' "$1"
}

# owns_io_levels SHARE: the debug level of each log message saying that
# cacheguard leaves the files of SHARE alone, one per line. cacheguard
# logs: "share [NAME]: the file's I/O descriptor is not a kernel
# descriptor of the file (a lower module owns I/O); cacheguard leaves its
# files alone"; the pattern is "share [NAME]:" and "a lower module owns
# I/O" on the message line, the level from the header line before it.
owns_io_levels()
{
	awk -v s="share [$1]:" '
		/^\[/ { hdr = $0; next }
		index($0, s) && index($0, "a lower module owns I/O") {
			match(hdr, /, +[0-9]+[],]/)
			print substr(hdr, RSTART + 1, RLENGTH - 2) + 0
		}' "$CG_LOG"
}

# --- a. the lower module owns I/O: smbd's descriptor is a decoy -----------
for kind in ff ffp ffs; do
	case $kind in
	ff) what="foreign fd, proc fds no" ;;
	ffp) what="foreign fd, proc fds yes" ;;
	ffs) what="foreign fd, proc fds no, sync reads" ;;
	esac
	for mode in plain $MODES; do
		share=${kind}_$mode
		get "$share"
		res=$(what_got)
		if [ "$rc" -eq 0 ] && [ "$res" = byte-identical ]; then
			cg_pass "$what, [$share]: get is byte-identical"
		else
			cg_fail "$what, [$share]: get is byte-identical" \
				"smbclient exit $rc${status:+ $status}; $res"
		fi
		n=$([ -f "$got" ] && decoy_blocks "$got" || echo 0)
		name="$what, [$share]: no decoy byte reached the client"
		if [ "$n" -eq 0 ]; then
			cg_pass "$name"
		else
			cg_fail "$name" "$n 4 KiB blocks of the copy are decoy"
		fi
	done
done
for kind in ff ffp ffs; do
	for mode in $MODES; do
		share=${kind}_$mode
		levels=$(owns_io_levels "$share" | tr '\n' ' ')
		name="[$share]: one level-1 line: a lower module owns I/O"
		if [ "$levels" = "1 " ]; then
			cg_pass "$name"
		else
			cg_fail "$name" "levels of such lines: '${levels% }'"
		fi
	done
done
# cgtest itself: uploads through it land in the real file
for share in ff_plain ffp_plain; do
	rm -f "$CG_SHARE/put.bin"
	cg_smbclient "$share" "put $big put.bin" >"$CG_ROOT/put.out" 2>&1
	cg_expect "foreign fd, [$share]: put is byte-identical" \
		cmp "$big" "$CG_SHARE/put.bin"
done
cg_expect "the decoy is unchanged" test "$(tr -d '\245' <"$decoy" | wc -c)" \
	= 0 -a "$(stat -c %s "$decoy")" = $((128 * MiB))

# --- b. EIO mid-stream: the plain share's error, or the right bytes --------
for kind in eio eios; do
	what="EIO at $EIO_AT, async reads"
	[ "$kind" = eios ] && what="EIO at $EIO_AT, sync reads"
	get "${kind}_plain"
	plain_status=$status
	plain_rc=$rc
	res=$(what_got)
	if [ -n "$plain_status" ] && [ "$res" != byte-identical ]; then
		cg_pass "$what, [${kind}_plain]: get fails ($plain_status)"
	else
		cg_fail "$what, [${kind}_plain]: get fails" \
			"smbclient exit $rc, '$status', $res"
	fi
	for mode in $MODES; do
		share=${kind}_$mode
		get "$share"
		res=$(what_got)
		name="$what, [$share]: the plain share's error or right bytes"
		if [ -n "$status" ] || [ "$rc" -ne 0 ]; then
			if [ "$status" = "$plain_status" ] &&
				[ "$rc" -eq "$plain_rc" ]; then
				cg_pass "$name ($status)"
			else
				why="smbclient exit $rc '$status', plain"
				why="$why exit $plain_rc '$plain_status'"
				cg_fail "$name" "$why"
			fi
		elif [ "$res" = byte-identical ]; then
			cg_pass "$name (right bytes)"
		else
			why="smbclient reported success and got $res"
			cg_fail "$name" "$why (plain: '$plain_status')"
		fi
	done
done

# The same with a pause of a second right before the read that fails:
# it is then the first read of a new second, when cacheguard rewrites
# its status file. smb_readpause reads 1 MiB at a time, so the read
# after the pause covers the bad byte, and prints its error: errno as
# libsmbclient maps the NT_STATUS (NT_STATUS_IO_DEVICE_ERROR is EINVAL,
# NT_STATUS_ACCESS_DENIED EACCES, NT_STATUS_OBJECT_NAME_COLLISION EEXIST)
pause_at=$((EIO_AT / MiB * MiB))
for kind in eio eios; do
	what="EIO at $EIO_AT after a pause, async reads"
	[ "$kind" = eios ] && what="EIO at $EIO_AT after a pause, sync reads"
	plain_err=
	for mode in plain $MODES; do
		share=${kind}_$mode
		sync
		cg_drop_cache "$big"
		out=$("$CG_BUILD/smb_readpause" -p "$CG_PORT" \
			-U "$CG_USER%$CG_PASS" -b "$pause_at" -t 1.2 \
			"//127.0.0.1/$share/big.bin" "$big" 2>&1)
		prc=$?
		err=$(sed -n 's/^read at [0-9]*: //p' <<<"$out" | head -n 1)
		if [ "$mode" = plain ]; then
			plain_err=$err
			if [ "$prc" -eq 2 ] && [ -n "$err" ]; then
				cg_pass "$what, [$share]: the read fails ($err)"
			else
				cg_fail "$what, [$share]: the read fails" \
					"exit $prc: $(tail -n 1 <<<"$out")"
			fi
			continue
		fi
		name="$what, [$share]: the plain share's error or right bytes"
		if [ "$prc" -eq 0 ]; then
			cg_pass "$name (right bytes)"
		elif [ "$prc" -eq 2 ] && [ "$err" = "$plain_err" ]; then
			cg_pass "$name ($err)"
		else
			why="exit $prc: '$(tail -n 1 <<<"$out")'"
			cg_fail "$name" "$why, the plain share: '$plain_err'"
		fi
	done
done

# --- c. short reads from the lower module ----------------------------------
get short_plain
plain_res=$(what_got)
plain_got=$CG_ROOT/got.plain
rm -f "$plain_got"
[ -f "$got" ] && mv "$got" "$plain_got"
cg_pass "short reads, [short_plain]: exit $rc${status:+ $status}, $plain_res"
for mode in $MODES; do
	share=short_$mode
	get "$share"
	res=$(what_got)
	name="short reads, [$share]: the plain share's result"
	if [ "$res" = byte-identical ]; then
		cg_pass "$name (byte-identical)"
	elif [ "$plain_res" != byte-identical ] && [ -f "$got" ] &&
		cmp -s "$got" "$plain_got"; then
		cg_pass "$name ($res)"
	else
		why="exit $rc${status:+ $status}, $res"
		cg_fail "$name" "$why; plain: $plain_res"
	fi
done

# Only foreign fd shares may say that a lower module owns I/O
others=0
for kind in eio eios short; do
	for mode in $MODES; do
		n=$(owns_io_levels "${kind}_$mode" | wc -l)
		others=$((others + n))
	done
done
cg_expect "no 'a lower module owns I/O' line for shares with real fds" \
	test "$others" = 0
cg_expect "no smbd panicked" test "$(grep -c PANIC "$CG_LOG")" = 0
# sendfile failing with EINTR after the header, in the first read of a
# new second (when cacheguard rewrites its status file): smbd must still
# see EINTR and send the data with fake_sendfile; any other errno makes
# it drop the client ("sendfile failed ... Terminating")
for mode in plain dontneed; do
	share=sfeintr_$mode
	sync
	cg_drop_cache "$big"
	out=$("$CG_BUILD/smb_readpause" -p "$CG_PORT" -U "$CG_USER%$CG_PASS" \
		-b "$pause_at" -t 1.2 "//127.0.0.1/$share/big.bin" "$big" 2>&1)
	cg_expect "sendfile EINTR after the header, [$share]: right bytes" \
		grep -q '^ok ' <<<"$out"
done
cg_expect "[sfeintr_dontneed] reads went through SMB_VFS_SENDFILE" \
	grep -qE "big.bin: .*mode dontneed;.* sendfile [1-9]" "$CG_LOG"
cg_expect "smbd took the EINTR as 'header sent', not as a failure" \
	test -z "$(grep "sendfile failed" "$CG_LOG")"
exit 0
