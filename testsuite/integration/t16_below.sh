#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Samba's own modules listed below cacheguard (issue 22, point 5), each
# beside a reference share that has the module alone, one 64 MiB get and
# one put per share:
#  a. full_audit below (logging into smbd's log): it logs as many reads
#     and writes of the file as on the reference share, and nothing is
#     left cached; cacheguard says at connect that the module must see
#     every read and write, and how to keep the mode. Listed above
#     cacheguard, full_audit logs as many and the stream stays direct.
#  b. commit below (commit:dthresh = 4M): smbd makes at least the
#     fdatasync(2) calls for the upload that commit's rule gives for
#     every byte seen, as on the reference share (strace).
#  c. io_uring below, an I/O engine: the bytes are right both ways and
#     the stream keeps its mode (served direct).
#  d. catia fruit streams_xattr acl_xattr fileid below: the stream keeps
#     its mode, the bytes and a named stream of the file are right, and
#     cacheguard says nothing about them.
# The module of 4cff591 served dontcache and direct streams on the
# descriptor itself: full_audit logged a fraction of the reads and
# writes, and commit saw none of the dontcache writes.
CG_LOG_LEVEL="1 cacheguard:10 full_audit:1"
. "$(dirname "$0")/../lib/script.sh" "Samba's modules below cacheguard" "$@"

SIZE=$((64 * MiB + 4321))
small=("cacheguard:min file size = 1M" "cacheguard:stream trigger = 1M")
audit=("full_audit:success = pread pread_recv pwrite pwrite_recv sendfile recvfile"
	"full_audit:failure = none" "full_audit:syslog = false"
	"full_audit:prefix = %S")

cg_smbd_init
cg_share ref_audit "vfs objects = full_audit" "${audit[@]}"
for mode in dontcache direct; do
	cg_share "audit_$mode" "vfs objects = cacheguard full_audit" \
		"cacheguard:mode = $mode" "${small[@]}" "${audit[@]}"
done
cg_share above_direct "vfs objects = full_audit cacheguard" \
	"cacheguard:mode = direct" "${small[@]}" "${audit[@]}"
cg_share ref_commit "vfs objects = commit" "commit:dthresh = 4M"
cg_share commit_dontcache "vfs objects = cacheguard commit" \
	"cacheguard:mode = dontcache" "${small[@]}" "commit:dthresh = 4M"
for mode in dontcache direct; do
	cg_share "uring_$mode" "vfs objects = cacheguard io_uring" \
		"cacheguard:mode = $mode" "${small[@]}"
done
cg_share names_direct \
	"vfs objects = cacheguard catia fruit streams_xattr acl_xattr fileid" \
	"cacheguard:mode = direct" "${small[@]}"
cg_smbd_start || { cg_fail "smbd starts" "see above"; exit 1; }

src=$CG_ROOT/src.bin
got=$CG_ROOT/got.bin
cg_random_file "$src" "$SIZE" "$CG_SHARE/big.bin"

# get SHARE: a cold get of big.bin, checked byte for byte
get()
{
	rm -f "$got"
	cg_drop_cache "$CG_SHARE/big.bin"
	cg_smbclient "$1" "get big.bin $got" >"$CG_ROOT/get.out" 2>&1
	cg_expect "[$1] get is byte-identical" cmp "$src" "$got"
}

# put SHARE: an upload of up_SHARE.bin, checked byte for byte
put()
{
	rm -f "$CG_SHARE/up_$1.bin"
	cg_smbclient "$1" "put $src up_$1.bin" >"$CG_ROOT/put.out" 2>&1
	cg_expect "[$1] put is byte-identical" cmp "$src" "$CG_SHARE/up_$1.bin"
}

# audited SHARE OPS FILE: full_audit's lines for SHARE, operations OPS
# (an alternation), file FILE (full_audit logs its full path)
audited()
{
	grep -cE "^ *$1\|($2)\|ok\|.*/$3\$" "$CG_LOG"
}

# direct_bytes SHARE FILE: what the close summary says was served direct
direct_bytes()
{
	awk -v f="$2: size" 'index($0, f) {
		match($0, /direct [0-9]+;/)
		n = substr($0, RSTART + 7, RLENGTH - 8)
	} END { print n + 0 }' "$CG_LOG"
}

