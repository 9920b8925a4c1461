#!/usr/bin/env python3
"""Packs probe.cu's raw results into OUTDIR/lg2.npz: per set, the inputs (except the whole binades, which
probe.cu's ranges rebuild) and the GPU's result as the signed difference of its bit pattern from the correctly
rounded log2 (numpy float64 rounded to float32): lossless, small numbers, which compress well.
  pack.py RAWDIR OUTDIR"""
import glob, os, sys
import numpy as np

raw, out = sys.argv[1], sys.argv[2]
arrays = {}
np.seterr(all="ignore")
for path in sorted(glob.glob(os.path.join(raw, "*.in"))):
    name = os.path.basename(path)[:-3]
    x = np.fromfile(path, dtype=np.uint32)
    y = np.fromfile(path[:-3] + ".out", dtype=np.uint32)
    r = np.log2(x.view(np.float32).astype(np.float64)).astype(np.float32).view(np.uint32)
    d = (y.astype(np.int64) - r.astype(np.int64)).astype(np.int32)
    arrays[name + "_d"] = d
    if not name.split("_", 1)[1].startswith("e"):
        arrays[name + "_in"] = x
    hist = {int(v): int(c) for v, c in zip(*np.unique(np.clip(d, -4, 4), return_counts=True))}
    print(f"{name}: {len(x)} inputs, {np.count_nonzero(d)} differ from correctly rounded; clipped {hist}")
np.savez_compressed(os.path.join(out, "lg2.npz"), **arrays)
print("lg2.npz", os.path.getsize(os.path.join(out, "lg2.npz")), "bytes")
