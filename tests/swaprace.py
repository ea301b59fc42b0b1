"""swaprace.py - a name that turns into something else while a reader
opens it: a process of its own exchanges two names (renameat2
RENAME_EXCHANGE, one system call: each name is always one or the other) as
fast as it can. A reader that checks a name and then opens it again by
name finds, now and then, what it did not check: a FIFO (its open blocks
for ever), a link, a directory, or another directory above the file.

    with swaprace.swapping(run + "/xpcorr.db", fifo):
        outcomes = swaprace.repeat(lambda t: xpcorr("report", run, timeout=t), 2.0, 10)
"""
import contextlib
import ctypes
import os
import subprocess
import sys
import time

# the swapper: a and b exchanged until the file stop exists
SWAP = r"""
import ctypes, os, sys
a, b, stop = (p.encode() for p in sys.argv[1:4])
exchange = ctypes.CDLL(None, use_errno=True).renameat2
while not os.path.exists(stop):
    for _ in range(500):
        exchange(-100, a, -100, b, 2)
"""

AT_FDCWD, RENAME_EXCHANGE = -100, 2


def exchange(a, b):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.renameat2(AT_FDCWD, a.encode(), AT_FDCWD, b.encode(), RENAME_EXCHANGE):
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), a)


@contextlib.contextmanager
def swapping(path, other):
    """path and other exchanged back and forth for the block's time; then
    path is again what it was."""
    ino = os.lstat(path).st_ino
    stop = other + ".stop"
    exchange(path, other)           # fails here, not silently in the swapper
    exchange(path, other)
    swapper = subprocess.Popen([sys.executable, "-c", SWAP, path, other, stop])
    try:
        yield
    finally:
        open(stop, "w").close()
        swapper.wait(timeout=30)
        os.unlink(stop)
        if os.lstat(path).st_ino != ino:
            exchange(path, other)


def repeat(run, seconds, timeout):
    """run(timeout) -> a tuple, the exit status or 'timeout' first: again
    and again for seconds, and at least 3 times; stops at the first
    timeout. The outcomes, in order."""
    outcomes, end = [], time.monotonic() + seconds
    while len(outcomes) < 3 or time.monotonic() < end:
        outcomes.append(run(timeout))
        if outcomes[-1][0] == "timeout":
            break
    return outcomes
