"""pyspin.py - known CPU-time shares per Python function, for the Python
frames of CPU samples (pysamples_test.py): rounds of alpha 50%, beta 30%,
gamma 20% of the process's CPU time, each spinning on time.process_time()
(in Python bytecode mostly: a normal user's samples count user time only).

    python3 pyspin.py SECONDS      # CPU seconds in all
"""
import sys
import time


def spin(sec):
    end = time.process_time() + sec
    while time.process_time() < end:  # SPIN-LINE
        for _ in range(100):  # mostly in Python, not in clock_gettime
            pass  # PASS-LINE


def alpha(sec):
    spin(sec)  # ALPHA-LINE


def beta(sec):
    spin(sec)  # BETA-LINE


def gamma(sec):
    spin(sec)  # GAMMA-LINE


def main():
    total = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
    for _ in range(max(1, int(total / 0.1))):
        alpha(0.05)
        beta(0.03)
        gamma(0.02)


main()
