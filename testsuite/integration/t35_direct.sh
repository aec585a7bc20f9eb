#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# direct mode through real smbd on ext4, cold cache: a 1 GiB copy stays
# out of the page cache and is served by O_DIRECT reads; reads of every
# size and alignment, on both smbd read paths, return the right bytes;
# writes (through SMB, from a second SMB client, and local, unsynced) and
# a truncate during a stream are seen at once; clients vanishing
# mid-stream crash nothing; smbd without O_DIRECT falls back with one
# warning; four copies at once: each direct with a prefetch buffer, or,
# where the budget has no room left for one, uncached (dontcache), never
# through the cache; the budget, the whole server's, sends a second
# stream to its next mode, in the same smbd process or another, and a
# killed smbd gives its share back.
. "$(dirname "$0")/../lib/script.sh" "direct mode" "$@"

direct=("vfs objects = cacheguard" "cacheguard:mode = direct")

cg_smbd_init
if [ "$(stat -f -c %T "$CG_SHARE")" != ext2/ext3 ]; then
	cg_skip "direct mode" "the share $CG_SHARE is not on ext4"
	exit 0
fi
cg_share plain
cg_share direct "${direct[@]}"
cg_share directsync "${direct[@]}" "aio read size = 0"
cg_share directsf "${direct[@]}" "use sendfile = yes" "aio read size = 0"
cg_share budget "${direct[@]}" "cacheguard:direct memory = 12M"
cg_smbd_start || { cg_fail "smbd starts" "see above"; exit 1; }

verify()
{
	"$CG_BUILD/smb_verify" -p "$CG_PORT" -U "$CG_USER%$CG_PASS" "$@" 2>&1
}

check()
{
	"$CG_BUILD/smb_direct_check" -p "$CG_PORT" -U "$CG_USER%$CG_PASS" \
		"$@" 2>&1
}

# summary FILE: the last close summary line of FILE in the log
summary()
{
	grep -E " $1: size [0-9]+ read " "$CG_LOG" | tail -n 1
}

# served PATH-NAME SUMMARY: the bytes a summary says were served that way
served()
{
	echo "$2" | sed -n "s/.* $1 \([0-9]*\).*/\1/p"
}

cold()
{
	sync
	cg_drop_cache "$1"
}

# paused_reader BYTES SECONDS //127.0.0.1/SHARE/FILE LOCAL-COPY...: a
# client (smb_readpause) in the background, its pid in reader and its
# lines in $CG_ROOT/pause.out, reads each FILE and compares it with its
# copy; returns once it has paused after BYTES of the first, until
# $CG_ROOT/go is made (SECONDS at most)
paused_reader()
{
	local bytes=$1 secs=$2
	shift 2
	rm -f "$CG_ROOT/paused" "$CG_ROOT/go"
	"$CG_BUILD/smb_readpause" -p "$CG_PORT" -U "$CG_USER%$CG_PASS" \
		-b "$bytes" -r "$CG_ROOT/paused" -w "$CG_ROOT/go" -t "$secs" \
		"$@" >"$CG_ROOT/pause.out" 2>&1 &
	reader=$!
	cg_wait_file "$CG_ROOT/paused"
}

# held: bytes of direct memory the server's smbd processes hold now
budget=$CG_ROOT/state/cacheguard/budget
held()
{
	"$CG_BUILD/cgcache" budget "$budget" $((12 * MiB))
}

# drained WHAT: every stream has given its direct memory back, within a
# minute: smbd serves a vanished client's queued reads before it notices
# (8-10 s on the plain share here), and the next test needs it all
drained()
{
	local i

	for i in $(seq 1 120); do
		[ "$(held)" = 0 ] && break
		sleep 0.5
	done
	cg_expect "$1: their direct memory comes back" test "$(held)" = 0
}

# --- a cold 1 GiB copy ---------------------------------------------------
big=$CG_SHARE/big.bin
head -c $((1024 * MiB)) /dev/urandom >"$big"
sum=$(md5sum <"$big" | cut -d' ' -f1)
cold "$big"
cg_sample_start "$big"
cg_smbclient direct "get big.bin $CG_ROOT/back.bin" >"$CG_ROOT/copy.out" 2>&1
cg_sample_stop
resident=$(cg_resident "$big")
peak=$CG_PEAK
cg_expect "1 GiB copy in direct mode is byte-identical" \
	test "$(md5sum <"$CG_ROOT/back.bin" | cut -d' ' -f1)" = "$sum"
