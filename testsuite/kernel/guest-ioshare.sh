# SPDX-License-Identifier: GPL-3.0-or-later
# shellcheck shell=bash disable=SC2034,SC2154
#
# Device sharing on the kernel's engines (sourced by guest-suite.sh;
# CG_GUEST_SET=ioshare, issue 48 point 4). A disk-bound neighbour (a
# database with direct I/O: hotreader -d, 16 KiB O_DIRECT reads at
# random at 200/s) reads a file on the same device as one SMB copy, then
# four at once, through a share in the module's default mode (auto:
# direct with its prefetch, on Debian's kernels). Per configuration,
# the neighbour's p50/p99 read latency idle, during the copy and during
# the four, and the copies' MB/s:
#
#   deadline	mq-deadline, no setting
#   bfq		BFQ, no setting
#   bfq-idle	BFQ, cacheguard:stream ioprio = idle
#   bfq-low	BFQ, cacheguard:stream ioprio = low
#   deadline-idle	mq-deadline, stream ioprio = idle
#   iocost	mq-deadline, no setting; smbd's cgroup at io.weight 100,
#		the neighbour's at 1000, io.cost on the disk (its model
#		the disk's throttle, a p95 read latency target of 5 ms)
#   plain	mq-deadline, a share without the module
#   none	the none scheduler (NVMe's), no setting
#   none-idle	none, stream ioprio = idle
#   bfq-idle-cg	BFQ, stream ioprio = idle, smbd and the neighbour in
#		cgroups of their own with the io controller enabled (as
#		systemd does for IOWeight= or IOAccounting=)
#   max		mq-deadline, no setting, smbd's cgroup capped by
#		blk-throttle (io.max) at half the disk's bandwidth
#   max-idle	the same with stream ioprio = idle
#
# CG_IOSHARE_CONFIGS (cg.ioshare=a,b,...) picks some, in that order;
# CG_IOSHARE_ROUNDS (cg.rounds=N) runs them all N times over (TCG's
# figures move from run to run: compare within a round).
# The disk is the third virtio disk (serial cgscratch) that
# testsuite/kernel/run adds for this set: read from the host's disk
# (cache=none), its reads throttled by QEMU (CG_IOSHARE_SCRATCH,
# MIB/S:IOPS:QUEUE), so that requests queue at the device, not in the
# guest's CPU. An ext4 on it holds the neighbour's file and the copied
# ones. Under TCG the guest's CPU is slow and shared with the host's
# load: the neighbour runs SCHED_FIFO, so that its latency is the
# device's and not the copies' CPU; the figures are reported, not
# bounded. The checks are that each configuration is what it says: the
# scheduler took, the stream's reads ran in the class set (sampled with
# ionice on smbd's threads while the copies run; never without the
# setting), the module served the copies direct, io.cost charged smbd's
# reads to smbd's cgroup and the neighbour's to its own, the neighbour
# kept reading, every copy got its bytes.

iosh_rate=200		# the neighbour's reads per second
iosh_idle_s=8		# the neighbour alone before the copies
iosh_one_mib=128	# the one copy's file
iosh_four_mib=32	# each of the four copies' files
iosh_db_mib=256		# the neighbour's file
iosh_cap=90		# a phase of copies ends after this many seconds
iosh_cg=/sys/fs/cgroup
iosh_all="deadline bfq bfq-idle bfq-low deadline-idle iocost plain none
	none-idle bfq-idle-cg max max-idle"

