"""NVIDIA Warp (warp-lang from PyPI) on cuemu, run as a user starts it: `cuemu run -- python`.

Warp writes CUDA C++ for each kernel, compiles it with the NVRTC inside its own library and loads the result through
the driver API; its built-in kernels (sorting, scans, BVH builds) are in its library's fatbinaries, with PTX for
compute_75. Each result is compared with Warp's own CPU device in the same process: bit for bit where both devices
compute exactly (integers, single correctly rounded float operations, data movement), within a stated tolerance where
NVRTC's code and Warp's CPU code (compiled by its own Clang) may round differently (transcendental functions, FMA
contraction, sums in another order).
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

wp = pytest.importorskip("warp")

wp.config.quiet = True
wp.init()

CUDA = "cuda:0" if wp.get_cuda_device_count() > 0 else None
pytestmark = pytest.mark.skipif(CUDA is None, reason="Warp found no CUDA device (run through `cuemu run`)")
RUNTIME = wp._src.context.runtime
TOOLKIT = "%d.%d" % RUNTIME.toolkit_version if RUNTIME.toolkit_version else "?"
# Warp hands a driver older than its toolkit SASS, which cuemu cannot run: every kernel test needs PTX.
needs_ptx = pytest.mark.skipif(
    CUDA is not None and wp.get_device(CUDA).get_cuda_output_format() != "ptx",
    reason=f"Warp compiles SASS for a driver older than its CUDA {TOOLKIT}: run `cuemu run --driver-version {TOOLKIT}`",
)


def both(fn):
    """fn(device) on the CUDA device and on Warp's CPU device."""
    return fn(CUDA), fn("cpu")


@wp.kernel
def integer_and_float_ops(
    i: wp.array(dtype=wp.int32),
    f: wp.array(dtype=wp.float32),
    g: wp.array(dtype=wp.float32),
    out_i: wp.array(dtype=wp.int32),
    out_f: wp.array2d(dtype=wp.float32),
):
    t = wp.tid()
    x = i[t]
    out_i[t] = (x * 7 + (x >> 3)) ^ (x & 0x5555)
    out_f[0, t] = f[t] * g[t]
    out_f[1, t] = f[t] + g[t]
    out_f[2, t] = wp.max(f[t], g[t]) - wp.abs(g[t])
    out_f[3, t] = wp.sqrt(wp.abs(f[t]))
    out_f[4, t] = f[t] / (wp.abs(g[t]) + 1.0)


@wp.kernel
def transcendental(f: wp.array(dtype=wp.float32), out: wp.array2d(dtype=wp.float32)):
    t = wp.tid()
    x = f[t]
    out[0, t] = wp.sin(x)
    out[1, t] = wp.exp(x * 0.5)
    out[2, t] = wp.log(wp.abs(x) + 1.0)
    out[3, t] = wp.atan2(x, 1.5)
    out[4, t] = wp.tanh(x)


def test_the_device_is_cuemus_and_kernels_reach_the_driver_as_ptx():
    device = wp.get_device(CUDA)
    assert device.is_cuda
    assert device.name.startswith("cuemu virtual")
    # cuemu runs PTX: Warp hands the driver its PTX only when the driver is not older than Warp's toolkit.
    assert RUNTIME.driver_version >= RUNTIME.toolkit_version, f"run `cuemu run --driver-version {TOOLKIT}`"
    assert device.get_cuda_output_format() == "ptx"


@needs_ptx
def test_elementwise_integer_and_float_arithmetic_match_the_cpu_bit_for_bit():
    n = 4099
    rng = np.random.default_rng(1)
    i = rng.integers(-(2**30), 2**30, size=n, dtype=np.int32)
    f = rng.standard_normal(n).astype(np.float32)
    g = rng.standard_normal(n).astype(np.float32)

    def run(device):
        out_i = wp.zeros(n, dtype=wp.int32, device=device)
        out_f = wp.zeros((5, n), dtype=wp.float32, device=device)
        args = [wp.array(a, device=device) for a in (i, f, g)]
        wp.launch(integer_and_float_ops, dim=n, inputs=[*args, out_i, out_f], device=device)
        return out_i.numpy(), out_f.numpy()

    (gi, gf), (ci, cf) = both(run)
    np.testing.assert_array_equal(gi, (i * 7 + (i >> 3)) ^ (i & 0x5555))
    np.testing.assert_array_equal(gi, ci)
    np.testing.assert_array_equal(gf, cf)


