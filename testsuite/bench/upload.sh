#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# make bench-upload: scenario A of the mixed-workload benchmark with the
# copy going the other way. A paced reader reads a warmed hot set at
# random while smbclient uploads a large file to the share; smbd and the
# reader share one memory cgroup smaller than hot set + upload. Per
# configuration: upload MB/s, hot-set p50/p99 idle and during the
# upload, refaults of the cgroup during the upload, the uploaded file's
# peak page-cache residency while it runs and right after the put.
#
# Environment (default):
#   UPLOAD_MIB 4096		the uploaded file
#   BENCH_HOT_MIB 512		hot set
#   BENCH_CGROUP_MIB 640	memory limit of smbd + reader together
#   BENCH_SMBD_CGROUP_MIB 64	smbd's own limit (smbd-cgroup)
#   BENCH_RATE 2000		hot-set reads per second
#   BENCH_IDLE_S 5		reader alone before the upload
#   BENCH_CONFIGS "plain dontneed direct dontcache smbd-cgroup"
#   BENCH_RESULTS build/bench-results/upload-TIMESTAMP
#
# Output: results.md (also printed) and the raw logs per configuration.
# One run per configuration on a shared machine: read the figures as
# ratios within the run, not as absolutes.
. "$(dirname "$0")/begin.sh" "cgroups, a private mount namespace" "$@"
. "$here/cgroup.sh"

UPLOAD_MIB=${UPLOAD_MIB:-4096}
BENCH_HOT_MIB=${BENCH_HOT_MIB:-512}
BENCH_CGROUP_MIB=${BENCH_CGROUP_MIB:-640}
BENCH_SMBD_CGROUP_MIB=${BENCH_SMBD_CGROUP_MIB:-64}
BENCH_RATE=${BENCH_RATE:-2000}
BENCH_IDLE_S=${BENCH_IDLE_S:-5}
BENCH_CONFIGS=${BENCH_CONFIGS:-"plain dontneed direct dontcache smbd-cgroup"}
BENCH_RESULTS=${BENCH_RESULTS:-$top/build/bench-results/upload-$(date +%Y%m%d-%H%M%S)}
BIN=$top/build
mkdir -p "$BENCH_RESULTS"

bench_cg_detect || { echo "no memory cgroup controller" >&2; exit 1; }
bench_cg_top || { echo "cannot create cgroups" >&2; exit 1; }

cg_smbd_init
cg_share plain
for m in dontneed direct dontcache; do
	cg_share "cg_$m" "vfs objects = cacheguard" "cacheguard:mode = $m"
done
trap 'cg_smbd_cleanup; bench_cg_cleanup' EXIT

src=$CG_ROOT/upload.bin hot=$CG_ROOT/hot.bin
head -c $((UPLOAD_MIB << 20)) /dev/urandom >"$src"
head -c $((BENCH_HOT_MIB << 20)) /dev/urandom >"$hot"

