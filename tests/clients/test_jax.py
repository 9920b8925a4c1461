"""JAX (jax[cuda13-local]) on cuemu, run as a user starts it: `cuemu run --device-profile gb10 -- python`.

XLA compiles every computation to PTX (assembled by cuemu-ptxas, the ptxas of the CUDA root `cuemu run` gives JAX),
launches it through the driver, calls cuBLAS for matrix products and cuDNN for convolutions, and uses its own
compiled-in kernels. Those carry PTX for compute_120 only and cuDNN's precompiled engines for compute_121 only: the
gb10 profile (compute capability 12.1) runs both. Each result is compared with JAX's CPU backend in the
same process: bit for bit where both backends compute exactly (integers, random bits, sorting, data movement, float
additions in the same order), within a stated tolerance where XLA's GPU and CPU code generators may differ
(transcendental functions from libdevice against XLA's CPU polynomials, reductions in another order).
"""

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

GPU = jax.devices("cuda")[0] if any(d.platform == "gpu" for d in jax.devices()) else None
CPU = jax.devices("cpu")[0]

pytestmark = pytest.mark.skipif(GPU is None, reason="JAX found no CUDA device (run through `cuemu run`)")


def on(device, fn, *args):
    """fn compiled for the device that holds its arguments; the results as numpy arrays."""
    placed = [jax.device_put(a, device) for a in args]
    return jax.tree.map(np.asarray, jax.jit(fn)(*placed))


def both(fn, *args):
    return on(GPU, fn, *args), on(CPU, fn, *args)


def test_the_device_is_cuemus_through_the_driver_and_nvml():
    assert GPU.platform == "gpu"
    assert GPU.device_kind.startswith("cuemu virtual")
    stats = GPU.memory_stats()
    assert stats["bytes_limit"] > 0
    x = jax.device_put(np.arange(1 << 20, dtype=np.float32), GPU)
    assert x.devices() == {GPU}
    assert GPU.memory_stats()["bytes_in_use"] >= x.nbytes


def test_elementwise_integer_and_exact_float_arithmetic_match_the_cpu_bit_for_bit():
    rng = np.random.default_rng(1)
    i = rng.integers(-(2**30), 2**30, size=4099, dtype=np.int32)
    f = rng.standard_normal(4099).astype(np.float32)
    g = rng.standard_normal(4099).astype(np.float32)

    # Each float result is one correctly rounded operation (XLA's GPU code contracts a * b + c into an FMA, as the
    # GPU's compiler may, and its CPU code does not: that pair is compared within a rounding below).
    def fn(i, f, g):
        return (i * 7 + (i >> 3)) ^ (i & 0x5555), f * g, f + g, jnp.maximum(f, g) - jnp.abs(g), jnp.sqrt(jnp.abs(f))

    for gpu, cpu in zip(*both(fn, i, f, g)):
        np.testing.assert_array_equal(gpu, cpu)
    gpu, cpu = both(lambda f, g: (f * g + f, f / (jnp.abs(g) + 1)), f, g)
    for a, b in zip(gpu, cpu):
        np.testing.assert_allclose(a, b, rtol=2.5e-7, atol=5e-7)


def test_transcendental_functions_within_a_few_ulp_of_the_cpu():
    x = np.linspace(-8, 8, 10007, dtype=np.float32)
    fn = lambda x: (jnp.exp(x * 0.5), jnp.tanh(x), jnp.log1p(jnp.abs(x)), jnp.sin(x), jax.nn.sigmoid(x))  # noqa: E731
    gpu, cpu = both(fn, x)
    for a, b in zip(gpu, cpu):
        np.testing.assert_allclose(a, b, rtol=4e-6, atol=1e-6)


def test_reductions_and_scans():
    rng = np.random.default_rng(2)
    i = rng.integers(-1000, 1000, size=(37, 1001), dtype=np.int32)
    f = rng.random((37, 1001), dtype=np.float32)
    (isum, imax, icum), (csum, cmax, ccum) = both(lambda a: (a.sum(1), a.max(0), jnp.cumsum(a, 1)), i)
    np.testing.assert_array_equal(isum, csum)
    np.testing.assert_array_equal(imax, cmax)
    np.testing.assert_array_equal(icum, ccum)
    gpu, cpu = both(lambda a: (a.sum(), a.mean(0), jnp.cumsum(a.ravel())), f)
    for a, b in zip(gpu, cpu):
        np.testing.assert_allclose(a, b, rtol=2e-5)
    np.testing.assert_allclose(gpu[0], f.astype(np.float64).sum(), rtol=1e-5)


def test_sm100_instructions_of_xlas_kernels_match_the_cpu():
    # XLA's kernels for compute capability 12 use sm_100 forms: three-input min.f32 in reductions (cuemu took two
    # sources, so jnp.any missed two of every four elements of a v4 load) and mixed-precision add.f32.f16 in f16/bf16
    # arithmetic (cuemu-ptxas refused it).
    hits = np.ones((8, 300), np.float32)
    hits[np.arange(8), [2, 3, 6, 7, 150, 151, 298, 299]] = -1.0
    gpu, cpu = both(lambda v: (jnp.any(v <= 0, axis=1), jnp.min(v, axis=1)), hits)
    np.testing.assert_array_equal(gpu[0], np.ones(8, bool))
    for a, b in zip(gpu, cpu):
        np.testing.assert_array_equal(a, b)
    h = np.linspace(-3, 3, 77).astype(np.float16)
    gpu, cpu = both(lambda h: (lax.expm1(h), lax.round(h.astype(jnp.bfloat16)), h * 3 + 1), h)
    for a, b in zip(gpu, cpu):
        np.testing.assert_allclose(a.astype(np.float32), b.astype(np.float32), rtol=1e-3, atol=1e-3)