@needs_ptx
def test_transcendental_functions_match_the_cpu_within_a_few_ulp():
    n = 2048
    f = np.random.default_rng(2).uniform(-6, 6, n).astype(np.float32)

    def run(device):
        out = wp.zeros((5, n), dtype=wp.float32, device=device)
        wp.launch(transcendental, dim=n, inputs=[wp.array(f, device=device), out], device=device)
        return out.numpy()

    gpu, cpu = both(run)
    np.testing.assert_allclose(gpu, cpu, rtol=4e-6, atol=1e-6)


@wp.kernel
def vectors_and_atomics(
    p: wp.array(dtype=wp.vec3),
    m: wp.array(dtype=wp.mat33),
    q: wp.array(dtype=wp.quat),
    out: wp.array(dtype=wp.vec3),
    hist: wp.array(dtype=wp.int32),
    total: wp.array(dtype=wp.float64),
):
    t = wp.tid()
    v = m[t] * p[t]
    out[t] = wp.quat_rotate(q[t], wp.normalize(v)) + wp.cross(p[t], v)
    wp.atomic_add(hist, wp.min(15, int(wp.length(p[t]) * 4.0)), 1)
    wp.atomic_add(total, 0, wp.float64(t))


@needs_ptx
def test_vectors_matrices_quaternions_and_atomics_match_the_cpu():
    n = 3000
    rng = np.random.default_rng(3)
    p = rng.standard_normal((n, 3)).astype(np.float32)
    m = rng.standard_normal((n, 3, 3)).astype(np.float32)
    q = rng.standard_normal((n, 4)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)

    def run(device):
        out = wp.zeros(n, dtype=wp.vec3, device=device)
        hist = wp.zeros(16, dtype=wp.int32, device=device)
        total = wp.zeros(1, dtype=wp.float64, device=device)
        inputs = [
            wp.array(p, dtype=wp.vec3, device=device),
            wp.array(m, dtype=wp.mat33, device=device),
            wp.array(q, dtype=wp.quat, device=device),
        ]
        wp.launch(vectors_and_atomics, dim=n, inputs=[*inputs, out, hist, total], device=device)
        return out.numpy(), hist.numpy(), total.numpy()

    (go, gh, gt), (co, ch, ct) = both(run)
    np.testing.assert_allclose(go, co, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(gh, ch)
    assert gh.sum() == n
    assert gt[0] == ct[0] == n * (n - 1) // 2


@wp.kernel
def energy(x: wp.array(dtype=wp.float32), loss: wp.array(dtype=wp.float32)):
    t = wp.tid()
    v = x[t]
    wp.atomic_add(loss, 0, wp.sin(v) * v * v)


@needs_ptx
def test_tape_gradients_match_the_cpu_and_the_derivative():
    n = 1024
    x0 = np.random.default_rng(4).uniform(-2, 2, n).astype(np.float32)

    def run(device):
        x = wp.array(x0, dtype=wp.float32, device=device, requires_grad=True)
        loss = wp.zeros(1, dtype=wp.float32, device=device, requires_grad=True)
        tape = wp.Tape()
        with tape:
            wp.launch(energy, dim=n, inputs=[x, loss], device=device)
        tape.backward(loss)
        return x.grad.numpy()

    gpu, cpu = both(run)
    np.testing.assert_allclose(gpu, cpu, rtol=1e-6, atol=1e-6)
    x = x0.astype(np.float64)
    np.testing.assert_allclose(gpu, np.cos(x) * x * x + 2 * x * np.sin(x), rtol=1e-5, atol=1e-5)


@wp.kernel
def integrate(x: wp.array(dtype=wp.vec3), v: wp.array(dtype=wp.vec3), dt: float):
    t = wp.tid()
    v[t] = v[t] + wp.vec3(0.0, -9.8, 0.0) * dt - v[t] * 0.01
    x[t] = x[t] + v[t] * dt


@needs_ptx
def test_a_captured_graph_replays_as_the_cpu_runs_the_same_launches():
    n = 500
    x0 = np.random.default_rng(5).standard_normal((n, 3)).astype(np.float32)
    steps = 20

    def run(device, capture):
        x = wp.array(x0, dtype=wp.vec3, device=device)
        v = wp.zeros(n, dtype=wp.vec3, device=device)
        if capture:
            with wp.ScopedCapture(device=device) as capture:
                for _ in range(4):
                    wp.launch(integrate, dim=n, inputs=[x, v, 0.01], device=device)
            for _ in range(steps // 4):
                wp.capture_launch(capture.graph)
        else:
            for _ in range(steps):
                wp.launch(integrate, dim=n, inputs=[x, v, 0.01], device=device)
        return x.numpy()

    graph, direct, cpu = run(CUDA, True), run(CUDA, False), run("cpu", False)
    np.testing.assert_array_equal(graph, direct)
    np.testing.assert_allclose(graph, cpu, rtol=1e-5, atol=1e-5)


@wp.kernel
def cast_rays(
    mesh: wp.uint64,
    origins: wp.array(dtype=wp.vec3),
    hits: wp.array(dtype=wp.float32),
    faces: wp.array(dtype=wp.int32),
    closest: wp.array(dtype=wp.vec3),
):
    t = wp.tid()
    o = origins[t]
    q = wp.mesh_query_ray(mesh, o, wp.vec3(0.0, 0.0, -1.0), 100.0)
    if q.result:
        hits[t] = q.t
        faces[t] = q.face
    else:
        hits[t] = -1.0
        faces[t] = -1
    p = wp.mesh_query_point(mesh, o, 100.0)
    if p.result:
        closest[t] = wp.mesh_eval_position(mesh, p.face, p.u, p.v)


def grid_mesh(k):
    """A height field of k x k quads over [0, 1]^2, two triangles each."""
    u = np.linspace(0, 1, k + 1, dtype=np.float32)
    xs, ys = np.meshgrid(u, u, indexing="ij")
    zs = 0.1 * np.sin(6 * xs) * np.cos(4 * ys)
    points = np.stack([xs, ys, zs], axis=-1).reshape(-1, 3).astype(np.float32)
    idx = np.arange((k + 1) * (k + 1)).reshape(k + 1, k + 1)
    a, b, c, d = idx[:-1, :-1], idx[1:, :-1], idx[1:, 1:], idx[:-1, 1:]
    tris = np.concatenate([np.stack([a, b, c], -1).reshape(-1, 3), np.stack([a, c, d], -1).reshape(-1, 3)])
    return points, tris.astype(np.int32).reshape(-1)


@needs_ptx
def test_mesh_bvh_ray_and_closest_point_queries_match_the_cpu():
    points, indices = grid_mesh(24)
    rng = np.random.default_rng(6)
    n = 1000
    origins = np.concatenate([rng.uniform(0.01, 0.99, (n, 2)), np.full((n, 1), 2.0)], axis=1).astype(np.float32)

    def run(device):
        mesh = wp.Mesh(points=wp.array(points, dtype=wp.vec3, device=device), indices=wp.array(indices, device=device))
        hits = wp.zeros(n, dtype=wp.float32, device=device)
        faces = wp.zeros(n, dtype=wp.int32, device=device)
        closest = wp.zeros(n, dtype=wp.vec3, device=device)
        wp.launch(cast_rays, dim=n, inputs=[mesh.id, wp.array(origins, dtype=wp.vec3, device=device), hits, faces, closest],
                  device=device)
        return hits.numpy(), faces.numpy(), closest.numpy()

    (gh, gf, gc), (ch, cf, cc) = both(run)
    assert (gf >= 0).all()
    np.testing.assert_allclose(gh, ch, rtol=1e-5, atol=1e-5)
    z = 0.1 * np.sin(6 * origins[:, 0]) * np.cos(4 * origins[:, 1])
    np.testing.assert_allclose(2.0 - gh, z, atol=0.02)  # the mesh is a piecewise linear height field
    np.testing.assert_allclose(gc, cc, rtol=1e-5, atol=1e-5)


@needs_ptx
def test_library_kernels_sort_scan_and_reduce_match_the_cpu():
    n = 5000
    rng = np.random.default_rng(7)
    keys = rng.integers(0, 1 << 20, size=n, dtype=np.int32)
    values = np.arange(n, dtype=np.int32)
    ints = rng.integers(-100, 100, size=n, dtype=np.int32)
    floats = rng.standard_normal(n).astype(np.float32)

    def run(device):
        k = wp.array(np.concatenate([keys, keys]), dtype=wp.int32, device=device)
        v = wp.array(np.concatenate([values, values]), dtype=wp.int32, device=device)
        wp.utils.radix_sort_pairs(k, v, n)
        scan = wp.zeros(n, dtype=wp.int32, device=device)
        wp.utils.array_scan(wp.array(ints, device=device), scan, inclusive=True)
        a = wp.array(floats, device=device)
        return k.numpy()[:n], v.numpy()[:n], scan.numpy(), wp.utils.array_sum(a), wp.utils.array_inner(a, a)

    gpu, cpu = both(run)
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(gpu[0], keys[order])
    np.testing.assert_array_equal(gpu[1], order)
    np.testing.assert_array_equal(gpu[2], np.cumsum(ints))
    np.testing.assert_array_equal(gpu[2], cpu[2])
    assert gpu[3] == pytest.approx(cpu[3], rel=1e-5, abs=1e-4)
    assert gpu[4] == pytest.approx(cpu[4], rel=1e-5)


TILE = 16


@wp.kernel
def tile_gemm(a: wp.array2d(dtype=wp.float32), b: wp.array2d(dtype=wp.float32), c: wp.array2d(dtype=wp.float32)):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(TILE, TILE), dtype=wp.float32)
    for k in range(a.shape[1] // TILE):
        ta = wp.tile_load(a, shape=(TILE, TILE), offset=(i * TILE, k * TILE))
        tb = wp.tile_load(b, shape=(TILE, TILE), offset=(k * TILE, j * TILE))
        wp.tile_matmul(ta, tb, acc)
    wp.tile_store(c, acc, offset=(i * TILE, j * TILE))


@needs_ptx
def test_tile_matmul_with_shared_memory_matches_numpy():
    m, k, n = 64, 48, 32
    rng = np.random.default_rng(8)
    a = rng.integers(-4, 5, (m, k)).astype(np.float32)  # exact products and sums
    b = rng.integers(-4, 5, (k, n)).astype(np.float32)

    def run(device):
        c = wp.zeros((m, n), dtype=wp.float32, device=device)
        wp.launch_tiled(tile_gemm, dim=(m // TILE, n // TILE),
                        inputs=[wp.array(a, device=device), wp.array(b, device=device), c], block_dim=64,
                        device=device)
        return c.numpy()

    gpu, cpu = both(run)
    np.testing.assert_array_equal(gpu, a @ b)
    np.testing.assert_array_equal(gpu, cpu)


FAULTING_PROGRAM = textwrap.dedent(
    """
    import sys
    import warp as wp

    wp.config.quiet = True

    @wp.kernel
    def zero_step_slice(a: wp.array2d(dtype=int), step: int, out: wp.array(dtype=int)):
        view = a[0:4:step, 1]  # Warp checks the step: prints "slice step cannot be zero" and traps
        out[0] = view.shape[0]

    a = wp.zeros((4, 3), dtype=int, device=sys.argv[1])
    out = wp.zeros(1, dtype=int, device=sys.argv[1])
    wp.launch(zero_step_slice, dim=1, inputs=[a, 0, out], device=sys.argv[1])
    wp.synchronize_device(sys.argv[1])
    """
)


@needs_ptx
def test_a_kernels_message_before_a_trap_reaches_stdout(tmp_path):
    # A trap poisons the process, as on a GPU: the kernel runs in a child, which inherits `cuemu run`'s environment.
    program = tmp_path / "zero_step.py"
    program.write_text(FAULTING_PROGRAM)
    child = subprocess.run([sys.executable, str(program), CUDA], capture_output=True, text=True, timeout=600,
                           env=os.environ)
    assert "slice step cannot be zero" in child.stdout, child.stdout + child.stderr
    assert child.returncode != 0  # the synchronisation reports the fault


@needs_ptx
def test_warp_fem_diffusion_example_matches_the_cpu():
    """warp.fem's diffusion example (quadratic elements on a grid, Dirichlet sides, conjugate gradients)."""
    fem = pytest.importorskip("warp.fem")
    from warp.examples.fem.example_diffusion import Example, diffusion_form, linear_form

    def run(device):
        with wp.ScopedDevice(device):
            example = Example(quiet=True, degree=2, resolution=8)
            example.step()
            space = example._scalar_space
            domain = fem.Cells(geometry=example._geo)
            test, trial = fem.make_test(space=space, domain=domain), fem.make_trial(space=space, domain=domain)
            matrix = fem.integrate(diffusion_form, fields={"u": trial, "v": test}, values={"nu": wp.float64(2.0)})
            rhs = fem.integrate(linear_form, fields={"v": test})
            x = wp.array(np.linspace(-1, 1, rhs.shape[0], dtype=np.float32), device=device)
            y = wp.zeros_like(rhs)
            wp.sparse.bsr_mv(matrix, x, y)
            return example._scalar_field.dof_values.numpy(), rhs.numpy(), y.numpy()

    (gs, gr, gy), (cs, cr, cy) = both(run)
    np.testing.assert_allclose(gr, cr, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(gy, cy, rtol=1e-4, atol=1e-4)
    # conjugate gradients to a relative residual of 1e-4 on each device (their iteration counts differ)
    np.testing.assert_allclose(gs, cs, atol=2e-3 * np.abs(cs).max())
