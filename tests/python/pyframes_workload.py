# -*- coding: utf-8 -*-
"""pyframes_workload.py - real Python code that "launches" (calls xpt_take
of the walker's test library, GIL released by ctypes) from known places:
nested calls, a second thread, a sorted() key callback and a property
(C->Python boundaries), a generator, a coroutine, methods, a lambda,
non-ASCII names and file names, a file name with a space, recursion deeper than the walker keeps,
code objects dying and their addresses reused, and a thread with no Python.
Writes OUTFILE (a launch-like .xpr) and OUTFILE.expect.json: for each launch
the frames Python itself reports (file, qualname, line; innermost first).

    PYTHON pyframes_workload.py build/tests/python/libxpc-pyframes-test.so /tmp/out.xpr
    pyembed pyframes_workload.py /tmp/out.xpr    # the same entry points built in (pyembed.c)
"""
import gc
import json
import os
import sys
import tempfile
import threading

OUT = sys.argv[2]
SKIPPED = []
if sys.argv[1] == "builtin:xpt":
    import xpt as LIB   # noqa: E402  (tests/python/pyembed.c)
else:
    import ctypes
    LIB = ctypes.CDLL(sys.argv[1])
    LIB.xpt_start.argtypes = [ctypes.c_char_p, ctypes.c_uint, ctypes.c_int]
    LIB.xpt_take.argtypes = [ctypes.c_uint64]
    LIB.xpt_take_native_thread.argtypes = [ctypes.c_uint64]
try:
    import asyncio
except ImportError:     # a static interpreter that cannot load _contextvars
    asyncio = None
    SKIPPED.append("asyncio")
COPY = int(os.environ.get("XPT_COPY", "0"))

# Thread.run calls its target with CALL_FUNCTION_EX: 3.11 runs the callee in a
# new eval call (an entry frame), 3.12 inline
MAYBE_ENTRY = {"thread_main"}
REUSED = [0]                    # code objects that got a dead one's address
EXPECT = []
NEXT = [1]
LOCK = threading.Lock()


def T(entry=(), maybe=()):
    """The stack of the caller as Python reports it; returns the launch's id.
    Called on the same line as xpt_take, so the caller's line is the take's.
    entry: frames (index from innermost) that start a C->Python boundary;
    maybe: frames where either is right (interpreter-dependent)."""
    f = sys._getframe(1)
    frames = []
    maybe = list(maybe)
    while f:
        co = f.f_code
        if co.co_name in MAYBE_ENTRY:
            maybe.append(len(frames))
        frames.append([co.co_filename, getattr(co, "co_qualname", co.co_name), f.f_lineno])
        f = f.f_back
    with LOCK:
        corr = NEXT[0]
        NEXT[0] += 1
        EXPECT.append({"corr": corr, "frames": frames, "entry": [len(frames) - 1] + list(entry),
                       "maybe": maybe})
    return corr


take = LIB.xpt_take


def inner():
    take(T())


def outer():
    inner()
    for _ in range(3):
        take(T())


def thread_main():
    outer()


def key_fn(x):
    take(T(entry=[0]))
    return -x


def gen(n):
    for i in range(n):
        take(T(maybe=[0]))
        yield i


async def coro():
    take(T(entry=[0], maybe=range(1, 64)))    # stepped from C by the task
    await asyncio.sleep(0)
    take(T(entry=[0], maybe=range(1, 64)))


class Model:
    def forward(self):
        take(T())

    @classmethod
    def build(cls):
        take(T())
        return cls()

    @staticmethod
    def helper():
        take(T())

    @property
    def weight(self):
        take(T(entry=[0]))
        return 1


def größe():
    take(T())


def 関数():
    take(T())


def 𠀀x():
    take(T())


def deep(n):
    if n:
        return deep(n - 1)
    take(T())


MODULE_SRC = "def from_module(take, T):\n    take(T())\n"


def foreign_files(tmp):
    # a file name with non-ASCII characters (1-byte kind), and exec'd code
    # whose file name needs the 2-byte kind
    path = os.path.join(tmp, "módulo_ü.py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(MODULE_SRC)
    sys.path.insert(0, tmp)
    mod = __import__("módulo_ü")
    mod.from_module(take, T)
    ns = {}
    exec(compile(MODULE_SRC, "<生成された>", "exec"), ns)
    ns["from_module"](take, T)
    # a file name with a space: its line is data, never read back from text
    ns = {}
    exec(compile("\n" * 41 + MODULE_SRC, os.path.join(tmp, "train step.py"), "exec"), ns)
    ns["from_module"](take, T)
    # names longer than the walker keeps (4096 UTF-8 bytes): cut at a character
    for name in ("a" * 5000, "é" * 3000, "𠀀" * 1500):
        ns = {}
        exec(compile(MODULE_SRC, name, "exec"), ns)
        ns["from_module"](take, T)


def reused_addresses():
    # code objects die and new ones take their addresses: ids must differ
    seen = set()
    for k in range(40):
        src = "\n" * k + "def f%d(take, T):\n    take(T())\n" % k
        ns = {}
        exec(compile(src, "<reuse-%d>" % (k % 3), "exec"), ns)
        ns["f%d" % k](take, T)
        REUSED[0] += id(ns["f%d" % k].__code__) in seen
        seen.add(id(ns["f%d" % k].__code__))
        del ns
        gc.collect()


def main():
    err = LIB.xpt_start(OUT.encode(), COPY, 1)
    if err:
        sys.exit("pyframes_workload: xpt_start(%s): %d" % (OUT, err))
    inner()
    outer()
    t = threading.Thread(target=thread_main)
    t.start()
    t.join()
    sorted([3, 1, 2], key=key_fn)
    for _ in gen(3):
        pass
    if asyncio:
        asyncio.run(coro())
    m = Model.build()
    m.forward()
    Model.helper()
    _ = m.weight
    (lambda: take(T()))()
    type("größe", (), {})       # a type's name: CPython caches the str's UTF-8
    größe()
    関数()
    𠀀x()
    deep(150)
    with tempfile.TemporaryDirectory() as tmp:
        foreign_files(tmp)
    reused_addresses()
    for _ in range(200):
        take(T())
    native = NEXT[0]
    NEXT[0] += 1
    LIB.xpt_take_native_thread(native)
    LIB.xpt_finish()
    with open(OUT + ".expect.json", "w") as f:
        json.dump({"python": sys.version, "hexversion": sys.hexversion,
                   "takes": EXPECT, "native_corr": native,
                   "reused_addresses": REUSED[0], "skipped": SKIPPED}, f, ensure_ascii=False)


main()