def test_matrix_products_through_cublas_or_xlas_own_kernels():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((96, 80)).astype(np.float32)
    b = rng.standard_normal((80, 72)).astype(np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    with jax.default_matmul_precision("highest"):
        gpu = on(GPU, lambda a, b: a @ b, a, b)
    np.testing.assert_allclose(gpu, exact, rtol=1e-4, atol=1e-4)
    square = np.stack([a[:80, :80], a[16:96, :80]])
    with jax.default_matmul_precision("highest"):
        batched = on(GPU, lambda s: jnp.einsum("bij,bjk->bik", s, s), square)
    for k in range(2):
        np.testing.assert_allclose(batched[k], square[k].astype(np.float64) @ square[k], rtol=1e-4, atol=1e-4)


def test_random_bits_and_distributions_are_the_cpus():
    key = jax.random.key(42)
    for fn in (
        lambda k: jax.random.bits(k, (1000,), jnp.uint32),
        lambda k: jax.random.randint(k, (999,), -50, 50),
        lambda k: jax.random.permutation(k, 257),
    ):
        gpu, cpu = both(fn, key)
        np.testing.assert_array_equal(gpu, cpu)
    gpu, cpu = both(lambda k: jax.random.normal(k, (5000,)), key)
    np.testing.assert_allclose(gpu, cpu, rtol=1e-5, atol=1e-6)


def test_sorting_is_exact():
    rng = np.random.default_rng(4)
    f = rng.standard_normal(3001).astype(np.float32)
    i = rng.integers(0, 100, size=3001, dtype=np.int32)
    gpu, cpu = both(lambda f, i: (jnp.sort(f), jnp.argsort(i, stable=True), lax.top_k(f, 7)[1]), f, i)
    for a, b in zip(gpu, cpu):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(gpu[0], np.sort(f))


def test_control_flow_loops_and_conditionals():
    def collatz_steps(n):
        def body(state):
            n, steps = state
            return jnp.where(n % 2 == 0, n // 2, 3 * n + 1), steps + 1

        return lax.while_loop(lambda s: s[0] != 1, body, (n, 0))[1]

    def fn(x):
        y = lax.fori_loop(0, 10, lambda k, acc: acc * 2 + k, x)
        return y, lax.cond(x.sum() > 0, lambda: x + 1, lambda: x - 1), collatz_steps(jnp.int32(27))

    gpu, cpu = both(fn, np.arange(16, dtype=np.int32))
    for a, b in zip(gpu, cpu):
        np.testing.assert_array_equal(a, b)
    assert int(gpu[2]) == 111

    # lax.scan: XLA's command buffer moves a child graph into its parent and updates the copy node inside it
    # between iterations (cuGraphExecMemcpyNodeSetParams through the moved child's node handle).
    def running_sums(carry, xs):
        return lax.scan(lambda c, x: (c + x, c * 2), carry, xs)

    gpu, cpu = both(running_sums, np.zeros(8, np.int32), np.arange(400, dtype=np.int32).reshape(50, 8))
    for a, b in zip(gpu, cpu):
        np.testing.assert_array_equal(a, b)


def test_gradients_and_vmap():
    rng = np.random.default_rng(5)
    w = rng.standard_normal((16, 8)).astype(np.float32)
    x = rng.standard_normal((32, 16)).astype(np.float32)

    def loss(w, x):
        return jnp.mean(jnp.tanh(x @ w) ** 2)

    # In full float precision: by default JAX multiplies float32 matrices on a GPU in TF32, as it should here too.
    with jax.default_matmul_precision("highest"):
        gpu, cpu = both(jax.grad(loss), w, x)
    np.testing.assert_allclose(gpu, cpu, rtol=1e-4, atol=1e-6)
    gpu, cpu = both(jax.vmap(lambda row: jnp.dot(row, row)), x)
    np.testing.assert_allclose(gpu, cpu, rtol=1e-5)


def test_transfers_keep_every_byte():
    data = np.random.default_rng(6).integers(0, 2**32, size=(1 << 18) + 3, dtype=np.uint32)
    x = jax.device_put(data, GPU)
    np.testing.assert_array_equal(np.asarray(x), data)
    np.testing.assert_array_equal(np.asarray(x[::-1][5:9]), data[::-1][5:9])


def test_convolutions_through_cudnn():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 16, 16)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)

    def conv(x, w):
        return lax.conv_general_dilated(x, w, (1, 1), "SAME"), lax.conv_general_dilated(x, w, (2, 2), "VALID")

    try:
        with jax.default_matmul_precision("highest"):
            gpu, cpu = both(conv, x, w)
    except Exception as e:  # noqa: BLE001
        if "cudnn" in str(e).lower() and ("not found" in str(e).lower() or "load" in str(e).lower()):
            pytest.skip(f"no cuDNN: {e}")
        raise
    for a, b in zip(gpu, cpu):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
