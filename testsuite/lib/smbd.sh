# SPDX-License-Identifier: GPL-3.0-or-later
#
# A private smbd for tests, benchmarks and the demo: loopback only, an
# unprivileged port of its own, its own state directories, and the freshly built
# cacheguard.so visible in smbd's modules dir through a bind mount inside
# a private mount namespace, so the system's modules dir is never touched.
#
# Source this file from a script that already runs inside
# "unshare -m --propagation private" (cg_enter_namespace does that).
#
# Clients connect as an ordinary account, as on a real server: CG_USER
# (default "cgtest", a system account made here on first use) owns no
# file the tests create and cannot write them (root-owned, 0644). The
# share directory is root's, mode 1777, so uploads work and each
# uploader owns what it put. CG_USER=root runs everything as root.
#
#   cg_smbd_init		make the private root, conf and passdb
#   cg_share NAME [LINE...]	add a share on $CG_SHARE with smb.conf lines
#   cg_guard_shares CONFIGS OPTS	plain, and a share per benchmark
#				configuration (cg_guard_share_name):
#				a mode; MODE@KEY=VALUE...: with those
#				options; default: the module with no option
#				at all; plain-aa: a second share without
#				the module, the A/A control
#   cg_smbd_start		start smbd and wait until it answers
#   cg_smbclient SHARE CMD	run smbclient commands against a share
#   cg_traced_get SHARE FILE STRACE-ARGS...
#				a cold get of FILE under strace of smbd
#   cg_smbd_stop		stop smbd (also on exit)
#   cg_shim NAME		build $CG_ROOT/NAME.c into an LD_PRELOAD shim

CG_TOP=${CG_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
CG_BUILD=${CG_BUILD:-$CG_TOP/build}
. "$CG_TOP/testsuite/lib/sample.sh"
. "$CG_TOP/testsuite/lib/figures.sh"
CG_PORT=${CG_PORT:-}
CG_USER=${CG_USER:-cgtest}
CG_PASS=cacheguard
CG_VFS_DIR=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null ||
	echo x86_64-linux-gnu)/samba/vfs
CG_MODULE=${CG_MODULE:-$CG_BUILD/cacheguard.so}
CG_SMBD_PID=

# Re-run the calling script in a private mount namespace (once).
# Usage: cg_enter_namespace "$0" "$@"
cg_enter_namespace()
{
	if [ -z "${CG_IN_NAMESPACE:-}" ]; then
		export CG_IN_NAMESPACE=1
		exec unshare -m --propagation private "$@"
	fi
}

# A free port, at random: test runs side by side must not meet (pids
# wrap at pid_max, so a port derived from one is shared sooner or later).
# Below the kernel's ephemeral range, where no client connection takes
# it, and used by no socket at all: a bound one that does not listen
# stops smbd's bind as well (t04).
cg_pick_port()
{
	local low

	read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null
	[ "${low:-0}" -gt 21024 ] || low=32768
	CG_PORT=$((20000 + RANDOM % (low - 20000)))
	while ss -Htan "sport = :$CG_PORT" | grep -q .; do
		CG_PORT=$((20000 + RANDOM % (low - 20000)))
	done
}

# The smbd listening on CG_PORT is ours, not another run's that took the
# port between the pick and our start (then our smbd cannot bind it, and
# our clients would talk to theirs)
cg_port_is_ours()
{
	ss -Htlnp "sport = :$CG_PORT" | grep -q "pid=$CG_SMBD_PID,"
}

# The unprivileged account the clients use; made once, kept. Scripts
# run side by side (testsuite/run): another may make it first
cg_ensure_user()
{
	[ "$CG_USER" = root ] && return 0
	id -u "$CG_USER" >/dev/null 2>&1 && return 0
	useradd --system --user-group --no-create-home \
		--home-dir /nonexistent --shell /usr/sbin/nologin "$CG_USER" ||
		id -u "$CG_USER" >/dev/null 2>&1
}

