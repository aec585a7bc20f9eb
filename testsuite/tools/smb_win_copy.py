#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
#
# smb_win_copy: copy a file the way Windows' CopyFileEx (Explorer, copy,
# robocopy) does over SMB2: the file opened for sequential access (and,
# with -u, unbuffered, as robocopy /J and COPY_FILE_NO_BUFFERING open it),
# read or written in requests of BLOCK bytes (1 MiB) with DEPTH of them
# (10) outstanding on the one connection, multi-credit, completing in any
# order. An upload (-w) announces the file's size first (end of file set
# before the first write), as Explorer does.
#
#   smb_win_copy.py [-p PORT] [-U USER%PASS] [-b BLOCK] [-d DEPTH] [-u] [-w]
#                   [-t TRACE] //HOST/SHARE/PATH LOCALFILE
#
# TRACE gets a line per request sent ("send OFFSET LENGTH") and per answer
# received ("done OFFSET LENGTH"), in order: the pattern the engine's unit
# tests replay (test_stream.c, test_windows_replay).
#
# Reading, every byte is compared with LOCALFILE; writing, LOCALFILE is
# what is written (the caller compares the result). Prints "ok N bytes in
# S s, most outstanding K" and exits 0; 1 on a mismatch; 2 on other
# errors; 77 when python3-impacket is missing.
#
# Copyright (C) 2026 The vfs_cacheguard authors

import struct
import sys
import time

from smb_tool import parse, run

try:
    from impacket import smb3, smb3structs as s3
    from impacket.nt_errors import STATUS_SUCCESS
except ImportError:
    print("python3-impacket is not installed")
    sys.exit(77)


def charge(n):
    """The credits a request of n bytes costs (MS-SMB2 3.1.5.2)"""
    return 1 + (max(n, 1) - 1) // 65536


class Pipe:
    """Requests of one connection, DEPTH of them outstanding. impacket
    numbers a request's message id as the previous one plus one and
    adds the rest of its credit charge when the answer comes; with
    several outstanding the next id must skip the whole charge at once,
    so the window is moved here at send and moved back at receipt."""

    def __init__(self, conn, depth, trace):
        self.conn = conn
        self.depth = depth
        self.pending = {}
        self.most = 0
        self.trace = trace

    def log(self, event, what):
        if self.trace is not None:
            self.trace.write('%s %d %d\n' % ((event,) + what))

    def send(self, packet, n, what):
        packet['CreditCharge'] = charge(n)
        mid = self.conn.sendSMB(packet)
        self.conn._Connection['SequenceWindow'] += charge(n) - 1
        self.pending[mid] = what
        self.most = max(self.most, len(self.pending))
        self.log('send', what)

    def full(self):
        return len(self.pending) >= self.depth

    def receive(self):
        """(what was sent, the answer) of the next answer to arrive"""
        ans = self.conn.recvSMB()
        self.conn._Connection['SequenceWindow'] -= ans['CreditCharge'] - 1
        what = self.pending.pop(ans['MessageID'])
        self.log('done', what)
        if not ans.isValidAnswer(STATUS_SUCCESS):
            raise RuntimeError('request at %s: status %#x' %
                               (what, ans['Status']))
        return what, ans


def packet(conn, tree, command, data):
    p = conn.SMB_PACKET()
    p['Command'] = command
    p['TreeID'] = tree
    p['Data'] = data
    return p


def copy_from(conn, tree, fid, pipe, size, block):
    got = bytearray(size)
    off = 0
    while off < size or pipe.pending:
        while off < size and not pipe.full():
            n = min(block, size - off)
            r = s3.SMB2Read()
            r['Padding'] = 0x50
            r['FileID'] = fid
            r['Length'] = n
            r['Offset'] = off
            pipe.send(packet(conn, tree, s3.SMB2_READ, r), n, (off, n))
            off += n
        (at, n), ans = pipe.receive()
        data = s3.SMB2Read_Response(ans['Data'])['Buffer']
        if len(data) != n:
            raise RuntimeError('read at %d: %d bytes of %d' %
                               (at, len(data), n))
        got[at:at + n] = data
    return bytes(got)


def copy_to(conn, tree, fid, pipe, local, block):
    off = 0
    while off < len(local) or pipe.pending:
        while off < len(local) and not pipe.full():
            n = min(block, len(local) - off)
            w = s3.SMB2Write()
            w['FileID'] = fid
            w['Length'] = n
            w['Offset'] = off
            w['WriteChannelInfoOffset'] = 0
            w['Buffer'] = local[off:off + n]
            pipe.send(packet(conn, tree, s3.SMB2_WRITE, w), n, (off, n))
            off += n
        (at, n), ans = pipe.receive()
        if s3.SMB2Write_Response(ans['Data'])['Count'] != n:
            raise RuntimeError('write at %d: short' % at)


def main():
    host, share, path, local, user, password, port, own = parse(
        'smb_win_copy.py [-b BLOCK] [-d DEPTH] [-u] [-w] '
        '[-t TRACE] //HOST/SHARE/PATH LOCALFILE', 'b:d:t:uw')
    block = int(own.get('b', 1 << 20))
    depth = int(own.get('d', 10))
    writing = 'w' in own
    options = s3.FILE_NON_DIRECTORY_FILE | s3.FILE_SEQUENTIAL_ONLY
    if 'u' in own:
        options |= s3.FILE_NO_INTERMEDIATE_BUFFERING

    conn = smb3.SMB3(host, host, sess_port=port)
    conn.login(user, password)
    tree = conn.connectTree(share)
    name = path.replace('/', '\\')
    if writing:
        fid = conn.create(tree, name,
                          s3.FILE_WRITE_DATA | s3.FILE_WRITE_ATTRIBUTES |
                          s3.FILE_READ_ATTRIBUTES | s3.SYNCHRONIZE,
                          0, options, s3.FILE_OVERWRITE_IF, 0)
        conn.setInfo(tree, fid, struct.pack('<q', len(local)),
                     s3.SMB2_0_INFO_FILE, s3.SMB2_FILE_END_OF_FILE_INFO)
    else:
        fid = conn.create(tree, name,
                          s3.FILE_READ_DATA | s3.FILE_READ_ATTRIBUTES |
                          s3.SYNCHRONIZE,
                          s3.FILE_SHARE_READ | s3.FILE_SHARE_DELETE,
                          options, s3.FILE_OPEN, 0)
    pipe = Pipe(conn, depth, open(own['t'], 'w') if 't' in own else None)
    t0 = time.monotonic()
    if writing:
        copy_to(conn, tree, fid, pipe, local, block)
        got = local
    else:
        got = copy_from(conn, tree, fid, pipe, len(local), block)
    conn.close(tree, fid)
    secs = time.monotonic() - t0
    conn.logoff()
    if got != local:
        print('mismatch: %d of %d bytes' % (len(got), len(local)))
        return 1
    print('ok %d bytes in %.3f s, most outstanding %d' %
          (len(got), secs, pipe.most))
    return 0


if __name__ == '__main__':
    run(main)