# run CFG: one measurement into $BENCH_RESULTS/CFG
run()
{
	local cfg=$1 dir=$BENCH_RESULTS/$1 cg=$BENCH_CG_TOP/$1
	local share=plain smbd_cg reader_cg t0 t1 ref0 ref1 reader sampler put

	mkdir -p "$dir"
	[ "$cfg" = plain ] || [ "$cfg" = smbd-cgroup ] || share=cg_$cfg
	bench_cg_make "$cg" $((BENCH_CGROUP_MIB << 20)) parent || return 1
	smbd_cg=$cg reader_cg=$cg
	if [ "$cfg" = smbd-cgroup ]; then
		bench_cg_make "$cg/smbd" $((BENCH_SMBD_CGROUP_MIB << 20)) &&
			bench_cg_make "$cg/reader" || return 1
		smbd_cg=$cg/smbd reader_cg=$cg/reader
	fi
	bench_cg_enter "$smbd_cg" && cg_smbd_start >"$dir/smbd.out" 2>&1
	bench_cg_leave
	rm -f "$CG_SHARE/up.bin"
	sync
	"$BIN/cgcache" drop "$src"
	"$BIN/cgcache" drop "$hot"
	bench_cg_run "$reader_cg" "$BIN/cgcache" load "$hot"
	(bench_cg_enter "$reader_cg" && exec "$BIN/hotreader" \
		-r "$BENCH_RATE" -t 900 -o "$dir/reader.log" "$hot") &
	reader=$!
	sleep "$BENCH_IDLE_S"
	cg_sample_start "$CG_SHARE/up.bin" 2>/dev/null
	sampler=$CG_SAMPLER
	ref0=$(bench_cg_stat "$cg" workingset_refault_file)
	kill -USR1 "$reader"
	t0=$EPOCHREALTIME
	# The client is elsewhere on a real network: outside the cgroup,
	# its reads of the source file are not the server's pages
	smbclient "//127.0.0.1/$share" -p "$CG_PORT" \
		-U "$CG_USER%$CG_PASS" -c "put $src up.bin" \
		>"$dir/smbclient.out" 2>&1
	put=$?
	t1=$EPOCHREALTIME
	kill -USR1 "$reader"
	ref1=$(bench_cg_stat "$cg" workingset_refault_file)
	after=$("$BIN/cgcache" stat "$CG_SHARE/up.bin")
	CG_SAMPLER=$sampler
	cg_sample_stop
	kill "$reader"
	wait "$reader" 2>/dev/null
	cg_smbd_stop
	# a figure that could not be read fails the row, never a 0 in it
	if [ "$put" != 0 ] || [ "$(stat -c %s "$CG_SHARE/up.bin" \
		2>/dev/null)" != "$(stat -c %s "$src")" ]; then
		echo "[$cfg] the upload failed: $(tail -n 2 \
			"$dir/smbclient.out")" >&2
		return 1
	fi
	cg_number "refaults before the upload" "$ref0" >/dev/null &&
		cg_number "refaults after it" "$ref1" >/dev/null &&
		cg_number "the upload's page cache after it" "$after" \
			>/dev/null &&
		cg_number "the upload's peak page cache" "$CG_PEAK" \
			>/dev/null || return 1
	awk -v cfg="$cfg" -v mib="$UPLOAD_MIB" -v t0="$t0" -v t1="$t1" \
		-v ref=$((ref1 - ref0)) -v peak="$CG_PEAK" -v after="$after" '
		$1 == "phase" { p50[$2] = $5 / 1000; p99[$2] = $6 / 1000 }
		END {
			printf "| %s | %.0f | %.0f / %.0f | %.0f / %.0f | " \
			       "%.0f | %.1f | %.1f |\n", cfg,
			       mib * 1.048576 / (t1 - t0), p50[0], p99[0],
			       p50[1], p99[1], ref * 4096 / 1048576,
			       peak / 1048576, after / 1048576
		}' "$dir/reader.log" >"$dir/row"
	cat "$dir/row"
	rm -f "$CG_SHARE/up.bin"
}

{
	echo "Upload of ${UPLOAD_MIB} MiB, hot set ${BENCH_HOT_MIB} MiB" \
		"at ${BENCH_RATE}/s, cgroup ${BENCH_CGROUP_MIB} MiB," \
		"$(date -u +%Y-%m-%dT%H:%MZ), $(uname -r)"
	echo
	echo "| config | upload MB/s | hot p50/p99 idle (us) |" \
		"hot p50/p99 upload (us) | refaults MiB | peak cached MiB |" \
		"cached after MiB |"
	echo "|---|---|---|---|---|---|---|"
} >"$BENCH_RESULTS/results.md"
for cfg in $BENCH_CONFIGS; do
	run "$cfg" || echo "| $cfg | failed |" >"$BENCH_RESULTS/$cfg/row"
	cat "$BENCH_RESULTS/$cfg/row" >>"$BENCH_RESULTS/results.md"
done
cat "$BENCH_RESULTS/results.md"
