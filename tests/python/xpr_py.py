"""xpr_py.py - reads the Python-stack records of a launch-PID.xpr (formats in
src/runfmt.h and src/runfmt_py.h) and turns (code, offset) into lines the way
CPython does, for tests; pure Python 3, zstd blocks through libzstd (ctypes).

    recs = read_records("run/launch-123.xpr")     # [(type, payload bytes)]
    run = PyRun(recs)                             # infos, codes, stacks, losses
    for st in run.stacks: [run.resolve(f) for f in st["frames"]]  # (file, qualname, line)
"""
import ctypes
import ctypes.util
import struct

REC_LAUNCH, REC_PYSTACK, REC_PYCODE, REC_PYINFO = 7, 9, 10, 11
REC_LOST, REC_ZBLOCK = 96, 97
LOST_PY_UNSUPPORTED, LOST_PY_NO_THREAD, LOST_PY_UNREADABLE = 7, 8, 9
PYFRAME_ENTRY = 1
PY_MAX_FRAMES = 128
PYSTACK_TRUNCATED = 1
PYSTACK_BORROWED = 2            # no frames: those of the latest stack of its key
PYINFO_SUPPORTED = 1

_zstd = None


def _unzstd(frame, raw_size):
    global _zstd
    if _zstd is None:
        _zstd = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
        _zstd.ZSTD_decompress.restype = ctypes.c_size_t
        _zstd.ZSTD_decompress.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                          ctypes.c_char_p, ctypes.c_size_t]
    out = ctypes.create_string_buffer(raw_size)
    n = _zstd.ZSTD_decompress(out, raw_size, frame, len(frame))
    if n != raw_size:
        raise ValueError("zstd block: %d bytes, expected %d" % (n, raw_size))
    return out.raw


def _records(buf, off, end, out):
    while off + 8 <= end:
        rtype, size = struct.unpack_from("<II", buf, off)
        if size < 8 or size % 8 or off + size > end:
            raise ValueError("bad record at %d (type %d size %d)" % (off, rtype, size))
        payload = buf[off + 8:off + size]
        if rtype == REC_ZBLOCK:
            raw_size, frame_size = struct.unpack_from("<QI", payload, 0)
            raw = _unzstd(payload[16:16 + frame_size], raw_size)
            _records(raw, 0, len(raw), out)
        else:
            out.append((rtype, payload))
        off += size


def read_records(path):
    """Every record of a run file, zstd blocks expanded: [(type, payload)]."""
    with open(path, "rb") as f:
        buf = f.read()
    if buf[:8] != b"XPCAPRAW":
        raise ValueError("%s: not a run file" % path)
    header_size = struct.unpack_from("<I", buf, 12)[0]
    out = []
    _records(buf, header_size, len(buf), out)
    return out


def _varint(t, i):
    b = t[i]
    i += 1
    v, shift = b & 63, 6
    while b & 64:
        b = t[i]
        i += 1
        v |= (b & 63) << shift
        shift += 6
    return v, i


def _svarint(t, i):
    v, i = _varint(t, i)
    return (-(v >> 1) if v & 1 else v >> 1), i


def line_310(table, first, off):
    """3.10 co_linetable: (bytecode delta, line delta) byte pairs."""
    line, start = first, 0
    for i in range(0, len(table) - 1, 2):
        end = start + table[i]
        ld = table[i + 1] - 256 if table[i + 1] > 127 else table[i + 1]
        cur = None
        if ld != -128:
            line += ld
            cur = line
        if start <= off < end:
            return cur
        start = end
    return None


def line_311(table, first, off):
    """3.11+ location table (Objects/locations.md): the line of byte offset off."""
    line, start, i = first, 0, 0
    while i < len(table):
        b = table[i]
        i += 1
        code, length = (b >> 3) & 15, (b & 7) + 1
        delta, none = 0, False
        if code == 15:
            none = True
        elif code == 14:
            delta, i = _svarint(table, i)
            for _ in range(3):
                _, i = _varint(table, i)
        elif code == 13:
            delta, i = _svarint(table, i)
        elif code >= 10:
            delta = code - 10
            i += 2
        else:
            i += 1
        line += delta
        end = start + 2 * length
        if start <= off < end:
            return None if none else line
        start = end
    return None