# cg_conf_private ROOT LOG: the [global] lines of an smbd of its own:
# its directories under ROOT (lock, state, cache, private, pid, ncalrpc),
# its log file LOG, and no NetBIOS, printers or spoolss
cg_conf_private()
{
	cat <<EOF
	disable netbios = yes
	lock directory = $1/lock
	state directory = $1/state
	cache directory = $1/cache
	private dir = $1/private
	pid directory = $1/pid
	ncalrpc dir = $1/ncalrpc
	log file = $2
	max log size = 0
	log level = ${CG_LOG_LEVEL:-1 cacheguard:10}
	passdb backend = tdbsam:$1/private/passdb.tdb
	load printers = no
	printcap name = /dev/null
	disable spoolss = yes
EOF
}

cg_smbd_init()
{
	CG_ROOT=${CG_ROOT:-$(mktemp -d /tmp/cacheguard.XXXXXX)}
	# smbd runs as the client's user after the tree connect: the path
	# to every share must be searchable by it
	chmod 0755 "$CG_ROOT"
	# A port of our own, so that test runs side by side never meet
	if [ -z "$CG_PORT" ]; then
		cg_pick_port
	fi
	CG_SHARE=${CG_SHARE:-$CG_ROOT/share}
	CG_CONF=$CG_ROOT/smb.conf
	CG_LOG=$CG_ROOT/log/smbd.log
	mkdir -p "$CG_ROOT"/{lock,state,cache,private,pid,ncalrpc,log,vfs} \
		"$CG_SHARE"
	chmod 1777 "$CG_SHARE"
	cg_ensure_user || { echo "cannot create the user $CG_USER" >&2; return 1; }

	# The system modules plus ours, over the modules dir
	cp -a "$CG_VFS_DIR"/. "$CG_ROOT/vfs/"
	if [ -f "$CG_MODULE" ]; then
		cp "$CG_MODULE" "$CG_ROOT/vfs/cacheguard.so"
	fi
	# the test-only module t15 stacks below cacheguard
	if [ -f "$CG_BUILD/cgtest.so" ]; then
		cp "$CG_BUILD/cgtest.so" "$CG_ROOT/vfs/cgtest.so"
	fi
	mount --bind "$CG_ROOT/vfs" "$CG_VFS_DIR"

	{
		cat <<EOF
[global]
	netbios name = CGTEST
	server role = standalone server
	smb ports = $CG_PORT
	interfaces = 127.0.0.1
	bind interfaces only = yes
EOF
		cg_conf_private "$CG_ROOT" "$CG_LOG"
	} >"$CG_CONF"
	printf '%s\n%s\n' "$CG_PASS" "$CG_PASS" |
		smbpasswd -c "$CG_CONF" -s -a "$CG_USER" \
		>"$CG_ROOT/log/smbpasswd.out" 2>&1
	trap cg_smbd_cleanup EXIT
}

# cg_global "smb.conf line" ...: [global] parameters; before any share
cg_global()
{
	local line

	for line in "$@"; do
		printf '\t%s\n' "$line"
	done >>"$CG_CONF"
}

# cg_share NAME ["smb.conf line" ...]: a share on $CG_SHARE
cg_share()
{
	local name=$1
	shift
	cg_share_at "$name" "$CG_SHARE" "$@"
}

# cg_mode_shares PREFIX "MODES" ["smb.conf line" ...]: the share plain,
# and for each mode a share PREFIXMODE on $CG_SHARE, the module in that
# mode with the lines
cg_mode_shares()
{
	local prefix=$1
	shift
	cg_share plain
	cg_mode_shares_at "$prefix" "$CG_SHARE" "$@"
}

# cg_mode_shares_at PREFIX PATH "MODES" ["smb.conf line" ...]: for each
# mode a share PREFIXMODE on PATH, the module in that mode with the lines
cg_mode_shares_at()
{
	local prefix=$1 path=$2 modes=$3 m
	shift 3
	for m in $modes; do
		cg_share_at "$prefix$m" "$path" "vfs objects = cacheguard" \
			"cacheguard:mode = $m" "$@"
	done
}

