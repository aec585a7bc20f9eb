#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Where smbd's time goes during one cold copy: for the plain share and
# each configuration in turn, smbclient gets the file to /dev/null under
# "perf record -a -g", and the samples of smbd's threads are summed by
# thread and leaf function. The main thread (the lowest thread id of the
# connection's smbd) sends the replies; the others are the thread pool.
# docs/benchmarks.md, "The copy the send paid for", was measured so.
#
#   PROFILE_CONFIGS	"direct" (modes of guarded shares)
#   PROFILE_MIB		1024 (the copied file, in MiB)
#   PROFILE_OPTIONS	more smb.conf lines for the guarded shares,
#			';'-separated
#   PROFILE_OUT		where the perf data stays (default: removed)
#
# Output, per configuration: smbclient's rate, smbd's samples in all, and
# the functions with the most samples per thread (main, pool).
. "$(dirname "$0")/begin.sh" \
	"a private mount namespace, perf -a, dropping the file's pages" "$@"
if ! command -v perf >/dev/null; then
	echo "profile.sh needs perf (Debian: linux-perf)" >&2
	exit 1
fi

configs=${PROFILE_CONFIGS:-direct}
mib=${PROFILE_MIB:-1024}
out=${PROFILE_OUT:-}
keep=1
if [ -z "$out" ]; then
	out=$(mktemp -d /tmp/cacheguard-profile.XXXXXX)
	keep=
fi
mkdir -p "$out"

cleanup()
{
	cg_smbd_cleanup
	[ -n "$keep" ] || rm -rf "$out"
}
CG_LOG_LEVEL=1 cg_smbd_init
trap cleanup EXIT
cg_guard_shares "$configs" "${PROFILE_OPTIONS:-}"
file=$CG_SHARE/profile.bin
head -c $((mib << 20)) /dev/urandom >"$file"
sync
cg_smbd_start

# samples of smbd's threads: "count pid tid function", from a perf.data
leaves()
{
	perf script -i "$1" -F comm,pid,tid,ip,sym 2>/dev/null | awk '
		/^[^\t]/ { comm = $1; split($2, id, "/"); leaf = 1; next }
		/^\t/ && leaf {
			if (comm == "smbd") n[id[1] " " id[2] " " $2]++
			leaf = 0
		}
		END { for (k in n) print n[k], k }'
}

for c in plain $configs; do
	share=$(cg_guard_share_name "$c")
	cg_drop_cache "$file"
	rate=$(perf record -a -g -o "$out/$c.data" -- smbclient \
		"//127.0.0.1/$share" -p "$CG_PORT" -U "$CG_USER%$CG_PASS" \
		-c "get profile.bin /dev/null" 2>&1 |
		sed -nE 's/.*\(average ([0-9.]+) KiloBytes\/sec\).*/\1/p')
	leaves "$out/$c.data" >"$out/$c.leaves"
	# the connection's smbd is the process with the most samples; its
	# main thread is the one whose id is the process's
	awk -v c="$c" -v rate="${rate:-0}" '
		{ per[$2] += $1; line[NR] = $0 }
		END {
			for (p in per) if (per[p] > per[top]) top = p
			for (i = 1; i <= NR; i++) {
				split(line[i], x, " ")
				if (x[2] != top) continue
				who = x[3] == top ? "main" : "pool"
				f[who " " x[4]] += x[1]; t[who] += x[1]
			}
			printf "%s: %.0f MB/s, smbd %d samples (main thread " \
				"%d, pool %d)\n", c, rate * 1024 / 1e6,
				per[top], t["main"], t["pool"] > "/dev/stderr"
			for (k in f) if (f[k] * 50 >= per[top]) print f[k], k
		}' "$out/$c.leaves" 2>&1 >"$out/$c.top"
	sort -k1,1nr "$out/$c.top" |
		awk '{ printf "  %7d  %-5s %s\n", $1, $2, $3 }'
done
[ -n "$keep" ] && echo "perf data in $out"
exit 0