class PyRun:
    """The Python records of one stream, in order."""

    def __init__(self, recs):
        self.infos, self.codes, self.stacks, self.lost = [], {}, [], {}
        self.launches = []
        self.order_errors = []
        last_launch = None
        keyed = {}                      # (pid, key): its latest stack's frames and flags
        for rtype, p in recs:
            if rtype == REC_LAUNCH:
                ts, corr, pid, tid = struct.unpack_from("<QQII", p, 0)
                depth, kdepth, sflags = struct.unpack_from("<HHI", p, 32)
                copy = key = None       # XP_STACK_HAS_USER_COPY: the bytes copied, the key
                if sflags & 8:
                    copy, key = struct.unpack_from("<II", p, 40 + 8 * (depth + kdepth) + 24)
                last_launch = {"ts": ts, "corr": corr, "pid": pid, "tid": tid, "py": None,
                               "stack_flags": sflags, "copy": copy, "key": key}
                self.launches.append(last_launch)
            elif rtype == REC_PYINFO:
                ts, pid, hexv, flags, rlen = struct.unpack_from("<QIIIH", p, 0)
                self.infos.append({"pid": pid, "hexversion": hexv, "flags": flags,
                                   "reason": p[24:24 + rlen].decode()})
            elif rtype == REC_PYCODE:
                cid, pid, first, ver, flen, qlen, _, ltlen = struct.unpack_from("<QIIHHHHI", p, 0)
                o = 32
                fn = p[o:o + flen].decode()
                qn = p[o + flen:o + flen + qlen].decode()
                lt = p[o + flen + qlen:o + flen + qlen + ltlen]
                if cid in self.codes:
                    self.order_errors.append("code id %d written twice" % cid)
                self.codes[cid] = {"file": fn, "qualname": qn, "first": first,
                                   "version": ver, "linetable": lt}
            elif rtype == REC_PYSTACK:
                ts, corr, pid, tid, n, flags, key = struct.unpack_from("<QQIIHHI", p, 0)
                frames = []
                for k in range(n):
                    cid, off, fl = struct.unpack_from("<QII", p, 32 + 16 * k)
                    frames.append({"code": cid, "offset": off, "flags": fl})
                    if cid not in self.codes:
                        self.order_errors.append("stack %d names code %d before its record"
                                                 % (corr, cid))
                if flags & PYSTACK_BORROWED:
                    kept = keyed.get((pid, key))
                    if not kept:
                        self.order_errors.append("stack %d names key %d before any stack of it"
                                                 % (corr, key))
                    else:
                        frames, flags = kept["frames"], kept["flags"] | PYSTACK_BORROWED
                elif key:
                    keyed[(pid, key)] = {"frames": frames, "flags": flags}
                st = {"ts": ts, "corr": corr, "pid": pid, "tid": tid, "flags": flags,
                      "frames": frames, "key": key}
                if not last_launch or last_launch["corr"] != corr or last_launch["py"]:
                    self.order_errors.append("stack %d does not follow its launch" % corr)
                else:
                    last_launch["py"] = st
                self.stacks.append(st)
            elif rtype == REC_LOST:
                ts, kind, reason, count = struct.unpack_from("<QIIQ", p, 0)
                self.lost[(kind, reason)] = self.lost.get((kind, reason), 0) + count
            if rtype != REC_LAUNCH:
                last_launch = None      # a stack comes right after its launch

    def resolve(self, frame):
        """(file, qualname, line) of a frame, line None when the table has none."""
        c = self.codes[frame["code"]]
        fn = line_310 if c["version"] == 0x030a else line_311
        return c["file"], c["qualname"], fn(c["linetable"], c["first"], frame["offset"])
