#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
#
# smb1_dos_open: an SMB1 client that opens one file twice in DOS
# compatibility mode (OPEN_ANDX, read-write, share mode 0), as DOS and
# old Windows programs do. smbd then shares one descriptor between the
# two handles (fcb_or_dos_open) and calls SMB_VFS_CLOSE only for the
# last of them. Reads the whole file through the first handle, closes
# it, reads one more block through the second, closes that too. Every
# byte is compared with LOCALFILE. With -n, then reads the share's file
# NEXT whole, on the same connection (one smbd process), opened as
# usual (read-only, deny none).
#
#   smb1_dos_open.py [-p PORT] [-U USER%PASS] [-n NEXT]
#                    //HOST/SHARE/PATH LOCALFILE
#
# Prints "ok N bytes, fids A B" and exits 0 when every byte matched; 1 on
# a mismatch; 2 on other errors; 77 when python3-impacket is missing.
#
# Copyright (C) 2026 The vfs_cacheguard authors

import sys

from smb_tool import parse, read_all, run

try:
    from impacket import smb
except ImportError:
    print("python3-impacket is not installed")
    sys.exit(77)

# OPEN_ANDX: AccessMode read-write (2), sharing mode 0 (compatibility:
# DENY_DOS); OpenMode: open an existing file
ACCESS_RW_COMPAT = 0x0002
ACCESS_READ_DENY_NONE = 0x0040
OPEN_EXISTING = 0x0001
BLOCK = 60 * 1024


def main():
    host, share, path, local, user, password, port, own = parse(
        'smb1_dos_open.py [-n NEXT] //HOST/SHARE/PATH LOCALFILE', 'n:')
    nxt = None
    if 'n' in own:
        nxt = '\\' + own['n'].replace('/', '\\')

    conn = smb.SMB(host, host, sess_port=port)
    conn.login(user, password)
    tid = conn.tree_connect_andx('\\\\%s\\%s' % (host, share), password)
    name = '\\' + path.replace('/', '\\')
    fid1 = conn.open_andx(tid, name, OPEN_EXISTING, ACCESS_RW_COMPAT)[0]
    fid2 = conn.open_andx(tid, name, OPEN_EXISTING, ACCESS_RW_COMPAT)[0]

    got = read_all(lambda off: conn.read_andx(tid, fid1, off, BLOCK),
                   len(local))
    conn.close(tid, fid1)
    tail = conn.read_andx(tid, fid2, 0, BLOCK)
    conn.close(tid, fid2)
    more = 0
    if nxt is not None:
        fid = conn.open_andx(tid, nxt, OPEN_EXISTING,
                             ACCESS_READ_DENY_NONE)[0]
        more = len(read_all(lambda off: conn.read_andx(tid, fid, off,
                                                       BLOCK)))
        conn.close(tid, fid)
    conn.logoff()
    if got != local or tail != local[:BLOCK]:
        print('mismatch: %d of %d bytes, tail %d' %
              (len(got), len(local), len(tail)))
        return 1
    print('ok %d bytes, fids %d %d, then %d bytes' %
          (len(got), fid1, fid2, more))
    return 0


if __name__ == '__main__':
    run(main)
