# SPDX-License-Identifier: GPL-3.0-or-later
#
# A CTDB cluster on this machine for tests: N nodes of Debian's ctdbd in
# test mode (CTDB_TEST_MODE, each node's files under its CTDB_BASE, as
# Samba's ctdb/tests/local_daemons.sh sets them up), on 127.0.0.2 and
# up in a private network namespace, one shared directory, and per node
# an smbd with "clustering = yes" on its node's ctdbd socket, its own
# lock, state, cache and private directories, and the freshly built
# cacheguard.so bind-mounted over smbd's modules dir (in the private
# mount namespace). All nodes share this machine's page cache: a test
# tells them apart by giving each node its own files.
#
#   cg_cluster_enter "$0" "$@"	re-run the script in private mount and
#				network namespaces (once)
#   cg_cluster_init N		make the nodes' directories and configs
#				(CG_CLUSTER, CG_SHARED: the share's path)
#   cg_cluster_share NAME [LINE...]	a share on CG_SHARED on every node
#   cg_cluster_start		start ctdbd on every node, wait for the
#				cluster, then every smbd
#   cg_node_state_on_shared N	node N's state directory on the shared one
#				by mistake (a FUSE mount of it)
#   cg_node_ip N, cg_node_log N, cg_node_state N, cg_node_pid N
#   cg_node_smbclient N SHARE CMD	smbclient against node N
#   cg_node_ctdb N ARGS...	the ctdb tool against node N
#   cg_cluster_stop		stop every smbd and ctdbd (also on exit)

# smbd.sh's settings (CG_BUILD, CG_USER, CG_VFS_DIR, CG_MODULE ...) and
# cg_conf_private; nothing of it runs on its own
. "$(dirname "${BASH_SOURCE[0]}")/smbd.sh"
CG_NODES=0
declare -a CG_NODE_PID=()

cg_cluster_enter()
{
	if [ -z "${CG_IN_CLUSTER_NS:-}" ]; then
		export CG_IN_CLUSTER_NS=1
		exec unshare -m -n --propagation private "$@"
	fi
}

cg_node_ip()
{
	echo "127.0.0.$(($1 + 2))"
}

cg_node_log()
{
	echo "$CG_CLUSTER/smb.$1/log/smbd.log"
}

# The node's state directory, as its smb.conf says
cg_node_state()
{
	sed -n 's/^\tstate directory = //p' "$CG_CLUSTER/smb.$1/smb.conf"
}

# cg_node_state_on_shared N: node N's state directory put on the shared
# directory by mistake, as a cluster filesystem's: CG_CLUSTER/shared/state
# through one FUSE mount (bindfs) that every such node uses, so that
# their POSIX locks meet as a cluster filesystem's do (two FUSE mounts
# would each keep locks of their own); before cg_cluster_start
cg_node_state_on_shared()
{
	local mp=$CG_CLUSTER/cfs

	if ! mountpoint -q "$mp"; then
		mkdir -p "$CG_CLUSTER/shared/state" "$mp"
		bindfs "$CG_CLUSTER/shared/state" "$mp" || return 1
		CG_CLUSTER_MOUNTS="$mp ${CG_CLUSTER_MOUNTS:-}"
	fi
	sed -i "s|^\tstate directory = .*|\tstate directory = $mp|" \
		"$CG_CLUSTER/smb.$1/smb.conf"
}

cg_node_pid()
{
	echo "${CG_NODE_PID[$1]}"
}

cg_node_ctdb()
{
	local n=$1
	shift
	CTDB_TEST_MODE=yes CTDB_BASE="$CG_CLUSTER/node.$n" ctdb "$@"
}

cg_node_smbclient()
{
	local n=$1 share=$2 cmds=$3
	shift 3
	smbclient "//$(cg_node_ip "$n")/$share" -U "$CG_USER%$CG_PASS" "$@" \
		-c "$cmds"
}

