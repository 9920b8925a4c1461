#!/usr/bin/env python3
"""Checks every result run.sh recorded against ptx-interp: unpacks the .npz files into raw operand and result
files named after their instruction, then runs PtxSpecialFunctions.EveryRecordedResult on them.
  verify.py DIR_WITH_NPZ PTX_EXEC_TESTS_BINARY"""
import os, subprocess, sys, tempfile
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_tables import dense, gpu  # noqa: E402  (make_tables only writes files when run as a script)

src, binary = sys.argv[1], sys.argv[2]
instruction = {"ex2ftz": "ex2.approx.ftz.f32", "ex2": "ex2.approx.f32", "rcpftz": "rcp.approx.ftz.f32",
               "rcp": "rcp.approx.f32", "rsqrtftz": "rsqrt.approx.ftz.f32", "rsqrt": "rsqrt.approx.f32"}
ranges = {"rcpftz_m1": (1.0, 2.0), "rsqrtftz_m14": (1.0, 4.0), "ex2ftz_p1": (1.0, 2.0), "ex2ftz_p05": (0.5, 1.0),
          "ex2ftz_n05": (-0.5, -1.0), "ex2ftz_n1": (-1.0, -2.0)}
with tempfile.TemporaryDirectory() as tmp:
    for group in ["ex2", "rcp", "rsqrt"]:
        z = np.load(os.path.join(src, group + ".npz"))
        for key in z.files:
            if not key.endswith("_d"):
                continue
            name = key[:-2]
            op, dataset = name.split("_", 1)
            inputs = dense(*ranges[name]) if name in ranges else None
            x, y = gpu(group, name, inputs)
            base = os.path.join(tmp, f"{instruction[op]}.{dataset}")
            x.astype("<u4").tofile(base + ".in")
            y.astype("<u4").tofile(base + ".out")
    env = dict(os.environ, CUEMU_MUFU_RECORDS=tmp)
    sys.exit(subprocess.call([binary, "--gtest_filter=PtxSpecialFunctions.EveryRecordedResult"], env=env))
