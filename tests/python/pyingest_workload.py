"""pyingest_workload.py LIB OUTFILE - pyframes_workload.py (the walker's
harness) as it is, then the process's own /proc/self/maps into OUTFILE.maps,
so that ingest can symbolize and unwind the launches' native stacks here and
splice the Python frames into them (pyingest-test.sh)."""
import os
import runpy
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.argv = [os.path.join(here, "pyframes_workload.py")] + sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
with open("/proc/self/maps") as src, open(sys.argv[2] + ".maps", "w") as dst:
    dst.write(src.read())