# cg_random_file SRC SIZE [COPY]: SIZE random bytes in SRC, and a copy
# of it in COPY, 0644 (root's file: the clients' account reads it, may
# not write it)
cg_random_file()
{
	head -c "$2" /dev/urandom >"$1"
	[ $# -lt 3 ] && return 0
	cp "$1" "$3"
	chmod 0644 "$3"
}

# cg_share_at NAME PATH ["smb.conf line" ...]
# cg_guard_share_name CONFIG: the share of a benchmark configuration
cg_guard_share_name()
{
	if [ "$1" = plain ]; then
		echo plain
	else
		printf 'guard_%s\n' "$(printf '%s' "$1" | tr -c 'A-Za-z0-9_-' _)"
	fi
}

# cg_guard_shares "CONFIGS" "OPTIONS": the share plain, and for each
# configuration a share (cg_guard_share_name): a mode, with OPTIONS,
# smb.conf lines separated by ';'; MODE@KEY=VALUE[@KEY=VALUE...], the
# same with cacheguard options of its own, KEY with '_' for its spaces
# (direct@direct_memory=8M: an ablation's configuration; default@...:
# the default share with them); "default",
# "vfs objects = cacheguard" and no option, OPTIONS neither (what almost
# every administrator runs); "plain-aa", a second plain share: plain
# against plain in the same run, whose spread is the run's noise
cg_guard_shares()
{
	local c

	cg_share plain
	for c in $1; do
		cg_guard_share "$c" "$2"
	done
}

# cg_guard_share CONFIG "OPTIONS": the share of one configuration, as
# cg_guard_shares makes it
cg_guard_share()
{
	local kv opt opts=() own=()

	IFS=';' read -r -a opts <<<"$2"
	case $1 in
	plain-aa)
		cg_share "$(cg_guard_share_name "$1")"
		;;
	default)
		cg_share "$(cg_guard_share_name "$1")" \
			"vfs objects = cacheguard"
		;;
	*)
		IFS=@ read -r -a kv <<<"$1"
		for opt in "${kv[@]:1}"; do
			own+=("cacheguard:${opt%%=*} = ${opt#*=}")
		done
		own=("${own[@]//_/ }")
		if [ "${kv[0]}" = default ]; then
			opts=()
		else
			opts=("cacheguard:mode = ${kv[0]}" "${opts[@]}")
		fi
		cg_share "$(cg_guard_share_name "$1")" \
			"vfs objects = cacheguard" "${opts[@]}" "${own[@]}"
		;;
	esac
}

cg_share_at()
{
	local name=$1 path=$2 line
	shift 2
	{
		printf '[%s]\n\tpath = %s\n\tread only = no\n' "$name" "$path"
		for line in "$@"; do
			printf '\t%s\n' "$line"
		done
	} >>"$CG_CONF"
}

# cg_mount_fs TYPE DIR [SIZE [MKFS-OPTION...]]: a fresh filesystem of
# TYPE (ext4, xfs, btrfs on a sparse loop image, or tmpfs) of SIZE
# (truncate's syntax, default 2G) mounted at DIR; unmounted by the
# cleanup. ext4 keeps no blocks reserved for root, so a filled one is
# full for every user. Fails when the kernel or mkfs tool is missing.
cg_mount_fs()
{
	local type=$1 dir=$2 size=${3:-2G} img
	shift $(($# < 3 ? $# : 3))

	img=$CG_ROOT/$(basename "$dir").$type.img
	mkdir -p "$dir"
	if [ "$type" = tmpfs ]; then
		mount -t tmpfs -o "size=$size" tmpfs "$dir" || return 1
	else
		truncate -s "$size" "$img"
		case $type in
		ext4) mkfs.ext4 -q -F -m 0 "$@" "$img" ;;
		xfs) mkfs.xfs -q -f "$@" "$img" ;;
		btrfs) mkfs.btrfs -q -f "$@" "$img" ;;
		esac >"$CG_ROOT/log/mkfs-$type.out" 2>&1 || return 1
		mount -o loop "$img" "$dir" || return 1
	fi
	chmod 1777 "$dir"
	CG_MOUNTS="$dir ${CG_MOUNTS:-}"
}

# Our smbd lost the port to another run's listener: move to a new one
cg_smbd_restart_elsewhere()
{
	cg_smbd_stop
	CG_PORT_TRIES=$((${CG_PORT_TRIES:-0} + 1))
	[ "$CG_PORT_TRIES" -le 5 ] || return 1
	echo "port $CG_PORT is another socket's; moving" >&2
	cg_pick_port
	sed -i "s/^\tsmb ports = .*/\tsmb ports = $CG_PORT/" "$CG_CONF"
	cg_smbd_start
}