# iosh_config NAME: the scheduler, share and io control of a
# configuration (iosh_sched, iosh_share, iosh_io); false for a name
# that is none
iosh_config()
{
	case $1 in
	deadline) iosh_sched=mq-deadline iosh_share=none iosh_io=off ;;
	bfq) iosh_sched=bfq iosh_share=none iosh_io=off ;;
	bfq-idle) iosh_sched=bfq iosh_share=idle iosh_io=off ;;
	bfq-low) iosh_sched=bfq iosh_share=low iosh_io=off ;;
	deadline-idle) iosh_sched=mq-deadline iosh_share=idle iosh_io=off ;;
	iocost) iosh_sched=mq-deadline iosh_share=none iosh_io=iocost ;;
	plain) iosh_sched=mq-deadline iosh_share=plain iosh_io=off ;;
	none) iosh_sched=none iosh_share=none iosh_io=off ;;
	none-idle) iosh_sched=none iosh_share=idle iosh_io=off ;;
	bfq-idle-cg) iosh_sched=bfq iosh_share=idle iosh_io=groups ;;
	max) iosh_sched=mq-deadline iosh_share=none iosh_io=max ;;
	max-idle) iosh_sched=mq-deadline iosh_share=idle iosh_io=max ;;
	*) return 1 ;;
	esac
}

# iosh_disk: the scratch disk's name (vdc), by its serial
iosh_disk()
{
	local d

	for d in /sys/block/vd*; do
		if [ "$(cat "$d/serial" 2>/dev/null)" = cgscratch ]; then
			basename "$d"
			return 0
		fi
	done
	return 1
}

