"""ringfull_check.py LIB - the launch stacks' ring when the writer thread
does not keep up (autograd's engine threads launch a backward pass every
few microseconds, each launch with some KiB of native frames to copy): a
launch with a stack copy leaves an eighth of the ring free, and a launch
that finds no room for its copy is written without it (ip and sp only,
copy size 0: its correlation id and autograd node still join it), counted
as an XP_LOST_STACK loss of XP_REC_LAUNCH; only a launch that finds no room
even then is dropped whole (XP_LOST_RINGBUF_FULL). Before this a
transformers step lost 58 of its 342 backward launches whole.
Deterministic: the writer writes into a pipe of one page that nobody reads
during the burst, so it stalls and the ring fills whatever the machine's
load; then the pipe is read to its end. Exit 1 on a failure."""
import ctypes
import fcntl
import os
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xpr_py  # noqa: E402

LOST_RINGBUF_FULL, LOST_STACK = 1, 3
N, NATIVE, COPY = 3000, 60000, 65528
RING_CELLS = 8192                       # stacks.c RING_BYTES / launchring.h XPC_RING_CELL
SPARE = RING_CELLS // 8                 # stacks.c SPARE_CELLS

lib = ctypes.CDLL(sys.argv[1])
lib.xpt_start_fd.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_int]
lib.xpt_bench_take.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64]
lib.xpt_bench_take.restype = ctypes.c_uint64
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "launch.xpr")
    rfd, wfd = os.pipe()
    fcntl.fcntl(wfd, 1031, 4096)        # F_SETPIPE_SZ: one page
    err = lib.xpt_start_fd(wfd, COPY, 0)  # takes wfd
    if err:
        sys.exit("ringfull_check: xpt_start_fd: %d" % err)
    lib.xpt_bench_take(N, N, NATIVE)    # one burst from a thread without Python

    def drain():
        with open(out, "wb") as f:
            while True:
                b = os.read(rfd, 1 << 20)
                if not b:
                    break
                f.write(b)
    t = threading.Thread(target=drain)
    t.start()
    lib.xpt_finish()                    # the writer writes the rest, closes wfd
    t.join()
    os.close(rfd)
    run = xpr_py.PyRun(xpr_py.read_records(out))

fails = []
copies = [ln["copy"] for ln in run.launches]
bare = [i for i, c in enumerate(copies) if c == 0]
whole = run.lost.get((xpr_py.REC_LAUNCH, LOST_RINGBUF_FULL), 0)
counted = run.lost.get((xpr_py.REC_LAUNCH, LOST_STACK), 0)
if len(run.launches) + whole != N:
    fails.append("%d launch records and %d counted dropped of %d" % (len(run.launches), whole, N))
# after the last launch with its copy at least SPARE cells stayed free, and
# only launches without one took them before any was dropped whole
if len(bare) < SPARE:
    fails.append("%d launches kept without their copy: the spare %d cells were not theirs"
                 % (len(bare), SPARE))
if counted != len(bare):
    fails.append("%d launches without their copy, %d counted" % (len(bare), counted))
if not whole:
    fails.append("no launch dropped whole: the writer never stalled (the test proves nothing)")
if any(c is None or (c and c < NATIVE) for c in copies):
    fails.append("a launch copied less than its %d bytes of frames and was not left bare" % NATIVE)
for f in fails:
    print("FAIL: ringfull: %s" % f)
print("ringfull: %d launches in one burst, the writer stalled: %d with their %d-byte copies,"
      " %d kept without (counted %d), %d dropped whole (counted)%s" % (
          N, len(copies) - len(bare), COPY, len(bare), counted, whole,
          ", %d FAILURES" % len(fails) if fails else ""))
sys.exit(1 if fails else 0)
