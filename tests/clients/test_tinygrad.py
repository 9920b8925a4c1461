"""tinygrad (tinygrad from PyPI) on cuemu, run as a user starts it: `cuemu run -- python`.

tinygrad's CUDA device talks to libcuda.so through ctypes and loads PTX: its default renderer writes CUDA C++ that
cuemu's NVRTC compiles to PTX (tinygrad asks nvrtcGetPTX for a device named CUDA), and its PTX renderer
(`DEV=CUDA:PTX`) writes the PTX itself. Each test runs on both renderers; results are compared with numpy,
exactly where the arithmetic is exact.
"""

import os

import numpy as np
import pytest

os.environ.setdefault("CACHELEVEL", "0")  # compile every kernel (tinygrad otherwise reuses PTX from earlier runs)
tinygrad = pytest.importorskip("tinygrad")
from tinygrad import Context, Device, Tensor, TinyJit, dtypes  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def cuda():
    try:
        Device["CUDA"]
    except Exception as e:  # no libcuda.so on the loader path: not under `cuemu run`
        pytest.skip(f"tinygrad has no CUDA device (run through `cuemu run`): {e}")


@pytest.fixture(params=["CUDA", "CUDA:PTX"])
def dev(request):
    with Context(DEV=request.param):
        assert Device.DEFAULT == "CUDA"
        yield "CUDA"


def test_renderers_are_the_ones_asked_for():
    with Context(DEV="CUDA:PTX"):
        assert type(Device["CUDA"].renderer).__name__ == "PTXRenderer"
    with Context(DEV="CUDA"):
        assert type(Device["CUDA"].renderer).__name__ == "CUDARenderer"


def test_elementwise_integer_and_float(dev):
    rng = np.random.default_rng(3)
    a = rng.integers(-5000, 5000, 1031).astype(np.int32)
    b = rng.integers(1, 97, 1031).astype(np.int32)
    ta, tb = Tensor(a), Tensor(b)
    np.testing.assert_array_equal(((ta * tb) ^ (ta >> 2)).numpy(), (a * b) ^ (a >> 2))
    np.testing.assert_array_equal((ta < tb).where(ta, tb * 3).numpy(), np.where(a < b, a, b * 3))
    np.testing.assert_array_equal((ta.abs() // tb).numpy(), np.abs(a) // b)
    x = rng.standard_normal(1031).astype(np.float32)
    y = rng.standard_normal(1031).astype(np.float32)
    np.testing.assert_array_equal((Tensor(x) * Tensor(y)).numpy(), x * y)
    # tinygrad divides by multiplying with the reciprocal: 1/y in C++ (correctly rounded), or rcp.approx.f32 from
    # its PTX renderer (cuemu computes it as an H100 does, within an ulp of 1/y)
    q = (Tensor(x) / Tensor(y)).numpy()
    if type(Device["CUDA"].renderer).__name__ == "PTXRenderer":
        np.testing.assert_allclose(q, x * (np.float32(1) / y), rtol=3e-7, atol=0)
    else:
        np.testing.assert_array_equal(q, x * (np.float32(1) / y))
    # a multiply and an add in one kernel: NVRTC contracts them into one fma, as for a GPU
    fma = (x.astype(np.float64) * y + x).astype(np.float32)
    np.testing.assert_array_equal((Tensor(x) * Tensor(y) + Tensor(x)).numpy(), fma)
    np.testing.assert_array_equal(Tensor(x).maximum(Tensor(y)).numpy(), np.maximum(x, y))
    h = (Tensor(x).cast(dtypes.half) * Tensor(y).cast(dtypes.half)).numpy()
    np.testing.assert_array_equal(h, x.astype(np.float16) * y.astype(np.float16))


def test_matmul_and_reductions(dev):
    rng = np.random.default_rng(4)
    # small integers: every product and sum is exact in float32, whatever the order
    a = rng.integers(-8, 8, (67, 45)).astype(np.float32)
    b = rng.integers(-8, 8, (45, 33)).astype(np.float32)
    np.testing.assert_array_equal((Tensor(a) @ Tensor(b)).numpy(), a @ b)
    i = rng.integers(-1000, 1000, (37, 129)).astype(np.int32)
    ti = Tensor(i)
    np.testing.assert_array_equal(ti.sum(axis=1).numpy(), i.sum(axis=1))
    assert ti.sum().item() == int(i.sum())
    np.testing.assert_array_equal(ti.max(axis=0).numpy(), i.max(axis=0))
    np.testing.assert_array_equal(ti.argmax(axis=1).numpy(), i.argmax(axis=1))
    np.testing.assert_array_equal(ti.cumsum(axis=1).numpy(), i.cumsum(axis=1))


def test_conv_and_softmax(dev):
    rng = np.random.default_rng(5)
    img = rng.integers(-4, 4, (2, 3, 12, 12)).astype(np.float32)
    w = rng.integers(-4, 4, (5, 3, 3, 3)).astype(np.float32)
    out = Tensor(img).conv2d(Tensor(w), padding=1).numpy()
    pad = np.pad(img, ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.zeros((2, 5, 12, 12), np.float32)
    for y in range(12):
        for x in range(12):
            ref[:, :, y, x] = np.einsum("nchw,ochw->no", pad[:, :, y : y + 3, x : x + 3], w)
    np.testing.assert_array_equal(out, ref)
    s = rng.standard_normal((16, 50)).astype(np.float32)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    np.testing.assert_allclose(Tensor(s).softmax(axis=1).numpy(), e / e.sum(axis=1, keepdims=True), rtol=2e-6, atol=1e-7)


def test_training_steps_follow_numpy(dev):
    rng = np.random.default_rng(6)
    X = rng.standard_normal((32, 8)).astype(np.float32)
    Y = (X @ rng.standard_normal((8, 1)) + 0.5).astype(np.float32)
    w0 = rng.standard_normal((8, 1)).astype(np.float32)
    w = Tensor(w0)
    tx, ty = Tensor(X), Tensor(Y)
    ref, losses = w0.astype(np.float64), []
    for _ in range(4):
        loss = ((tx @ w - ty) ** 2).mean()
        (grad,) = loss.gradient(w)
        losses.append(loss.item())
        w = (w - 0.1 * grad).realize()
        ref = ref - 0.1 * (2 * X.T @ (X @ ref - Y) / len(X))
    assert losses[-1] < losses[0]
    np.testing.assert_allclose(w.numpy(), ref, rtol=1e-5, atol=1e-5)


def test_jit_replays_through_cuda_graphs(dev):
    # TinyJit captures the kernels of the first calls and replays them as a CUDA graph (cuGraph* API)
    @TinyJit
    def step(a, b):
        return ((a + b) * 2).sum(axis=0).realize()

    for k in range(5):
        a = np.arange(24 * 7, dtype=np.int32).reshape(24, 7) + k
        b = np.full((24, 7), 3 * k, np.int32)
        np.testing.assert_array_equal(step(Tensor(a), Tensor(b)).numpy(), ((a + b) * 2).sum(axis=0))


def test_fp8_conversions_saturate(dev):
    # float -> e5m2 saturates to the largest finite value (57344, 0x7b), as on an H200: tinygrad's own
    # test_fp8e5m2 sees 0 + inf come back as 57344 there (driver 580, tinygrad 0.13.0)
    vals = [float("inf"), 1e6, -1e6, 57344.0, 1.5, -0.25]
    bits = Tensor(vals).cast(dtypes.fp8e5m2).bitcast(dtypes.uint8).tolist()
    assert bits == [0x7B, 0x7B, 0xFB, 0x7B, 0x3E, 0xB4]
