# The raw files `uslab record`'s preloaded recorder leaves in
# $USLAB_RECORD_DIR (tools/record/record.h): raw.<pid>.<n>, blocks of a
# 24-byte header (magic REC_BLOCK_MAGIC "UBLK", tid, count, payload bytes,
# ...) and the payload. For the tests that forge them
# (test_record_hostile_tid.sh, test_record_last_block_cut_short.sh).
import os
import struct

MAGIC = 0x4b4c4255
HEADER = 24


def raw_files(d, pid):
    """(path, contents as a bytearray, offsets of its blocks) for each raw
    file of process @pid in directory @d (not its .caches side files)."""
    pre = "raw.%s." % pid
    for f in sorted(os.listdir(d)):
        if not f.startswith(pre) or "." in f[len(pre):]:
            continue
        path = os.path.join(d, f)
        b = bytearray(open(path, "rb").read())
        offs, off = [], 0
        while off + HEADER <= len(b):
            magic, tid, count, nbytes = struct.unpack_from("<IIII", b, off)
            assert magic == MAGIC, (path, off)
            offs.append(off)
            off += HEADER + nbytes
        yield path, b, offs