# iosh_prepare: the disk, its filesystem and files, cgroup2; false with
# a FAIL line when any is missing
iosh_prepare()
{
	local f t0 rate

	IFS=: read -r iosh_bps iosh_iops iosh_queue <<<"${CG_IOSHARE_SCRATCH:-}"
	if ! iosh_dev=$(iosh_disk); then
		cg_fail "[ioshare] the scratch disk (serial cgscratch)" \
			"not in the guest (testsuite/kernel/run adds it for CG_GUEST_SET=ioshare)"
		return 1
	fi
	iosh_devno=$(cat "/sys/block/$iosh_dev/dev")
	iosh_dir=$CG_ROOT/mnt/scratch
	mkdir -p "$iosh_dir"
	if ! mkfs.ext4 -q -F -m 0 "/dev/$iosh_dev" \
		>"$CG_ROOT/log/mkfs-scratch.out" 2>&1 ||
		! mount -o noatime "/dev/$iosh_dev" "$iosh_dir"; then
		cg_fail "[ioshare] ext4 on the scratch disk" \
			"$(tail -n 2 "$CG_ROOT/log/mkfs-scratch.out")"
		return 1
	fi
	CG_MOUNTS="$iosh_dir ${CG_MOUNTS:-}"
	chmod 1777 "$iosh_dir"
	# zeros are bytes like any other to ext4, QEMU and the host's disk;
	# the writes are not throttled
	for f in db:$iosh_db_mib one:$iosh_one_mib four1:$iosh_four_mib \
		four2:$iosh_four_mib four3:$iosh_four_mib four4:$iosh_four_mib; do
		if ! dd if=/dev/zero of="$iosh_dir/${f%:*}.bin" bs=4M \
			count=$((${f#*:} / 4)) conv=fsync status=none; then
			cg_fail "[ioshare] the files" "dd of ${f%:*}.bin failed"
			return 1
		fi
	done
	# the throttle holds: 32 MiB read direct in 1 MiB requests
	t0=$EPOCHREALTIME
	dd if="$iosh_dir/db.bin" of=/dev/null bs=1M count=32 iflag=direct \
		status=none
	rate=$(awk -v a="$t0" -v b="$EPOCHREALTIME" \
		'BEGIN { printf "%d", 32 / (b - a) }')
	echo "ioshare: scratch disk $iosh_dev ($iosh_devno): QEMU throttle" \
		"${iosh_bps:-?} MiB/s, ${iosh_iops:-?} IOPS (reads)," \
		"virtqueue ${iosh_queue:-?}, requests of at most" \
		"$(cat "/sys/block/$iosh_dev/queue/max_sectors_kb") KiB;" \
		"32 MiB direct at $rate MiB/s"
	cg_expect_le "[ioshare] the scratch disk reads at its throttle (MiB/s, at most 1.3 x ${iosh_bps:-0})" \
		"$rate" $((${iosh_bps:-0} * 13 / 10))

	mkdir -p "$iosh_cg"
	if ! grep -q "^cgroup2 $iosh_cg " /proc/mounts &&
		! mount -t cgroup2 cgroup2 "$iosh_cg"; then
		cg_fail "[ioshare] cgroup2" "cannot mount it on $iosh_cg"
		return 1
	fi
	if ! grep -qw io "$iosh_cg/cgroup.controllers"; then
		cg_fail "[ioshare] cgroup2's io controller" \
			"not among $(cat "$iosh_cg/cgroup.controllers")"
		return 1
	fi
	iosh_fresh_cgroups
	cg_expect "[ioshare] BFQ is a scheduler of the scratch disk (bfq.ko from the initramfs)" \
		grep -qw bfq "/sys/block/$iosh_dev/queue/scheduler"
	return 0
}

# iosh_io_control off|groups|iocost|max: the io controller for smbd's
# and the neighbour's cgroups; iocost: weights 100 and 1000, the cost
# model of the disk's throttle and QoS on; max: smbd's reads capped at
# half the disk's bandwidth
iosh_io_control()
{
	local bps=$((iosh_bps << 20))

	if [ "$1" = off ]; then
		echo "$iosh_devno enable=0" >"$iosh_cg/io.cost.qos" 2>/dev/null
		echo -io >"$iosh_cg/cgroup.subtree_control"
		return
	fi
	echo +io >"$iosh_cg/cgroup.subtree_control" || return 1
	if [ "$1" = max ]; then
		echo "$iosh_devno rbps=$((bps / 2))" >"$iosh_cg/cg-smbd/io.max"
		return
	fi
	[ "$1" = iocost ] || return 0
	echo 100 >"$iosh_cg/cg-smbd/io.weight" &&
		echo 1000 >"$iosh_cg/cg-db/io.weight" &&
		echo "$iosh_devno ctrl=user model=linear rbps=$bps rseqiops=$iosh_iops rrandiops=$iosh_iops wbps=$bps wseqiops=$iosh_iops wrandiops=$iosh_iops" \
			>"$iosh_cg/io.cost.model" &&
		echo "$iosh_devno enable=1 ctrl=user rpct=95.00 rlat=5000 wpct=95.00 wlat=5000 min=50.00 max=100.00" \
			>"$iosh_cg/io.cost.qos"
}

# iosh_ioprio_count: smbd's threads now in the idle class and at
# best-effort 7 ("IDLE BE7")
iosh_ioprio_count()
{
	local p tids=

	for p in $(cg_smbd_pids); do
		tids="$tids $(cd "/proc/$p/task" 2>/dev/null && echo *)"
	done
	# shellcheck disable=SC2086
	ionice -p $tids 2>/dev/null |
		awk '/^idle/ { i++ } /^best-effort: prio 7/ { b++ }
			END { print i + 0, b + 0 }'
}

# iosh_copies FILE...: the files copied at once through the share, each
# by an smbclient of its own into /dev/shm, cut after iosh_cap seconds;
# sets iosh_bytes (got, summed), iosh_secs (until the last ended),
# iosh_cut (copies cut), iosh_tmo (copies the client gave up: a read
# unanswered for its 20 s, NT_STATUS_IO_TIMEOUT: a figure, as a starved
# copy's) and iosh_bad (failed otherwise, or short)
iosh_copies()
{
	local f pids=() rc i got want t0

	t0=$EPOCHREALTIME
	for f in "$@"; do
		rm -f "/dev/shm/iosh.$f"
		timeout "$iosh_cap" smbclient "//127.0.0.1/ioshare_$iosh_share" \
			-p "$CG_PORT" -U "$CG_USER%$CG_PASS" \
			-c "get $f /dev/shm/iosh.$f" \
			>"$CG_ROOT/log/iosh-$f.out" 2>&1 &
		pids+=("$!")
	done
	iosh_cut=0 iosh_tmo=0 iosh_bad=0 iosh_bytes=0
	for i in "${!pids[@]}"; do
		f=${*:$((i + 1)):1}
		wait "${pids[$i]}"
		rc=$?
		got=$(stat -c %s "/dev/shm/iosh.$f" 2>/dev/null || echo 0)
		want=$(stat -c %s "$iosh_dir/$f")
		iosh_bytes=$((iosh_bytes + got))
		iosh_got=$((iosh_got + got))
		if [ "$rc" = 124 ]; then
			iosh_cut=$((iosh_cut + 1))
		elif [ "$rc" != 0 ] &&
			grep -q NT_STATUS_IO_TIMEOUT "$CG_ROOT/log/iosh-$f.out"; then
			iosh_tmo=$((iosh_tmo + 1))
			echo "[ioshare $iosh_name] copy of $f: the client gave up" \
				"after $got of $want bytes (NT_STATUS_IO_TIMEOUT)"
		elif [ "$rc" != 0 ] || [ "$got" != "$want" ]; then
			iosh_bad=$((iosh_bad + 1))
			echo "[ioshare $iosh_name] copy of $f: exit $rc, $got of $want bytes:" \
				"$(tail -n 2 "$CG_ROOT/log/iosh-$f.out" | tr '\n' ' ')"
		fi
		rm -f "/dev/shm/iosh.$f"
	done
	iosh_secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" \
		'BEGIN { printf "%.2f", b - a }')
}

# iosh_phase_stats LOG N: "READS P50 P99 READS/S" of the reader's phase
# N, latencies in microseconds
iosh_phase_stats()
{
	awk -v n="$2" '$1 == "phase" && $2 == n {
		printf "%d %.0f %.0f %.0f\n", $3, $5 / 1000, $6 / 1000,
			($4 > 0 ? $3 / $4 : 0) }' "$1"
}

# iosh_copy_phase WHAT FILE...: the copies while the reader's phase
# runs, with smbd's threads' I/O classes sampled; sets iosh_mbps, the
# copies' bytes over their time, with "*" when one was cut and "!N"
# when N timed out; adds to iosh_seen_idle, iosh_seen_be7
iosh_copy_phase()
{
	local what=$1 samples=$CG_ROOT/iosh.ioprio idle be7
	shift

	: >"$samples"
	# once a second: a sample is a few processes, slow under TCG, and
	# takes the copies' CPU
	cg_sampler_start "$samples" 1 "$iosh_cap" iosh_ioprio_count
	iosh_copies "$@"
	cg_sampler_stop
	# (no process substitution: the guest's /dev has no /dev/fd)
	read -r idle be7 <<<"$(awk '{ i += $1; b += $2 }
		END { print i + 0, b + 0 }' "$samples")"
	iosh_seen_idle=$((iosh_seen_idle + idle))
	iosh_seen_be7=$((iosh_seen_be7 + be7))
	cg_expect "[ioshare $iosh_name] $what: no copy failed but by the client's timeout ($iosh_bytes bytes in $iosh_secs s, $iosh_cut cut at ${iosh_cap} s, $iosh_tmo timed out)" \
		test "$iosh_bad" = 0 -a "$iosh_bytes" -gt 0
	iosh_mbps=$(awk -v b="$iosh_bytes" -v s="$iosh_secs" \
		'BEGIN { printf "%.1f", b / s / 1e6 }')
	[ "$iosh_cut" = 0 ] || iosh_mbps+="*"
	[ "$iosh_tmo" = 0 ] || iosh_mbps+="!$iosh_tmo"
}

# iosh_fresh_cgroups: smbd's and the neighbour's cgroups empty and new
# (their io.stat from zero); smbd's children may take a moment to go
iosh_fresh_cgroups()
{
	local i

	for i in $(seq 1 50); do
		rmdir "$iosh_cg/cg-smbd" "$iosh_cg/cg-db" 2>/dev/null
		[ -d "$iosh_cg/cg-smbd" ] || [ -d "$iosh_cg/cg-db" ] || break
		sleep 0.1
	done
	mkdir -p "$iosh_cg/cg-smbd" "$iosh_cg/cg-db"
}

# iosh_smbd_start: smbd born in its cgroup (this shell steps in to
# start it and back out)
iosh_smbd_start()
{
	local rc

	echo $$ >"$iosh_cg/cg-smbd/cgroup.procs" || return 1
	cg_smbd_start >"$CG_ROOT/log/iosh-smbd-start.out" 2>&1
	rc=$?
	echo $$ >"$iosh_cg/cgroup.procs"
	return $rc
}

# iosh_run NAME: one configuration, a row of the table
iosh_run()
{
	local name=$1 log=$CG_ROOT/iosh-$1.log reader i line from ok
	local idle one four stat0 stat1 devmib before after p0 p1 p3 sums
	local direct=- req t0

	iosh_name=$name
	if ! iosh_config "$name"; then
		cg_fail "[ioshare] configuration $name" "no such configuration (one of: ${iosh_all//[$'\t\n']/ })"
		return
	fi
	echo "[ioshare $name] scheduler $iosh_sched, share $iosh_share," \
		"io control $iosh_io, $(date +%T)"
	cg_smbd_stop
	echo "$iosh_sched" >"/sys/block/$iosh_dev/queue/scheduler"
	cg_expect "[ioshare $name] the scratch disk's scheduler is $iosh_sched" \
		grep -q "\[$iosh_sched\]" "/sys/block/$iosh_dev/queue/scheduler"
	if ! iosh_io_control "$iosh_io"; then
		cg_fail "[ioshare $name] io control $iosh_io" \
			"cgroup2 refused it"
		return
	fi
	if [ "$iosh_io" = max ]; then
		line=$(grep "^$iosh_devno " "$iosh_cg/cg-smbd/io.max")
		cg_expect "[ioshare $name] smbd's cgroup is capped at $((iosh_bps << 19)) B/s ($line)" \
			grep -q "rbps=$((iosh_bps << 19)) " <<<"$line "
	fi
	if [ "$iosh_io" = iocost ]; then
		line=$(grep "^$iosh_devno " "$iosh_cg/io.cost.qos")
		echo "[ioshare $name] io.cost.qos: $line"
		echo "[ioshare $name] io.cost.model: $(grep "^$iosh_devno " "$iosh_cg/io.cost.model")"
		cg_expect "[ioshare $name] io.cost is on for the scratch disk" \
			grep -q "enable=1" <<<"$line"
	fi
	t0=$SECONDS
	if ! iosh_smbd_start; then
		cg_fail "[ioshare $name] smbd starts" \
			"$(tail -n 3 "$CG_ROOT/log/iosh-smbd-start.out" | tr '\n' ' ')"
		return
	fi
	from=$(($(wc -l <"$CG_LOG") + 1))
	sync
	echo 3 >/proc/sys/vm/drop_caches
	(echo "$BASHPID" >"$iosh_cg/cg-db/cgroup.procs" &&
		exec chrt -f 10 "$CG_BUILD/hotreader" -d -r "$iosh_rate" \
		-s 16384 -S 16384 -t 900 -o "$log" "$iosh_dir/db.bin") \
		2>"$log.err" &
	reader=$!
	for i in $(seq 1 100); do
		grep -q '^ready' "$log" 2>/dev/null && break
		sleep 0.1
	done
	if ! grep -q '^ready' "$log" 2>/dev/null; then
		cg_fail "[ioshare $name] the neighbour starts" "$(cat "$log.err")"
		kill "$reader" 2>/dev/null
		wait "$reader"
		return
	fi
	read -r -a stat0 <"/sys/block/$iosh_dev/stat"
	echo "[ioshare $name] smbd and the neighbour started in $((SECONDS - t0)) s"
	t0=$SECONDS
	iosh_seen_idle=0 iosh_seen_be7=0 iosh_got=0
	sleep "$iosh_idle_s"
	kill -USR1 "$reader"
	iosh_copy_phase "one copy" one.bin
	one=$iosh_mbps
	kill -USR1 "$reader"
	sync
	echo 3 >/proc/sys/vm/drop_caches
	sleep 1
	kill -USR1 "$reader"
	iosh_copy_phase "four copies" four1.bin four2.bin four3.bin four4.bin
	four=$iosh_mbps
	kill -USR1 "$reader"
	sleep 1
	kill "$reader"
	wait "$reader"
	read -r -a stat1 <"/sys/block/$iosh_dev/stat"
	# the device's reads while the neighbour ran, and the copies' mean
	# request (the neighbour's are 16 KiB each)
	devmib=$(((stat1[2] - stat0[2]) / 2048))
	req=$(awk -v s="$((stat1[2] - stat0[2]))" -v n="$((stat1[0] - stat0[0]))" \
		-v r="$(awk '$1 == "phase" { n += $3 } END { print n + 0 }' "$log")" \
		'BEGIN { if (n > r) printf "%.0f", (s / 2 - 16 * r) / (n - r); else print "-" }')
	echo "[ioshare $name] phases in $((SECONDS - t0)) s"
	t0=$SECONDS
	# the clients' smbd processes close their files (the summaries)
	# and exit on their own
	for i in $(seq 1 100); do
		[ "$(cg_smbd_pids | wc -l)" -le 1 ] && break
		sleep 0.1
	done
	cg_smbd_stop

	idle=$(iosh_phase_stats "$log" 0)
	read -r -a p1 <<<"$(iosh_phase_stats "$log" 1)"
	read -r -a p3 <<<"$(iosh_phase_stats "$log" 3)"
	read -r -a p0 <<<"$idle"
	# a starved neighbour is a figure; one that stopped is a failure
	for i in 0 1 3; do
		line=$(iosh_phase_stats "$log" $i)
		line=${line%% *}
		cg_expect_ge "[ioshare $name] the neighbour read in phase $i (reads)" \
			"${line:-0}" 10
	done
	cg_expect "[ioshare $name] the neighbour saw no read errors" \
		grep -q '^done [0-9.]* 0$' "$log"
	case $iosh_share in
	idle)
		cg_expect_ge "[ioshare $name] smbd's threads were seen reading in the idle class" \
			"$iosh_seen_idle" 1 ;;
	low)
		cg_expect_ge "[ioshare $name] smbd's threads were seen reading at best-effort 7" \
			"$iosh_seen_be7" 1 ;;
	*)
		cg_expect "[ioshare $name] no smbd thread in the idle class or at best-effort 7 ($iosh_seen_idle, $iosh_seen_be7)" \
			test "$iosh_seen_idle" = 0 -a "$iosh_seen_be7" = 0 ;;
	esac
	if [ "$iosh_share" != plain ]; then
		# each copy's close summary (a copy the client gave up has one
		# too): direct, or, past direct memory (32M for all streams),
		# auto's next mode, dontneed, whose reads are smbd's own and
		# keep its priority
		sums=$(tail -n +"$from" "$CG_LOG" |
			grep -E " (one|four[1-4])\.bin: size [0-9]+ read ")
		sed "s/.* \([a-z0-9]*\.bin\): /[ioshare $name] \1: /" <<<"$sums"
		direct=$(grep -c "mode direct;" <<<"$sums")
		line=$(grep -c "mode dontneed;.*no room in direct memory" <<<"$sums")
		cg_expect "[ioshare $name] the module served each of the five copies, direct or past direct memory dontneed ($direct direct, $line dontneed)" \
			test "$((direct + line))" = 5
		cg_expect "[ioshare $name] the one copy was direct" \
			grep -qE " one\.bin: .*mode direct;" <<<"$sums"
		line=$(tail -n +"$from" "$CG_LOG" | grep -c "stream ioprio=$iosh_share")
		cg_expect_ge "[ioshare $name] smbd logged the share's stream ioprio, $iosh_share, at connect" \
			"$line" 1
	fi
	if [ "$iosh_io" != off ]; then
		before=$(grep "^$iosh_devno " "$iosh_cg/cg-smbd/io.stat")
		after=$(grep "^$iosh_devno " "$iosh_cg/cg-db/io.stat")
		[ "$iosh_io" != iocost ] || echo "[ioshare $name] io.stat:" \
			"$(grep "^$iosh_devno " "$iosh_cg/io.stat" 2>/dev/null)"
		echo "[ioshare $name] smbd's io.stat: $before"
		echo "[ioshare $name] the neighbour's io.stat: $after"
		cg_expect_ge "[ioshare $name] smbd's cgroup was charged the copies' reads (MiB)" \
			"$(($(sed -n 's/.*rbytes=\([0-9]*\).*/\1/p' <<<"$before") >> 20))" \
			$((iosh_got >> 20))
		cg_expect_ge "[ioshare $name] the neighbour's cgroup was charged its reads" \
			"$(sed -n 's/.*rios=\([0-9]*\).*/\1/p' <<<"$after")" \
			$((p0[0] + p1[0] + p3[0]))
	fi
	iosh_io_control off
	iosh_fresh_cgroups
	echo "[ioshare $name] smbd's exit and the checks in $((SECONDS - t0)) s"

	iosh_rows+=("$(printf '%-13s %7s %7s | %7s %7s %6s %7s %5s | %7s %7s %6s %7s %5s | %6s %5s %3s' \
		"$name" "${p0[1]}" "${p0[2]}" \
		"${p1[1]}" "${p1[2]}" \
		"$(iosh_times "${p1[2]}" "${p0[2]}")" \
		"$one" "${p1[3]}" \
		"${p3[1]}" "${p3[2]}" \
		"$(iosh_times "${p3[2]}" "${p0[2]}")" \
		"$four" "${p3[3]}" \
		"$devmib" "$req" "$direct")")
	echo "ioshare: ${iosh_rows[-1]}"
}

