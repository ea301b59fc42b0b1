"""pysleep.py - a known wait at a known line, for a normal user's waits
(nonroot_test.py pywaits): STEPS rounds of a little CPU work, then a
25 ms sleep in save_checkpoint; writes the time it measured asleep (ns).

    python3 pysleep.py STEPS OUT
"""
import sys
import time


def work():
    end = time.process_time() + 0.004
    while time.process_time() < end:
        pass


def save_checkpoint():
    time.sleep(0.025)  # SLEEP-LINE


def main():
    asleep = 0
    for _ in range(int(sys.argv[1])):
        work()
        t = time.monotonic_ns()
        save_checkpoint()
        asleep += time.monotonic_ns() - t
    with open(sys.argv[2], "w") as f:
        f.write("%d\n" % asleep)


main()
