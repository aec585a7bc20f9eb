# SPDX-License-Identifier: GPL-3.0-or-later
#
# The opening of a script that runs its own smbd (smbd.sh) as root in a
# private mount namespace, its first line after the comment:
#
#   . "$(dirname "$0")/../lib/script.sh" "WHAT IT CHECKS" "$@"
#
# It sets -u, sources the result lines (check.sh), says SKIPPED for WHAT
# IT CHECKS and exits without root, sources smbd.sh, runs the script
# again in a mount namespace of its own (cg_enter_namespace), and sets
# MiB and GiB. A CG_LOG_LEVEL set before it is smbd's log level.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/check.sh"
cg_need_root "$1"
shift
. "$(dirname "${BASH_SOURCE[0]}")/smbd.sh"
cg_enter_namespace "$0" "$@"
MiB=1048576
GiB=$((1024 * MiB))
