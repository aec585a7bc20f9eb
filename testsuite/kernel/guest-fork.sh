# SPDX-License-Identifier: GPL-3.0-or-later
# shellcheck shell=bash disable=SC2034,SC2154
#
# O_DIRECT into memory of a process that forks (sourced by guest-suite.sh;
# issue 47, point 3). Block direct I/O takes plain page references before
# Linux 6.5 and pins pages (FOLL_PIN) since. After a fork() during such a
# read on 6.1, the parent's next write to a page of the read's buffer
# copies that page, and the device fills the old one: the parent sees
# the bytes the page held before the read. Direct mode reads a MISS with
# O_DIRECT straight into smbd's own read buffer (cg_dio_inplace), whose
# first and last pages smbd's main thread shares with talloc and malloc
# headers, and smbd forks without waiting for its pool's reads (dfree
# command, quota and print commands, preexec: smbrun).
#
#   fork_shares DIR	before cg_smbd_start: a dfree command, and shares
#			on DIR: fork_direct (direct, its prefetch) and
#			fork_miss (direct, no prefetch: every client read
#			is a MISS, read on its own)
#   dio_fork_checks DIR	the kernel's side, without smbd
#			(testsuite/tools/dio_fork)
#   fork_smb_checks DIR	the same through smbd
#
# dio_fork_checks: the reproducer, one thread reading O_DIRECT into a
# heap buffer whose first and last pages a second thread keeps writing,
# a third forking in a loop. Before 6.5 it must see stale bytes (else it
# has lost its power to fail), and pass both ways the fix reads: into
# pages with MADV_DONTFORK, and into a bounce buffer of its own with
# MADV_DONTFORK, then copied. From 6.5 on it must pass as it is, with
# reads a fork overlapped.
#
# fork_smb_checks: the kernel's SMB client copies a file of each share
# with cp on ONE mount (one connection: one smbd process) while stat -f
# on the same mount loops, each statfs a QUERY_INFO whose dfree command
# that smbd forks; every copy compared with cmp. smbd's defaults for the
# read path: aio read size 1 (reads in its thread pool, where a read
# runs while the main thread forks), use sendfile no. It fails on 6.1 while
# direct mode reads in place there; it checks that the dfree commands
# ran, all forked by one smbd, and that the module's direct reads ran
# (MISSes for fork_miss), so that it cannot pass by testing nothing.

# dio_fork's seconds per mode where every byte must be right; where the
# reproducer must fail (before 6.5) it stops at the first wrong bytes
# (within 7 s in 20 runs on 6.1 under TCG), and is given up to 60 s
fork_dio_secs=15
# the copies' seconds per share (a copy at a time while the time lasts):
# on 6.1 the module of 9b36f58 gave wrong bytes within 19-48 s without
# prefetch and 30-92 s with it (7 runs each, a copy taking 20-30 s);
# 9befe8a made 8 right copies on each share
fork_smb_secs=120

fork_shares()
{
	local dir=$1 fs

	fs=$(basename "$dir")
	fork_count=$CG_ROOT/dfree.count
	fork_dfree=$CG_ROOT/dfree.sh
	# run by smbd as the client's user: its parent is the smbd process
	cat >"$fork_dfree" <<EOF
#!/bin/sh
echo "\$PPID" >>$fork_count
echo "4194304 2097152"
EOF
	chmod 0755 "$fork_dfree"
	: >"$fork_count"
	chmod 0666 "$fork_count"
	cg_share_at "${fs}_fork_direct" "$dir" "vfs objects = cacheguard" \
		"cacheguard:mode = direct" "${tune[@]}" \
		"dfree command = $fork_dfree"
	cg_share_at "${fs}_fork_miss" "$dir" "vfs objects = cacheguard" \
		"cacheguard:mode = direct" "${tune[@]}" \
		"cacheguard:direct prefetch = 0" \
		"dfree command = $fork_dfree"
}

# dio_fork_run MODE SECS FILE: dio_fork's output shown, its exit status
# in dio_rc
dio_fork_run()
{
	local out

	out=$("$CG_BUILD/dio_fork" -m "$1" -t "$2" -f 32M "$3" 2>&1)
	dio_rc=$?
	sed "s/^/[dio_fork $1] /" <<<"$out"
}

dio_fork_checks()
{
	local dir=$1 f=$1/dio_fork.bin mode start

	if kernel_at_least 6.5; then
		start=$SECONDS
		dio_fork_run heap "$fork_dio_secs" "$f"
		cg_expect "[dio_fork heap] O_DIRECT into a heap buffer while the process forks: every byte right on $kver (pinned pages), reads a fork overlapped ($((SECONDS - start)) s)" \
			test "$dio_rc" = 0
	else
		start=$SECONDS
		dio_fork_run heap 60 "$f"
		cg_expect "[dio_fork heap] O_DIRECT into a heap buffer while the process forks: stale bytes on $kver (plain references; the reproducer can fail) ($((SECONDS - start)) s)" \
			test "$dio_rc" = 1
	fi
	for mode in dontfork bounce; do
		start=$SECONDS
		dio_fork_run "$mode" "$fork_dio_secs" "$f"
		cg_expect "[dio_fork $mode] O_DIRECT into MADV_DONTFORK memory while the process forks: every byte right on $kver, reads a fork overlapped ($((SECONDS - start)) s)" \
			test "$dio_rc" = 0
	done
	rm -f "$f"
}

