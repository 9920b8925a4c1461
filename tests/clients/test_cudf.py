"""RAPIDS cuDF (cudf-cu13) on cuemu, run as a user starts it: `cuemu run --device-profile gb10 -- python`.

libcudf carries PTX for compute_120 in 463 of its 466 fatbinaries (`cuemu inspect`), which the compute-capability-12
profiles run. Each result is compared with pandas.
"""

import numpy as np
import pytest

cudf = pytest.importorskip("cudf")
pd = pytest.importorskip("pandas")


def frame(n=5000, seed=1):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "k": rng.integers(0, 37, n),
            "v": rng.standard_normal(n),
            "i": rng.integers(-1000, 1000, n),
            "s": rng.choice(["red", "green", "blue", "cyan"], n),
        }
    )


def test_groupby_aggregations_match_pandas():
    p = frame()
    g = cudf.from_pandas(p)
    got = g.groupby("k").agg({"v": "sum", "i": ["min", "max", "count"]}).sort_index().to_pandas()
    want = p.groupby("k").agg({"v": "sum", "i": ["min", "max", "count"]}).sort_index()
    np.testing.assert_allclose(got[("v", "sum")].values, want[("v", "sum")].values, rtol=1e-12)
    for col in ("min", "max", "count"):
        np.testing.assert_array_equal(got[("i", col)].values, want[("i", col)].values)


def test_sort_merge_and_filter_match_pandas():
    p = frame(3000, 2)
    g = cudf.from_pandas(p)
    np.testing.assert_array_equal(
        g.sort_values(["k", "i"], kind="stable")["i"].to_pandas().values,
        p.sort_values(["k", "i"], kind="stable")["i"].values,
    )
    q = pd.DataFrame({"k": np.arange(37), "w": np.arange(37) * 10})
    merged = g.merge(cudf.from_pandas(q), on="k").sort_values(["k", "i", "v"]).to_pandas().reset_index(drop=True)
    expect = p.merge(q, on="k").sort_values(["k", "i", "v"]).reset_index(drop=True)
    np.testing.assert_array_equal(merged["w"].values, expect["w"].values)
    assert len(g[g.v > 1.0]) == len(p[p.v > 1.0])


def test_strings_and_reductions():
    p = frame(2000, 3)
    g = cudf.from_pandas(p)
    np.testing.assert_array_equal(g.s.str.len().to_pandas().values, p.s.str.len().values)
    np.testing.assert_array_equal(g.s.str.upper().to_pandas().values, p.s.str.upper().values)
    assert g.s.value_counts().sort_index().to_pandas().to_dict() == p.s.value_counts().sort_index().to_dict()
    assert int(g.i.sum()) == int(p.i.sum())
    np.testing.assert_allclose(float(g.v.std()), float(p.v.std()), rtol=1e-12)