cg_cluster_init()
{
	local n b m

	CG_NODES=$1
	CG_CLUSTER=$(mktemp -d /tmp/cacheguard-cluster.XXXXXX)
	chmod 0755 "$CG_CLUSTER"
	CG_SHARED=$CG_CLUSTER/shared/data
	mkdir -p "$CG_CLUSTER/shared/.ctdb" "$CG_SHARED" "$CG_CLUSTER/vfs"
	chmod 1777 "$CG_SHARED"
	trap cg_cluster_stop EXIT

	ip link set lo up
	for ((n = 0; n < CG_NODES; n++)); do
		ip addr add "$(cg_node_ip "$n")/8" dev lo
		cg_node_ip "$n"
	done >"$CG_CLUSTER/nodes"

	cp -a "$CG_VFS_DIR"/. "$CG_CLUSTER/vfs/"
	cp "$CG_MODULE" "$CG_CLUSTER/vfs/cacheguard.so"
	mount --bind "$CG_CLUSTER/vfs" "$CG_VFS_DIR"

	id -u "$CG_USER" >/dev/null 2>&1 ||
		useradd --system --user-group --no-create-home \
			--home-dir /nonexistent --shell /usr/sbin/nologin \
			"$CG_USER"

	for ((n = 0; n < CG_NODES; n++)); do
		b=$CG_CLUSTER/node.$n
		m=$CG_CLUSTER/smb.$n
		mkdir -p "$b"/{run,var,events/legacy,share/events/legacy} \
			"$b"/db/{volatile,persistent,state} \
			"$m"/{lock,state,cache,private,pid,ncalrpc,log}
		cp -p /etc/ctdb/functions /etc/ctdb/notify.sh \
			/etc/ctdb/debug-hung-script.sh "$b/"
		cp "$CG_CLUSTER/nodes" "$b/nodes"
		cat >"$b/ctdb.conf" <<EOF
[logging]
	location = file:$b/log.ctdb
	log level = NOTICE
[cluster]
	cluster lock = $CG_CLUSTER/shared/.ctdb/cluster.lock
	node address = $(cg_node_ip "$n")
[database]
	volatile database directory = $b/db/volatile
	persistent database directory = $b/db/persistent
	state database directory = $b/db/state
[failover]
	disabled = true
[event]
	debug script = debug-hung-script.sh
EOF
		{
			cat <<EOF
[global]
	netbios name = CGCLUSTER
	server role = standalone server
	clustering = yes
	ctdbd socket = $b/run/ctdbd.socket
	interfaces = $(cg_node_ip "$n")
	bind interfaces only = yes
EOF
			cg_conf_private "$m" "$m/log/smbd.log"
		} >"$m/smb.conf"
	done
}

cg_cluster_share()
{
	local name=$1 n line
	shift
	for ((n = 0; n < CG_NODES; n++)); do
		{
			printf '[%s]\n\tpath = %s\n\tread only = no\n' \
				"$name" "$CG_SHARED"
			for line in "$@"; do
				printf '\t%s\n' "$line"
			done
		} >>"$CG_CLUSTER/smb.$n/smb.conf"
	done
}

cg_cluster_start()
{
	local n i status ok

	for ((n = 0; n < CG_NODES; n++)); do
		CTDB_TEST_MODE=yes CTDB_BASE="$CG_CLUSTER/node.$n" ctdbd ||
			return 1
	done
	for i in $(seq 1 120); do
		status=$(cg_node_ctdb 0 status 2>/dev/null)
		ok=$(grep -c '^pnn:[0-9].* OK' <<<"$status")
		if grep -q '^Recovery mode:NORMAL' <<<"$status" &&
			[ "$ok" -eq "$CG_NODES" ]; then
			break
		fi
		sleep 0.5
	done
	if [ "$ok" -ne "$CG_NODES" ]; then
		echo "the cluster did not come up:" >&2
		echo "$status" >&2
		return 1
	fi
	# with clustering = yes, smbpasswd needs the node's ctdbd
	for ((n = 0; n < CG_NODES; n++)); do
		printf '%s\n%s\n' "$CG_PASS" "$CG_PASS" |
			smbpasswd -c "$CG_CLUSTER/smb.$n/smb.conf" -s \
				-a "$CG_USER" \
				>"$CG_CLUSTER/smb.$n/log/smbpasswd.out" 2>&1 ||
			return 1
	done
	# one after another: smbds that start together race for the
	# cluster's version lock (smbd_claim_version), and one can fail
	# with NT_STATUS_POSSIBLE_DEADLOCK and exit
	for ((n = 0; n < CG_NODES; n++)); do
		setsid smbd --foreground --no-process-group \
			--configfile="$CG_CLUSTER/smb.$n/smb.conf" </dev/null \
			>>"$CG_CLUSTER/smb.$n/log/stdout" 2>&1 &
		CG_NODE_PID[$n]=$!
		# it attaches its databases to the cluster first
		for i in $(seq 1 600); do
			# a tree connect (smbclient -L needs samba-dcerpcd)
			smbclient "//$(cg_node_ip "$n")/IPC\$" -c exit \
				-U "$CG_USER%$CG_PASS" >/dev/null 2>&1 && break
			sleep 0.1
		done
		if [ "$i" -eq 600 ]; then
			echo "smbd of node $n did not start:" >&2
			tail -n 20 "$(cg_node_log "$n")" >&2
			return 1
		fi
	done
}

cg_cluster_stop()
{
	local n m pid

	for pid in "${CG_NODE_PID[@]}"; do
		pkill -P "$pid" 2>/dev/null
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	CG_NODE_PID=()
	[ -n "${CG_CLUSTER:-}" ] || return 0
	pkill -f -- "$CG_CLUSTER/smb." 2>/dev/null
	for ((n = 0; n < CG_NODES; n++)); do
		[ -e "$CG_CLUSTER/node.$n/run/ctdbd.pid" ] &&
			cg_node_ctdb "$n" shutdown >/dev/null 2>&1
	done
	for m in ${CG_CLUSTER_MOUNTS:-}; do
		umount "$m" 2>/dev/null
	done
	CG_CLUSTER_MOUNTS=
	umount "$CG_VFS_DIR" 2>/dev/null
	if [ -z "${CG_KEEP:-}" ]; then
		rm -rf "$CG_CLUSTER"
	fi
	CG_CLUSTER=
}
