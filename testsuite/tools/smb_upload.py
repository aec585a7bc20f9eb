#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
#
# smb_upload: the writes of t37 that smbclient cannot make: random writes,
# and a sequential upload that pauses before its flush.
#
#   smb_upload.py [-p PORT] [-U USER%PASS] random //HOST/SHARE/PATH \
#                 SIZE COUNT SEED
#	COUNT writes of 64 KiB at random 64 KiB-aligned offsets below
#	SIZE into a new file; prints "touched BYTES" (distinct bytes)
#   smb_upload.py [-p PORT] [-U USER%PASS] flush //HOST/SHARE/PATH \
#                 BYTES READY GO
#	BYTES written in order, 1 MiB at a time, into a new file, with a
#	pause half way: it creates the local file READY and waits up to
#	60 s for GO. Then it flushes and closes. Prints "flush ok" or
#	"flush failed 0xSTATUS", then "close ok" or "close failed
#	0xSTATUS".
#   smb_upload.py [-p PORT] [-U USER%PASS] close //HOST/SHARE/PATH \
#                 BYTES READY GO
#	As flush, but closes without flushing first: prints "close ok" or
#	"close failed 0xSTATUS".
#   smb_upload.py [-p PORT] [-U USER%PASS] durable //HOST/SHARE/PATH \
#                 BYTES READY GO
#	As flush, on a durable handle (a batch oplock and DHnQ) whose TCP
#	connection drops after the second half (no flush, no close, no
#	logoff); then a new session reconnects the handle (DHnC), flushes
#	and closes it: prints "reconnect ok" or "reconnect failed 0xSTATUS",
#	then the flush and the close as flush does.
#   smb_upload.py [-p PORT] [-U USER%PASS] abandon //HOST/SHARE/PATH \
#                 BYTES LOCAL READY
#	BYTES of random data written in order, 1 MiB at a time, into a new
#	file; each piece, once the server has acknowledged it, is appended
#	to LOCAL too. Then it creates READY and sleeps without flushing or
#	closing, for the test to kill it (or the smbd) in the middle.
#   smb_upload.py [-p PORT] [-U USER%PASS] wronly //HOST/SHARE/PATH \
#                 BYTES READPATH
#	BYTES written into a new file opened for writing only (smbd's
#	descriptor is then O_WRONLY), closed; then, in the same session
#	(the same smbd process), READPATH read in order, 1 MiB at a time.
#	Prints "read BYTES SHA256".
#
# Exits 0 when the client did all it was asked (a failed flush is an
# answer, not an error), 2 on other errors, 77 when python3-impacket is
# missing.
#
# Copyright (C) 2026 The vfs_cacheguard authors

import hashlib
import os
import random
import sys
import time

from smb_tool import Context, options, run

try:
    from impacket import smb3, smb3structs as s3
except ImportError:
    print("python3-impacket is not installed")
    sys.exit(77)

MiB = 1 << 20


def connect(unc, port, user, password, access=None, context=None):
    host, share, path = unc.lstrip('/').split('/', 2)
    conn = smb3.SMB3(host, host, sess_port=port)
    conn.login(user, password)
    tree = conn.connectTree(share)
    if access is None:
        access = (s3.FILE_READ_DATA | s3.FILE_WRITE_DATA |
                  s3.FILE_READ_ATTRIBUTES)
    if context is None:
        fid = conn.create(tree, path, access, 0,
                          s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OVERWRITE_IF,
                          0)
    else:
        fid = conn.create(tree, path, access, 0,
                          s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OVERWRITE_IF,
                          0, oplockLevel=s3.SMB2_OPLOCK_LEVEL_BATCH,
                          createContexts=[context])
    return conn, tree, fid


def write_only_then_read(conn, tree, fid, nbytes, path):
    write_to(conn, tree, fid, 0, nbytes)
    conn.close(tree, fid)
    fid = conn.create(tree, path, s3.FILE_READ_DATA, s3.FILE_SHARE_READ,
                      s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OPEN, 0)
    digest = hashlib.sha256()
    off = 0
    while True:
        try:
            data = conn.read(tree, fid, off, MiB)
        except smb3.SessionError as e:
            if e.get_error_code() == 0xc0000011:  # end of file
                break
            raise
        if not data:
            break
        digest.update(data)
        off += len(data)
    conn.close(tree, fid)
    print("read %d %s" % (off, digest.hexdigest()))