# iosh_times A B: A as a multiple of B ("?" without both)
iosh_times()
{
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "" || b + 0 <= 0) print "?"
		else printf "%.1fx\n", a / b }'
}

iosh_table()
{
	local row

	echo "ioshare: $(uname -r), scratch disk ${iosh_bps} MiB/s ${iosh_iops} IOPS (QEMU throttle), virtqueue ${iosh_queue}; the neighbour: 16 KiB O_DIRECT reads at ${iosh_rate}/s, SCHED_FIFO"
	echo "ioshare: one copy of $iosh_one_mib MiB, then four of $iosh_four_mib MiB at once; latencies in us; x: p99 over the idle p99; rd/s: the neighbour's reads/s; devMiB: the disk's reads from the idle phase on, reqKB the copies' mean request there, dir: copies served direct of 5; MB/s: the copies' bytes over their time, * a copy cut at ${iosh_cap} s, !N N copies the client gave up (a read unanswered for 20 s)"
	printf 'ioshare: %-13s %7s %7s | %7s %7s %6s %7s %5s | %7s %7s %6s %7s %5s | %6s %5s %3s\n' \
		config "idle50" "idle99" "1:p50" "1:p99" "x" "MB/s" "rd/s" \
		"4:p50" "4:p99" "x" "MB/s" "rd/s" "devMiB" "reqKB" "dir"
	# the rounds of a configuration together, configurations in the
	# order they ran
	printf '%s\n' "${iosh_rows[@]}" |
		awk '{ if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 }
			rows[$1] = rows[$1] "ioshare: " $0 "\n" }
			END { for (i = 1; i <= n; i++) printf "%s", rows[order[i]] }' 
}

ioshare_main()
{
	local name round start=$SECONDS

	cg_smbd_init
	iosh_prepare || return 0
	cg_share_at ioshare_plain "$iosh_dir"
	cg_share_at ioshare_none "$iosh_dir" "vfs objects = cacheguard"
	cg_share_at ioshare_idle "$iosh_dir" "vfs objects = cacheguard" \
		"cacheguard:stream ioprio = idle"
	cg_share_at ioshare_low "$iosh_dir" "vfs objects = cacheguard" \
		"cacheguard:stream ioprio = low"
	iosh_rows=()
	for round in $(seq 1 "${CG_IOSHARE_ROUNDS:-1}"); do
		for name in $(echo "${CG_IOSHARE_CONFIGS:-$iosh_all}" | tr ',' ' '); do
			echo "[ioshare] round $round"
			iosh_run "$name"
		done
	done
	iosh_table
	echo "ioshare: $((SECONDS - start)) s in all"
	cg_expect "no smbd panicked" test "$(grep -c PANIC "$CG_LOG")" = 0
}