reads="pread|pread_recv|sendfile"
writes="pwrite|pwrite_recv|recvfile"

# --- a. full_audit below, and above ---------------------------------------
get ref_audit
put ref_audit
ref_r=$(audited ref_audit "$reads" big.bin)
ref_w=$(audited ref_audit "$writes" up_ref_audit.bin)
cg_expect_ge "[ref_audit] full_audit logged the get's reads" "$ref_r" 8
cg_expect_ge "[ref_audit] full_audit logged the put's writes" "$ref_w" 8
for share in audit_dontcache audit_direct above_direct; do
	get "$share"
	cached=$(($(cg_resident "$CG_SHARE/big.bin") / MiB))
	put "$share"
	cg_expect "[$share] full_audit logged every read ($ref_r)" \
		test "$(audited "$share" "$reads" big.bin)" = "$ref_r"
	cg_expect "[$share] full_audit logged every write ($ref_w)" \
		test "$(audited "$share" "$writes" "up_$share.bin")" = "$ref_w"
	cg_expect_le "[$share] what the get left cached (MiB)" "$cached" 16
done
for share in audit_dontcache audit_direct; do
	cg_expect "[$share] the log says full_audit sees the streams" \
		grep -q "share \[$share\]: full_audit below cacheguard must see every read and write" \
		"$CG_LOG"
done
cg_expect "[above_direct] listed above cacheguard, the stream stays direct" \
	test "$(direct_bytes above_direct big.bin)" -gt $((32 * MiB))

# --- b. commit below ------------------------------------------------------
# fdatasyncs SHARE: a put to SHARE under strace; sets syncs, the
# fdatasync(2) calls smbd made for it
fdatasyncs()
{
	local out=$CG_ROOT/strace.$1 pid

	strace -f -qq -e trace=fdatasync -o "$out" -p "$CG_SMBD_PID" &
	pid=$!
	sleep 1
	put "$1"
	sleep 0.5
	kill "$pid"
	wait "$pid" 2>/dev/null
	syncs=$(grep -c "fdatasync(" "$out")
}
# commit syncs once more than dthresh (4 MiB) was written since its last
# sync; smbclient's writes are at most 8 MiB, so a module that sees every
# byte syncs at least once per 12 MiB: 5 times for 64 MiB. (How many more
# varies from run to run, 8 or 9 on the reference share itself.)
least=$((SIZE / (12 * MiB)))
if command -v strace >/dev/null; then
	fdatasyncs ref_commit
	cg_expect_ge "[ref_commit] commit fdatasyncs a 64 MiB put" "$syncs" \
		"$least"
	fdatasyncs commit_dontcache
	cg_expect_ge "[commit_dontcache] commit below sees every write" \
		"$syncs" "$least"
else
	cg_skip "[commit_dontcache] fdatasync calls" "no strace (make deps)"
fi

# --- c. io_uring below ----------------------------------------------------
for mode in dontcache direct; do
	get "uring_$mode"
	put "uring_$mode"
done
cg_expect "[uring_direct] the stream stays direct" \
	test "$(direct_bytes uring_direct big.bin)" -gt $((32 * MiB))

# --- d. modules of names, streams and ACLs below ---------------------------
get names_direct
put names_direct
cg_expect "[names_direct] the stream stays direct" \
	test "$(direct_bytes names_direct big.bin)" -gt $((32 * MiB))
printf 'a named stream of big.bin\n' >"$CG_ROOT/side.txt"
cg_smbclient names_direct "put $CG_ROOT/side.txt up_names_direct.bin:side" \
	>"$CG_ROOT/side.out" 2>&1
cg_smbclient names_direct "get up_names_direct.bin:side $CG_ROOT/side.got" \
	>>"$CG_ROOT/side.out" 2>&1
cg_expect "[names_direct] a named stream reads back as written" \
	cmp "$CG_ROOT/side.txt" "$CG_ROOT/side.got"
for share in names_direct uring_direct uring_dontcache above_direct; do
	cg_expect "[$share] no module below must see the streams" \
		sh -c "! grep -q 'share \[$share\]: .* below cacheguard must see' '$CG_LOG'"
done
