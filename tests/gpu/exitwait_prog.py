"""exitwait_prog.py - programs for tests/gpu/exitwait-device.sh (issue 38),
run under the injection library alone (CUDA_INJECTION64_PATH):
  exitwait_prog.py dlopen-exit LIB   # CUDA on, then a dlopen whose constructor exits 3
  exitwait_prog.py toggle N          # N cudaProfilerStart/Stop pairs, kernels in each, two threads
  exitwait_prog.py nodump            # launches, prctl(PR_SET_DUMPABLE, 0), launches
"""
import ctypes
import sys
import threading


def dlopen_exit(lib):
    # no torch: libtorch_cpu.so is the test's fake, loaded by lib's dlopen
    cuda = ctypes.CDLL("libcuda.so.1")
    assert cuda.cuInit(0) == 0          # the injection library starts here
    ctx = ctypes.c_void_p()
    assert cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0) == 0
    ctypes.CDLL(lib)                    # exits with status 3 inside this dlopen
    sys.exit(6)


def toggle(n):
    import torch
    x = torch.ones(1 << 12, device="cuda")

    def work(x, k):
        for _ in range(k):
            torch.cuda.profiler.start()
            x = torch.cos(x)
            torch.cuda.profiler.stop()
            x = torch.sin(x)
        torch.cuda.synchronize()
    t = threading.Thread(target=work, args=(x.clone(), n))
    t.start()
    work(x, n)
    t.join()
    print("toggled", 2 * n)


def xpvisible_before(x):
    import torch
    for _ in range(20):
        x = torch.cos(x)
    return x


def xpsecret_after(x):
    import torch
    for _ in range(20):
        x = torch.sin(x)
    return x


def nodump():
    import torch
    x = torch.ones(1 << 12, device="cuda")
    x = xpvisible_before(x)
    torch.cuda.synchronize()
    import time
    time.sleep(0.3)                     # the writer has written those
    libc = ctypes.CDLL(None)
    assert libc.prctl(4, 0, 0, 0, 0) == 0    # PR_SET_DUMPABLE 0
    x = xpsecret_after(x)
    torch.cuda.synchronize()
    print("dumpable now", libc.prctl(3, 0, 0, 0, 0))   # PR_GET_DUMPABLE


if __name__ == "__main__":
    {"dlopen-exit": lambda: dlopen_exit(sys.argv[2]),
     "toggle": lambda: toggle(int(sys.argv[2])),
     "nodump": nodump}[sys.argv[1]]()