cg_smbd_start()
{
	local i preload=${LD_PRELOAD:-}

	# For smbd alone (the sanitizer run, t12): CG_SMBD_PRELOAD goes
	# first in LD_PRELOAD, as a sanitizer runtime must, before the
	# caller's own (t35's shim); CG_SMBD_ENV is VAR=value words
	if [ -n "${CG_SMBD_PRELOAD:-}" ]; then
		preload="$CG_SMBD_PRELOAD${preload:+ $preload}"
	fi
	# its own session: on exit smbd signals its whole process group
	# shellcheck disable=SC2086
	setsid env ${preload:+"LD_PRELOAD=$preload"} ${CG_SMBD_ENV:-} \
		smbd --foreground --no-process-group --configfile="$CG_CONF" \
		</dev/null >>"$CG_ROOT/log/smbd.stdout" 2>&1 &
	CG_SMBD_PID=$!
	for i in $(seq 1 100); do
		if smbclient -L 127.0.0.1 -p "$CG_PORT" \
			-U "$CG_USER%$CG_PASS" >/dev/null 2>&1; then
			cg_port_is_ours && return 0
			cg_smbd_restart_elsewhere && return 0
			break
		fi
		if ! kill -0 "$CG_SMBD_PID" 2>/dev/null; then
			# it could not bind: someone else holds the port, a
			# listener or a socket bound without listening (t04)
			if ss -Htln "sport = :$CG_PORT" | grep -q . ||
			    grep -qs "open_sockets_smbd() failed" "$CG_LOG"; then
				cg_smbd_restart_elsewhere && return 0
			fi
			break
		fi
		sleep 0.1
	done
	echo "smbd did not start; see $CG_LOG" >&2
	tail -n 20 "$CG_LOG" "$CG_ROOT/log/smbd.stdout" >&2
	return 1
}

# cg_smbclient SHARE "commands" [extra smbclient args]
cg_smbclient()
{
	local share=$1 cmds=$2
	shift 2
	smbclient "//127.0.0.1/$share" -p "$CG_PORT" \
		-U "$CG_USER%$CG_PASS" "$@" -c "$cmds"
}

# cg_traced_get SHARE FILE STRACE-ARGS...: a cold get of $CG_SHARE/FILE
# from SHARE while strace (-f -qq, the given arguments) follows every
# smbd thread; the trace in $CG_ROOT/strace.SHARE; the copy must be
# byte-identical (a cg_expect of its own)
cg_traced_get()
{
	local share=$1 file=$2 out=$CG_ROOT/strace.$1 pid
	shift 2

	sync
	cg_drop_cache "$CG_SHARE/$file"
	strace -f -qq "$@" -o "$out" -p "$CG_SMBD_PID" &
	pid=$!
	sleep 1
	rm -f "$CG_ROOT/got"
	cg_smbclient "$share" "get $file $CG_ROOT/got" >/dev/null 2>&1
	sleep 0.5
	kill "$pid"
	wait "$pid" 2>/dev/null
	cg_expect "[$share] the copy is byte-identical" \
		cmp -s "$CG_SHARE/$file" "$CG_ROOT/got"
}

# Nothing left to stop is no failure: under "set -e" (the demo) a
# pkill that matched nothing ended the script with 1 in its exit trap,
# after a complete run (Samba 4.22's helpers are gone by then)
cg_smbd_stop()
{
	if [ -n "$CG_SMBD_PID" ]; then
		# children first: Samba 4.22 retitles them, so that -f
		# below may not find them
		pkill -P "$CG_SMBD_PID" 2>/dev/null || true
		kill "$CG_SMBD_PID" 2>/dev/null || true
		wait "$CG_SMBD_PID" 2>/dev/null || true
		CG_SMBD_PID=
	fi
	# forked children and samba-dcerpcd carry the config path too
	# (never an empty pattern: it matches every process, the other
	# scripts' that run beside this one included)
	[ -z "${CG_CONF:-}" ] || pkill -f -- "$CG_CONF" 2>/dev/null || true
	return 0
}