rm -f "$CG_ROOT/back.bin"
cg_expect_le "resident after the direct copy" "$resident" $((16 * MiB))
cg_expect_le "peak resident during the direct copy" "$peak" \
	$((16 * MiB))
line=$(summary big.bin)
cg_expect "the copy ran in mode direct" grep -q "mode direct" <<<"$line"
cg_expect_ge "most of the copy was served direct" \
	"$(served direct "$line")" $((1024 * MiB * 9 / 10))

# --- the prefetch buffer on ordinary pages --------------------------------
# The buffer asks for transparent huge pages; where THP is "never" the
# kernel gives 4 KiB pages, and the copy is only made of smaller requests.
thp_sys=/sys/kernel/mm/transparent_hugepage/enabled
thp=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$thp_sys" 2>/dev/null)
if [ -w "$thp_sys" ] && [ -n "$thp" ]; then
	echo never >"$thp_sys"
	small=$CG_SHARE/small.bin
	head -c $((64 * MiB)) /dev/urandom >"$small"
	cold "$small"
	cg_smbclient direct "get small.bin $CG_ROOT/small.back" >/dev/null 2>&1
	echo "$thp" >"$thp_sys"
	cg_expect "THP never: the copy is byte-identical" \
		cmp -s "$small" "$CG_ROOT/small.back"
	cg_expect "THP never: it was served direct" \
		grep -q "small.bin: .*mode direct" "$CG_LOG"
	rm -f "$small" "$CG_ROOT/small.back"
else
	cg_skip "direct mode with THP never" "$thp_sys is not writable here"
fi

# --- use sendfile = yes, aio read size = 0 --------------------------------
# Without aio, smbd reads synchronously: sendfile(2), which the module
# declines for a stream that does not read through the cache, then its
# own SMB_VFS_PREAD (fake_sendfile, 64 KiB pieces, on the main thread),
# where no prefetch fill could report: a direct stream's synchronous
# reads go through the page cache and are dropped behind. The bytes must
# be right and the file as little cached as t20's bound; the rate is
# reported beside the direct share's, same run.
ra=$(cg_device_readahead "$CG_SHARE")
sync_bound=$((8 * MiB + ra + 32 * MiB))
rate()
{
	local share=$1 t0 t1

	cold "$big"
	t0=$(date +%s.%N)
	cg_smbclient "$share" "get big.bin $CG_ROOT/back.bin" \
		>"$CG_ROOT/copy.out" 2>&1
	t1=$(date +%s.%N)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", 1024 / (b - a) }'
}
r_direct=$(rate direct)
r_sf=$(rate directsf)
echo "cold 1 GiB copy: direct $r_direct MiB/s, with use sendfile = yes" \
	"$r_sf MiB/s"
cg_expect "use sendfile = yes: the direct copy is byte-identical" \
	test "$(md5sum <"$CG_ROOT/back.bin" | cut -d' ' -f1)" = "$sum"
rm -f "$CG_ROOT/back.bin"
line=$(summary big.bin)
cg_expect "use sendfile = yes: smbd asked for sendfile" \
	grep -qE "sendfile [1-9]" <<<"$line"
cg_expect_ge "use sendfile = yes: the reads went through the cache" \
	"$(served buffered "$line")" $((1024 * MiB * 9 / 10))
cg_expect_le "use sendfile = yes: ... and were dropped behind" \
	"$(cg_resident "$big")" "$sync_bound"