# fork_diff A B: where B's bytes differ from A's, page by page (4 KiB
# of the file): the first and last wrong byte of each page and how many
fork_diff()
{
	cmp -l "$1" "$2" 2>/dev/null | head -n 1000000 | awk '
		function show() {
			if (pages <= 8)
				printf "  page at %d (%d into its MiB): %d bytes differ in [%d, %d)\n",
					p, p % 1048576, c, s - p, e - p
		}
		{ o = $1 - 1; n++ }
		n == 1 || int(o / 4096) * 4096 != p {
			if (n > 1) show()
			pages++; p = int(o / 4096) * 4096; s = o; c = 0
		}
		{ e = o + 1; c++ }
		END {
			if (n == 0) exit
			show()
			printf "  %d bytes differ in %d pages%s\n", n, pages,
				n == 1000000 ? " (counted to 1000000)" : ""
		}'
}

# fork_copies SHARE: copies of fork.bin from one mount of SHARE while
# stat -f loops on it, for fork_smb_secs or until a copy is wrong; sets
# fork_rounds, fork_bad (the first wrong copy's round, or 0) and
# fork_statfs (statfs calls made)
fork_copies()
{
	local share=$1 copy=$CG_ROOT/fork.copy stop=$CG_ROOT/fork.stop pid
	local end

	fork_rounds=0 fork_bad=0 fork_statfs=0
	cifs_mount "$share" strict || return 1
	rm -f "$stop"
	(
		n=0
		while [ ! -e "$stop" ]; do
			stat -f "$cm" >/dev/null
			n=$((n + 1))
		done
		echo "$n" >"$stop.n"
	) &
	pid=$!
	end=$((SECONDS + fork_smb_secs))
	while [ "$SECONDS" -lt "$end" ]; do
		# the client's pages too (the same kernel): every copy reads
		# the server
		sync
		echo 3 >/proc/sys/vm/drop_caches
		rm -f "$copy"
		cp "$cm/fork.bin" "$copy" || break
		fork_rounds=$((fork_rounds + 1))
		if ! cmp -s "$fork_file" "$copy"; then
			fork_bad=$fork_rounds
			echo "[$share] copy $fork_rounds differs from the file:"
			fork_diff "$fork_file" "$copy" | sed "s/^/[$share] /"
			break
		fi
	done
	touch "$stop"
	wait "$pid"
	fork_statfs=$(cat "$stop.n" 2>/dev/null || echo 0)
	umount "$cm"
	rm -f "$copy" "$stop" "$stop.n"
}

# fork_misses FROM: MISSes of the direct streams ended in the log after
# line FROM (each read on its own, in place when aligned)
fork_misses()
{
	tail -n +"$1" "$CG_LOG" |
		sed -n 's/.*direct stream done: .* \([0-9]*\) misses,.*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }'
}

fork_smb_checks()
{
	local dir=$1 fs share from forks pids misses start what

	fs=$(basename "$dir")
	cm=$CG_ROOT/cifs
	mkdir -p "$cm"
	fork_file=$dir/fork.bin
	fork_size=$((64 * MiB + 4097))
	head -c "$fork_size" /dev/urandom >"$fork_file"
	for share in "${fs}_fork_miss" "${fs}_fork_direct"; do
		from=$(($(wc -l <"$CG_LOG") + 1))
		: >"$fork_count"
		start=$SECONDS
		if ! fork_copies "$share"; then
			cg_fail "[$share] cifs mount" \
				"$(tail -n 4 "$CG_ROOT/log/cifs-mount.out" | tr '\n' ' ')"
			continue
		fi
		forks=$(wc -l <"$fork_count")
		pids=$(sort -u "$fork_count" | wc -l)
		misses=$(fork_misses "$from")
		echo "[$share] $fork_rounds copies of $fork_size bytes in" \
			"$((SECONDS - start)) s, $fork_statfs statfs calls," \
			"$forks dfree commands forked by $pids smbd," \
			"$misses direct MISSes"
		summary fork.bin | sed "s/.* fork.bin: /[$share] /"
		what="[$share] cp on one cifs mount while its smbd forks (stat -f, dfree command): every byte of $fork_rounds copies right on $kver"
		if [ "$fork_rounds" = 0 ]; then
			cg_fail "$what" "no copy was made"
		elif [ "$fork_bad" != 0 ]; then
			cg_fail "$what" "copy $fork_bad has wrong bytes (above)"
		else
			cg_pass "$what"
		fi
		cg_expect_ge "[$share] the copies' smbd forked (dfree commands)" \
			"$forks" "$fork_rounds"
		cg_expect "[$share] every dfree command was forked by one smbd (one connection)" \
			test "$pids" = 1
		cg_expect "[$share] the copies were direct streams" \
			grep -qE "direct [1-9]" <<<"$(summary fork.bin)"
		if [ "$share" = "${fs}_fork_miss" ]; then
			cg_expect_ge "[$share] reads on their own (MISSes)" \
				"$misses" "$fork_rounds"
		fi
	done
	rm -f "$fork_file"
}
