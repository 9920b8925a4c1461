#!/usr/bin/env python3
"""Packs probe.cu's raw results into a few compressed files (the device tool brings back at most 8):
for each op and input set, the inputs (random sets only; dense ranges are rebuilt from probe.cu's description) and
the GPU's result as a signed difference of bit patterns from the correctly rounded result (numpy float64, rounded
to float32): lossless, and mostly small numbers, which compress well.
  analyse.py RAWDIR OUTDIR"""
import glob, os, sys
import numpy as np

raw, out = sys.argv[1], sys.argv[2]
ref = {
    "ex2": np.exp2, "lg2": np.log2, "rcp": lambda x: 1.0 / x, "rsqrt": lambda x: 1.0 / np.sqrt(x),
    "sin": np.sin, "cos": np.cos, "tanh": np.tanh, "sqrtapprox": np.sqrt,
}
groups = {"ex2": {}, "lg2": {}, "rcp": {}, "rsqrt": {}, "misc": {}}
np.seterr(all="ignore")
for path in sorted(glob.glob(os.path.join(raw, "*.in"))):
    name = os.path.basename(path)[:-3]
    op, dataset = name.split("_", 1)
    x = np.fromfile(path, dtype=np.uint32)
    y = np.fromfile(path[:-3] + ".out", dtype=np.uint32)
    fn = next(v for k, v in ref.items() if op.startswith(k))
    r = fn(x.view(np.float32).astype(np.float64)).astype(np.float32).view(np.uint32)
    d = (y.astype(np.int64) - r.astype(np.int64)).astype(np.int32)
    g = next((k for k in groups if op.startswith(k)), "misc")
    groups[g][name + "_d"] = d
    if "rand" in dataset or "bits" in dataset or dataset in ("small", "big", "sub", "m2", "m05"):
        groups[g][name + "_in"] = x
    nz = np.count_nonzero(d)
    hist = {int(v): int(c) for v, c in zip(*np.unique(np.clip(d, -4, 4), return_counts=True))}
    print(f"{name}: {len(x)} inputs, {nz} differ from correctly rounded; clipped histogram {hist}")
for g, arrays in groups.items():
    if arrays:
        np.savez_compressed(os.path.join(out, g + ".npz"), **arrays)
        print(g, os.path.getsize(os.path.join(out, g + ".npz")), "bytes")