def status(call):
    try:
        call()
        return "ok"
    except smb3.SessionError as e:
        return "failed 0x%08x" % e.get_error_code()


def random_writes(conn, tree, fid, size, count, seed):
    rnd = random.Random(seed)
    blk = 64 * 1024
    touched = set()
    for _ in range(count):
        off = rnd.randrange(size // blk) * blk
        conn.writeFile(tree, fid, os.urandom(blk), off)
        touched.add(off)
    conn.close(tree, fid)
    print("touched %d" % (len(touched) * blk))


def write_to(conn, tree, fid, off, end):
    while off < end:
        n = min(MiB, end - off)
        off += conn.writeFile(tree, fid, os.urandom(n), off)
    return off


def abandon(conn, tree, fid, nbytes, local, ready):
    off = 0
    with open(local, "wb") as out:
        while off < nbytes:
            data = os.urandom(min(MiB, nbytes - off))
            n = conn.writeFile(tree, fid, data, off)
            out.write(data[:n])
            off += n
    open(ready, "w").close()
    time.sleep(600)


def write_with_pause(conn, tree, fid, nbytes, ready, go):
    off = write_to(conn, tree, fid, 0, nbytes // 2)
    open(ready, "w").close()
    for _ in range(600):
        if os.path.exists(go):
            break
        time.sleep(0.1)
    write_to(conn, tree, fid, off, nbytes)


def flush_after_pause(conn, tree, fid, nbytes, ready, go, flush=True):
    write_with_pause(conn, tree, fid, nbytes, ready, go)
    if flush:
        print("flush " + status(lambda: conn.flush(tree, fid)))
    print("close " + status(lambda: conn.close(tree, fid)))


def durable_after_pause(unc, port, user, password, nbytes, ready, go):
    conn, tree, fid = connect(unc, port, user, password,
                              context=Context(b'DHnQ', b'\0' * 16))
    write_with_pause(conn, tree, fid, nbytes, ready, go)
    # the network drops: no flush, no close, no logoff
    conn._NetBIOSSession.close()
    host, share, path = unc.lstrip('/').split('/', 2)
    conn = smb3.SMB3(host, host, sess_port=port)
    conn.login(user, password)
    tree = conn.connectTree(share)
    old = fid
    try:
        fid = conn.create(tree, path, s3.FILE_READ_DATA | s3.FILE_WRITE_DATA,
                          0, s3.FILE_NON_DIRECTORY_FILE, s3.FILE_OPEN, 0,
                          oplockLevel=s3.SMB2_OPLOCK_LEVEL_BATCH,
                          createContexts=[Context(b'DHnC', old)])
    except smb3.SessionError as e:
        print("reconnect failed 0x%08x" % e.get_error_code())
        return
    print("reconnect ok")
    print("flush " + status(lambda: conn.flush(tree, fid)))
    print("close " + status(lambda: conn.close(tree, fid)))


def main():
    port, user, password, _, args = options()
    if len(args) < 2:
        print(__doc__ if __doc__ else "usage: see the file's head")
        return 2
    if args[0] == "durable" and len(args) == 5:
        durable_after_pause(args[1], port, user, password, int(args[2]),
                            args[3], args[4])
        return 0
    access = s3.FILE_WRITE_DATA if args[0] == "wronly" else None
    conn, tree, fid = connect(args[1], port, user, password, access)
    if args[0] == "wronly" and len(args) == 4:
        write_only_then_read(conn, tree, fid, int(args[2]), args[3])
    elif args[0] == "random" and len(args) == 5:
        random_writes(conn, tree, fid, int(args[2]), int(args[3]),
                      int(args[4]))
    elif args[0] == "abandon" and len(args) == 5:
        abandon(conn, tree, fid, int(args[2]), args[3], args[4])
    elif args[0] in ("flush", "close") and len(args) == 5:
        flush_after_pause(conn, tree, fid, int(args[2]), args[3], args[4],
                          flush=args[0] == "flush")
    else:
        print("unknown mode or arguments: %s" % " ".join(args))
        return 2
    return 0


if __name__ == "__main__":
    run(main)
