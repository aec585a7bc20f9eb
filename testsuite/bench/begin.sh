# SPDX-License-Identifier: GPL-3.0-or-later
#
# The opening of a benchmark script that runs its own smbd
# (testsuite/lib/smbd.sh) as root in a private mount namespace:
#
#   . "$(dirname "$0")/begin.sh" "WHAT IT NEEDS ROOT FOR" "$@"
#
# It sets -u, here (the script's folder) and top (the tree's), stops
# with "SCRIPT needs root: WHAT IT NEEDS ROOT FOR" (exit 1) when not
# root, sources smbd.sh and runs the script again in a mount namespace
# of its own (cg_enter_namespace).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
if [ "$(id -u)" != 0 ]; then
	echo "$(basename "$0") needs root: $1" >&2
	exit 1
fi
shift
. "$top/testsuite/lib/smbd.sh"
cg_enter_namespace "$0" "$@"
