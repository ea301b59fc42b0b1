#!/usr/bin/env python3
"""pylines-truth.py OUT.json SCRIPT [ARGS...] - the ground truth of which
Python lines launch GPU work: runs SCRIPT under a TorchDispatchMode that, for
every aten op on a CUDA tensor, notes the innermost Python frame outside
torch's dispatch machinery (the line that called into C). A separate run
from the recorded one: the profiled run itself is never changed.
OUT.json: {"sites": {"file:line": ops}}.

check-pylines.py compares xpcap's recorded launch lines against it."""
import collections
import json
import os
import runpy
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode

TORCH_DIR = os.path.dirname(torch.__file__)
# the mode's own machinery between the C dispatcher and __torch_dispatch__:
# the dispatch-mode helpers and dynamo's disable() wrapper around the call
MACHINERY = tuple(os.path.join(TORCH_DIR, p) for p in
                  ("utils", "_ops.py", "_dynamo", "overrides.py", "_compile.py"))


class Sites(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.sites = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        cuda = any(isinstance(a, torch.Tensor) and a.is_cuda
                   for a in torch.utils._pytree.tree_leaves((args, kwargs, out)))
        if cuda:
            f = sys._getframe(1)
            # innermost frame outside the dispatch machinery: the line that called into C
            while f and f.f_code.co_filename.startswith(MACHINERY):
                f = f.f_back
            if f:
                self.sites[f"{os.path.realpath(f.f_code.co_filename)}:{f.f_lineno}"] += 1
        return out


def main():
    out, script, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    sys.argv = [script] + args
    mode = Sites()
    with mode:
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit:
            pass
    with open(out, "w") as f:
        json.dump({"sites": dict(mode.sites)}, f, indent=0)


if __name__ == "__main__":
    main()