# --- every size and alignment --------------------------------------------
v=$CG_SHARE/v.bin
head -c $((256 * MiB + 12345)) /dev/urandom >"$v"
for args in "-n 2000 random" "-n 1 seq" "-n 4 mixed" "-n 1 -m 100000 seq"; do
	cold "$v"
	# shellcheck disable=SC2086
	out=$(verify -s 7 $args //127.0.0.1/direct/v.bin "$v")
	cg_expect "smb_verify $args: every byte right" \
		grep -q '^ok ' <<<"$out"
done
cg_expect_ge "the verify runs were served direct" \
	"$(served direct "$(summary v.bin)")" 1
cold "$v"
out=$(verify -s 3 -n 1 seq //127.0.0.1/directsync/v.bin "$v")
cg_expect "synchronous reads (aio read size = 0): every byte right" \
	grep -q '^ok ' <<<"$out"
line=$(summary v.bin)
cg_expect "synchronous reads went through SMB_VFS_PREAD, buffered" \
	grep -qE "buffered [1-9][0-9]* .* pread [1-9]" <<<"$line"
cg_expect_le "synchronous reads: ... and were dropped behind" \
	"$(cg_resident "$v")" "$sync_bound"

# --- coherence: the file changes under the reader -------------------------
c=$CG_SHARE/c.bin
for mode in smbwrite clientwrite localwrite tickwrite truncate; do
	head -c $((256 * MiB)) /dev/urandom >"$c"
	# the SMB writer writes a file of its own user; the reader too
	chown "$CG_USER" "$c"
	cold "$c"
	out=$(check -s 5 "$mode" //127.0.0.1/direct/c.bin "$c")
	cg_expect "$mode during a stream: the reader sees the current bytes" \
		grep -q '^ok ' <<<"$out"
	[ "$mode" = truncate ] || cg_expect "$mode: writes happened" \
		grep -qE '^[1-9][0-9]* writes' <<<"$out"
	cg_expect "$mode: the stream was direct" \
		grep -qE "direct [1-9]" <<<"$(summary c.bin)"
done
cg_expect "smbd answers after the truncate" \
	cg_smbclient direct "ls c.bin"

# --- clients that vanish while fills and reads are in flight ---------------
for delay in 0.3 0.6 0.9; do
	cold "$big"
	cg_smbclient direct "get big.bin /dev/null" >/dev/null 2>&1 &
	client=$!
	sleep "$delay"
	kill -9 "$client" 2>/dev/null
	wait "$client" 2>/dev/null
done
sleep 1
cg_expect "smbd answers after clients vanished mid-stream" \
	cg_smbclient direct "ls big.bin"
cg_expect "no smbd panicked" test "$(grep -c PANIC "$CG_LOG")" = 0
drained "clients that vanished"

# --- two streams, memory for one ------------------------------------------
p1=$CG_SHARE/p1.bin
p2=$CG_SHARE/p2.bin
head -c $((64 * MiB)) /dev/urandom >"$p1"
head -c $((64 * MiB)) /dev/urandom >"$p2"
cold "$p1"
cold "$p2"
out=$(check pair //127.0.0.1/budget/p1.bin "$p1" //127.0.0.1/budget/p2.bin \
	"$p2")
cg_expect "two streams over a 12M direct memory: every byte right" \
	grep -q '^ok ' <<<"$out"
line=$(summary p1.bin)
cg_expect "the first stream got the prefetch memory" \
	grep -qE "mode direct; .* direct [1-9]" <<<"$line"
line=$(grep -E " p2.bin: size" "$CG_LOG" | head -n 1)
cg_expect "the second stream, over budget, read uncached" \
	grep -qE "mode dontcache; .* dontcache [1-9]" <<<"$line"
cg_expect "... and its summary says why" \
	grep -q "no room in direct memory for its prefetch" <<<"$line"
cg_expect "the second file read again, alone, gets direct" \
	grep -q "mode direct" <<<"$(summary p2.bin)"

# --- four copies at once, the default direct memory -----------------------
# Four streams' 8 MiB prefetch buffers hold the whole default 32M, and a
# stream grows its buffer only below 32M less one starting buffer: a
# copy that starts while others run always finds room for its own, so
# three of the four at least read direct. A request the prefetch does
# not cover (a MISS) is still read with O_DIRECT: a direct stream serves
# nothing buffered. One that found no room reads uncached (dontcache)
# from its start, its footprint t20's bound.
readahead=$(cg_device_readahead "$CG_SHARE")
qs=()
for i in 1 2 3 4; do
	head -c $((96 * MiB)) /dev/urandom >"$CG_SHARE/q$i.bin"
	cold "$CG_SHARE/q$i.bin"
	qs+=("$CG_SHARE/q$i.bin")
done
cg_sample_start "${qs[@]}"
pids=()
for i in 1 2 3 4; do
	cg_smbclient direct "get q$i.bin $CG_ROOT/q$i.back" \
		>"$CG_ROOT/q$i.out" 2>&1 &
	pids+=($!)
done
wait "${pids[@]}"
cg_sample_stop
peak=$CG_PEAK
ndirect=0
nroom=0
for i in 1 2 3 4; do
	line=$(summary "q$i.bin")
	cg_expect "four direct copies: copy $i is byte-identical" \
		cmp -s "$CG_ROOT/q$i.back" "$CG_SHARE/q$i.bin"
	if grep -q "mode direct;" <<<"$line"; then
		ndirect=$((ndirect + 1))
		cg_expect "four direct copies: copy $i served nothing buffered" \
			test "$(served buffered "$line")" = 0
	elif grep -qE "mode dontcache;.*no room in direct memory" \
		<<<"$line"; then
		nroom=$((nroom + 1))
	else
		cg_fail "four direct copies: copy $i direct, or no room" \
			"$line"
	fi
	rm -f "$CG_ROOT/q$i.back" "$CG_SHARE/q$i.bin"
done
echo "four copies: $ndirect direct, $nroom without room"
cg_expect_ge "four direct copies: three at least read direct" "$ndirect" 3
cg_expect_le "four direct copies: peak resident, all four" "$peak" \
	$((4 * MiB + nroom * (8 * MiB + readahead + 32 * MiB)))
drained "four direct copies"

# --- the budget is the whole server's; a killed smbd gives its part back --
# A client paused in a direct stream holds 8 MiB of the share's 12M; a
# second client is another smbd process and must not get 8 MiB more.
cold "$p1"
cold "$p2"
rm -f "$CG_ROOT/p2.back"
paused_reader $((24 * MiB)) 60 //127.0.0.1/budget/p1.bin "$p1"
cg_expect "a paused direct stream holds 8 MiB of the server's budget" \
	test "$(held)" = $((8 * MiB))
cg_smbclient budget "get p2.bin $CG_ROOT/p2.back" >/dev/null 2>&1
cg_expect "a second client's copy is right" cmp -s "$CG_ROOT/p2.back" "$p2"
cg_expect "a second client, another smbd process, gets no more" \
	grep -q "no room in direct memory" <<<"$(summary p2.bin)"
cg_expect "... and reads uncached" \
	grep -qE "mode dontcache; .* dontcache [1-9]" <<<"$(summary p2.bin)"
victim=$(cg_smbd_holding p1.bin | tail -n 1)
cg_expect "the paused client's smbd is found (${victim:-none})" \
	test -n "$victim"
[ -n "$victim" ] && kill -9 "$victim"
# its client would wait out its pause (60 s) before it found the
# connection gone
kill "$reader" 2>/dev/null
wait "$reader"
# a signal is sent, not yet acted on: the units (OFD locks on the budget
# file) go when the process's descriptors close as its last thread exits
# (10 s at most). The leader shows Z as soon as it has exited itself,
# while its other threads (the pool's) may still be exiting, holding the
# descriptor table: seen under ASan, where exit is slow
for i in $(seq 1 100); do
	state=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' \
		"/proc/${victim:-0}/status" 2>/dev/null)
	threads=$(ls "/proc/${victim:-0}/task" 2>/dev/null | wc -l)
	[ -z "$state" ] && break
	[ "$state" = Z ] && [ "$threads" -le 1 ] && break
	sleep 0.1
done
cg_expect "the units of a killed smbd come back at once (its state: ${state:-gone}, threads ${threads:-0})" \
	test "$(held)" = 0
cold "$p2"
cg_smbclient budget "get p2.bin $CG_ROOT/p2.back" >/dev/null 2>&1
cg_expect "... and the next client's stream is direct" \
	grep -qE "mode direct; .* direct [1-9]" <<<"$(summary p2.bin)"
rm -f "$CG_ROOT/p2.back"
# a client that has read to the end but keeps the file open holds nothing
cold "$p1"
paused_reader $((64 * MiB)) 60 //127.0.0.1/budget/p1.bin "$p1"
cg_expect "a stream read to its end, file still open, holds no budget" \
	test "$(held)" = 0
touch "$CG_ROOT/go"
wait "$reader"
cg_expect "... its bytes were right" grep -q '^ok ' "$CG_ROOT/pause.out"
cg_expect "... served direct" \
	grep -qE "mode direct; .* direct [1-9]" <<<"$(summary p1.bin)"

# --- one file cannot be reopened: only that file loses direct ------------
# The O_DIRECT reopen checks permissions again, as the client's user: a
# file made unreadable after the client opened it fails with EACCES.
# That is the file's trouble, not its filesystem's.
if [ "$CG_USER" != root ]; then
	a=$CG_SHARE/denied.bin
	b=$CG_SHARE/after.bin
	head -c $((64 * MiB)) /dev/urandom >"$a"
	head -c $((64 * MiB)) /dev/urandom >"$b"
	cp "$a" "$CG_ROOT/denied.copy"
	cp "$b" "$CG_ROOT/after.copy"
	cold "$a"
	cold "$b"
	paused_reader $MiB 30 //127.0.0.1/direct/denied.bin \
		"$CG_ROOT/denied.copy" //127.0.0.1/direct/after.bin \
		"$CG_ROOT/after.copy"
	chmod 000 "$a"
	touch "$CG_ROOT/go"
	wait "$reader"
	cg_expect "a file unreadable mid-stream still reads right" \
		test "$(grep -c '^ok ' "$CG_ROOT/pause.out")" = 2
	cg_expect "... it is served uncached, for this file only" \
		grep -qE "mode dontcache; .*no O_DIRECT for this file" \
		<<<"$(summary denied.bin)"
	cg_expect "the next file, in the same smbd, is served direct" \
		grep -qE "mode direct; .* direct [1-9]" <<<"$(summary after.bin)"
else
	cg_skip "a file that cannot be reopened" "root reopens any file"
fi

# --- no O_DIRECT at all: fallback with one warning -------------------------
cg_smbd_stop
shim=$CG_ROOT/shim_nodirect.so
cat >"$CG_ROOT/shim_nodirect.c" <<'EOF'
/* open() and friends fail with EINVAL when asked for O_DIRECT */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>

#define SHIM(name, ...)							\
	int name(__VA_ARGS__, int flags, ...)				\
	{								\
		static int (*real)();					\
		va_list ap;						\
		mode_t mode;						\
		va_start(ap, flags);					\
		mode = va_arg(ap, mode_t);				\
		va_end(ap);						\
		if (flags & O_DIRECT) {					\
			errno = EINVAL;					\
			return -1;					\
		}							\
		if (real == NULL) {					\
			real = dlsym(RTLD_NEXT, #name);			\
		}							\
		return SHIM_CALL;					\
	}

#define SHIM_CALL real(path, flags, mode)
SHIM(open, const char *path)
SHIM(open64, const char *path)
#undef SHIM_CALL
#define SHIM_CALL real(dirfd, path, flags, mode)
SHIM(openat, int dirfd, const char *path)
SHIM(openat64, int dirfd, const char *path)
EOF
cg_shim shim_nodirect || exit 0
before=$(wc -l <"$CG_LOG")
LD_PRELOAD=$shim cg_smbd_start || { cg_fail "smbd starts with the shim" \
	"see above"; exit 1; }
cold "$big"
cg_smbclient direct "get big.bin $CG_ROOT/back.bin" >"$CG_ROOT/copy.out" 2>&1
cg_expect "without O_DIRECT the copy is byte-identical" \
	test "$(md5sum <"$CG_ROOT/back.bin" | cut -d' ' -f1)" = "$sum"
rm -f "$CG_ROOT/back.bin"
warnings=$(tail -n +"$((before + 1))" "$CG_LOG" |
	grep -cE '^\[[0-9/:. ]+,  [01][],].*\.\./modules/[a-z_]*cacheguard')
cg_expect "exactly one warning line for the missing O_DIRECT" \
	test "$warnings" = 1
cg_expect "the warning names O_DIRECT" \
	grep -q "has no O_DIRECT" <(tail -n +"$((before + 1))" "$CG_LOG")
cg_expect "the file fell back to dontcache, the next mode" \
	grep -q "mode dontcache" <<<"$(summary big.bin)"
exit 0