cg_smbd_cleanup()
{
	local m

	cg_smbd_stop
	for m in ${CG_MOUNTS:-}; do
		umount "$m" 2>/dev/null || true
	done
	umount "$CG_VFS_DIR" 2>/dev/null || true
	if [ -z "${CG_KEEP:-}" ] && [ -n "${CG_ROOT:-}" ]; then
		rm -rf "$CG_ROOT"
	fi
}

# cg_resident FILE [OFF LEN]: resident bytes of a file, from the kernel
cg_resident()
{
	"$CG_BUILD/cgcache" stat "$@"
}

# cg_kept FILE [OFF LEN]: the bytes of a file that nobody dropped, the
# lower bound of a "stays cached" check: those resident and those the
# kernel's reclaim took (cgcache evicted). The machine's other work may
# push a page the module left out of memory; only an invalidation, the
# module's POSIX_FADV_DONTNEED, leaves no trace where the page was.
# Without cachestat (Linux before 6.5) the resident bytes alone.
cg_kept()
{
	local resident evicted

	resident=$(cg_resident "$@") || return 1
	evicted=$("$CG_BUILD/cgcache" evicted "$@" 2>/dev/null) || evicted=0
	echo $((resident + evicted))
}

# cg_sample_start FILE...: sample the files' residency, summed, in the
# background, every 100 ms for at most 5 minutes, until cg_sample_stop;
# that sets CG_PEAK, the largest sample in bytes (empty, with a message,
# when a sample failed: no figure). With CG_SAMPLE_BEHIND=SPAN (one
# file) it also sets CG_PEAK_BEHIND, the most of the file resident more
# than SPAN below its highest resident byte: what a stream left behind
# its front and its readahead (sample.sh)
cg_sample_start()
{
	local files first cols

	printf -v files '%q ' "$@"
	printf -v first '%q' "$1"
	cols=("\"\$CG_BUILD/cgcache\" sum $files")
	if [ -n "${CG_SAMPLE_BEHIND:-}" ]; then
		cols+=("\"\$CG_BUILD/cgcache\" behind $first $CG_SAMPLE_BEHIND")
	fi
	: >"$CG_ROOT/samples"
	CG_SAMPLE_COLUMNS=${#cols[@]}
	cg_sampler_start "$CG_ROOT/samples" 0.1 300 "${cols[@]}"
}

cg_sample_stop()
{
	cg_sampler_stop
	CG_PEAK=$(cg_sample_peak 1 "$CG_ROOT/samples")
	CG_PEAK_BEHIND=
	if [ "${CG_SAMPLE_COLUMNS:-1}" -ge 2 ]; then
		CG_PEAK_BEHIND=$(cg_sample_peak 2 "$CG_ROOT/samples")
	fi
	return 0
}

# cg_wait_file FILE: wait up to 30 s for FILE to exist (a paused
# reader's signal); fails when it never does
cg_wait_file()
{
	local _

	for _ in $(seq 1 300); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# cg_shim NAME: compile a script's LD_PRELOAD shim for smbd,
# $CG_ROOT/NAME.c, into $CG_ROOT/NAME.so; false, with a FAIL line, when
# gcc cannot
cg_shim()
{
	gcc -shared -fPIC -O2 -o "$CG_ROOT/$1.so" "$CG_ROOT/$1.c" -ldl \
		>"$CG_ROOT/$1.gcc.out" 2>&1 && return 0
	cg_fail "build the shim $1" "$(head -n 3 "$CG_ROOT/$1.gcc.out")"
	return 1
}

cg_drop_cache()
{
	"$CG_BUILD/cgcache" drop "$1"
}

# The kernel's readahead for FILE's block device, in bytes (0 if unknown)
cg_device_readahead()
{
	local dev q

	dev=$(stat -c '%Hd:%Ld' "$1" 2>/dev/null) || { echo 0; return; }
	for q in /sys/dev/block/$dev/queue /sys/dev/block/$dev/../queue; do
		if [ -r "$q/read_ahead_kb" ]; then
			echo $(($(cat "$q/read_ahead_kb") * 1024))
			return
		fi
	done
	echo 0
}

# cg_loop_dev DIR: the block device name (loop3) of a filesystem that
# cg_mount_fs made at DIR
cg_loop_dev()
{
	basename "$(findmnt -n -o SOURCE --target "$1")"
}

# cg_smbd_holding NAME: the pids of this server's smbd processes that
# hold a file whose path ends in /NAME open, one per line
cg_smbd_holding()
{
	local pid

	for pid in $(cg_smbd_pids); do
		if ls -l "/proc/$pid/fd" 2>/dev/null | grep -q "/$1\$"; then
			echo "$pid"
		fi
	done
}

# cg_dev_read DEV: bytes read from block device DEV so far (sysfs stat)
cg_dev_read()
{
	echo $(($(awk '{print $3}' "/sys/block/$1/stat") * 512))
}

# The pids of the smbd processes of this test server (the parent and
# one per client connection), one per line. By parentage, not command
# line: Samba 4.22 retitles its children ("smbd: client [...]")
cg_smbd_pids()
{
	[ -n "$CG_SMBD_PID" ] || return 0
	# one ps for all of them: samplers call this under load
	ps -o pid=,args= -p "$CG_SMBD_PID" --ppid "$CG_SMBD_PID" |
		awk '$2 ~ /^smbd/ && $0 !~ /smbd: (notifyd|cleanupd)/ {
			print $1 }'
}

# cg_rss_anon_of PID...: "SUM MAX", the RssAnon of those processes
# summed and the largest one's, in bytes ("0 0" when all are gone); one
# grep for all of them, so that a sampler stays a few processes per line.
# The one reader of RssAnon: cg_rss_anon and cg_smbd_rss_anon use it.
cg_rss_anon_of()
{
	[ $# -gt 0 ] && printf '/proc/%s/status\n' "$@" |
		xargs -r grep -hs '^RssAnon:' |
		awk '{ s += $2; if ($2 > m) m = $2 }
		     END { print s * 1024, m * 1024 }' ||
		echo "0 0"
}

# cg_rss_anon PID: its anonymous resident memory in bytes (0 if gone)
cg_rss_anon()
{
	local sum max

	read -r sum max < <(cg_rss_anon_of "$1")
	echo "$sum"
}

# cg_smbd_rss_anon: "SUM MAX" of all the server's smbd processes
cg_smbd_rss_anon()
{
	# shellcheck disable=SC2046 # one PID per word
	cg_rss_anon_of $(cg_smbd_pids)
}

# cg_session_open SHARE NAME: a long smbclient session on SHARE that
# reads its commands from a fifo ($CG_ROOT/NAME.fifo, its output in
# $CG_ROOT/NAME.log). Sets CG_SESSION_FD, the descriptor to write its
# commands to; CG_SESSION_CLIENT, the smbclient's pid; CG_SESSION_PID,
# the smbd process that appeared when it connected (fails when none did
# within 10 s)
cg_session_open()
{
	local fifo=$CG_ROOT/$2.fifo before p _

	rm -f "$fifo"
	mkfifo "$fifo"
	before=" $(cg_smbd_pids | tr '\n' ' ') "
	smbclient "//127.0.0.1/$1" -p "$CG_PORT" -U "$CG_USER%$CG_PASS" \
		<"$fifo" >"$CG_ROOT/$2.log" 2>&1 &
	CG_SESSION_CLIENT=$!
	exec {CG_SESSION_FD}>"$fifo"
	echo ls >&"$CG_SESSION_FD"
	CG_SESSION_PID=
	for _ in $(seq 1 100); do
		for p in $(cg_smbd_pids); do
			[[ "$before" == *" $p "* ]] || CG_SESSION_PID=$p
		done
		[ -n "$CG_SESSION_PID" ] && return 0
		sleep 0.1
	done
	return 1
}

# cg_session_get FD NAME GOT SIZE SECONDS: the session whose commands go
# to FD gets NAME into GOT; waits until GOT holds SIZE bytes, for SECONDS
# at most (fails then)
cg_session_get()
{
	local _

	rm -f "$3"
	echo "get $2 $3" >&"$1"
	for _ in $(seq 1 $(($5 * 10))); do
		[ "$(stat -c %s "$3" 2>/dev/null)" = "$4" ] && return 0
		sleep 0.1
	done
	return 1
}
