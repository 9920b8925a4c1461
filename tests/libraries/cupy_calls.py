"""CuPy's CUB-backed reductions, scans and sort, its cuBLAS matmul and cuSOLVER solve, with fixed inputs, recorded on
a GPU and checked on cuemu.

    python3 cupy_calls.py record FILE        run every case, write FILE (recorded/nvidia-h100-cupy.txt)
    python3 cupy_calls.py check FILE CASE    run one case, compare with FILE's record; exit 0 and print "PASS CASE"
    python3 cupy_calls.py exact CASE         run one case of EXACT, compare with its exact value computed on the host

Same record format as library_calls.cpp. Run with CUPY_ACCELERATORS=cub so that sum and cumsum go through CUB's
device-wide kernels (sort always does: CuPy's sort is Thrust/CUB radix sort). The float inputs are multiples of
1/8 in [-1, 1]: every partial sum of the 10000 elements is a multiple of 1/8 below 2^14, exact in f32 whatever
order CUB's blocks add in, so results must match the GPU bit for bit. The matmul inputs are multiples of 1/4 in
[-1, 1] (every sum of products is exact in f16, f32 and f64 whatever the kernel's order), and linalg.solve's
matrix is L U with exact factors (see library_calls.cpp, getrfGetrsCase), so those results are bit-exact too.
Exit 77 (skip) when CuPy is missing.
"""
import sys

try:
    import cupy
    import numpy
except ImportError as error:  # the CTest test is skipped, with this message
    print(f"SKIP: CuPy is not installed ({error})")
    sys.exit(77)

N = 10000


def inputs():
    state = 12345
    floats, ints = [], []
    for _ in range(N):
        state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        r = state >> 33
        floats.append(float(int(r % 17) - 8) / 8.0)
        ints.append(int(r % 2001) - 1000)
    return numpy.array(floats, dtype=numpy.float32), numpy.array(ints, dtype=numpy.int32)


def quarters(shape, seed):
    state = seed
    values = []
    for _ in range(int(numpy.prod(shape))):
        state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
        values.append(float(int((state >> 33) % 9) - 4) / 4.0)
    return numpy.array(values).reshape(shape)


def lu_system(n, nrhs, seed):
    """A = L U (unit lower L with entries of at most 1/2, upper U with power-of-two diagonal) and b = A x."""
    rng = numpy.random.RandomState(seed)
    lower = numpy.tril(rng.randint(-2, 3, (n, n)) / 4.0, -1) + numpy.eye(n)
    upper = numpy.triu(rng.randint(-4, 5, (n, n)) / 4.0, 1) + numpy.diag(
        rng.choice([-1.0, 2.0], n) * 2.0 ** rng.randint(0, 3, n))
    a = lower @ upper
    x = rng.randint(-4, 5, (n, nrhs)) / 4.0
    return a, a @ x


def words(array):
    array = numpy.ascontiguousarray(array)
    if array.dtype == numpy.float16:
        array = array.astype(numpy.float32)  # exact
    kind = {numpy.dtype(numpy.int32): "i32", numpy.dtype(numpy.float64): "f64"}.get(array.dtype, "f32")
    return kind, list(array.view(numpy.uint32).reshape(-1))


def cases():
    f, i = inputs()
    return {
        "cupy.sum.f32": lambda: cupy.asnumpy(cupy.sum(cupy.asarray(f))).reshape(1),
        "cupy.sum.i32": lambda: cupy.asnumpy(cupy.sum(cupy.asarray(i), dtype=cupy.int32)).reshape(1),
        "cupy.cumsum.f32": lambda: cupy.asnumpy(cupy.cumsum(cupy.asarray(f))),
        "cupy.cumsum.i32": lambda: cupy.asnumpy(cupy.cumsum(cupy.asarray(i), dtype=cupy.int32)),
        "cupy.sort.f32": lambda: cupy.asnumpy(cupy.sort(cupy.asarray(f))),
        "cupy.sort.i32": lambda: cupy.asnumpy(cupy.sort(cupy.asarray(i))),
        "cupy.argsort.i32": lambda: cupy.asnumpy(cupy.argsort(cupy.asarray(i), kind="stable")).astype(numpy.int32),
        "cupy.matmul.f32": lambda: matmul(numpy.float32),
        "cupy.matmul.f64": lambda: matmul(numpy.float64),
        "cupy.matmul.f16": lambda: matmul(numpy.float16),
        "cupy.linalg.solve.f32": lambda: solve(numpy.float32),
        "cupy.linalg.solve.f64": lambda: solve(numpy.float64),
    }


def matmul(dtype, k=40):
    a, b = quarters((64, k), 11).astype(dtype), quarters((k, 48), 12).astype(dtype)
    return cupy.asnumpy(cupy.asarray(a) @ cupy.asarray(b))


# Cases whose exact result the host computes (in f64, exactly: multiples of 1/16 below 2^9), not yet recorded on a
# GPU: any correct device gives these bits. A long inner dimension makes cuBLAS choose a split-K kernel that uses
# its per-stream workspace, for which it asks the driver for export-table slots 51 and 39 (README).
EXACT = {
    "cupy.matmul.f32.k300": (lambda: matmul(numpy.float32, 300),
                             lambda: (quarters((64, 300), 11) @ quarters((300, 48), 12)).astype(numpy.float32)),
    "cupy.matmul.f64.k300": (lambda: matmul(numpy.float64, 300),
                             lambda: quarters((64, 300), 11) @ quarters((300, 48), 12)),
}


def check_exact(name):
    run, exact = EXACT[name]
    try:
        got = words(run())
    except Exception as error:
        print(f"FAIL {name}: {type(error).__name__}: {error}")
        return 1
    want = words(exact())
    if got != want:
        print(f"FAIL {name}: differs from the exact product")
        return 1
    print(f"PASS {name}: {len(got[1])} words, the exact product")
    return 0


def solve(dtype):
    a, b = lu_system(40, 3, 13)
    return cupy.asnumpy(cupy.linalg.solve(cupy.asarray(a.astype(dtype)), cupy.asarray(b.astype(dtype))))


def record(path):
    with open(path, "w") as out:
        props = cupy.cuda.runtime.getDeviceProperties(0)
        out.write(f"# CuPy {cupy.__version__} through tests/libraries/cupy_calls.py, on {props['name'].decode()} "
                  f"(compute capability {props['major']}.{props['minor']})\n")
        for name, run in cases().items():
            try:
                kind, values = words(run())
            except Exception as error:  # recorded: the GPU refused
                out.write(f"error {name} {type(error).__name__}: {error}\n".replace("\n", " ").rstrip() + "\n")
                print(f"error {name}: {error}")
                continue
            out.write(f"case {name} {kind} {len(values)}\n")
            for start in range(0, len(values), 8):
                out.write(" ".join(f"{v:08x}" for v in values[start:start + 8]) + "\n")
            print(f"recorded {name}")


def read_record(path, name):
    with open(path) as f:
        lines = f.read().split("\n")
    for index, line in enumerate(lines):
        fields = line.split()
        if len(fields) >= 2 and fields[1] == name:
            if fields[0] == "error":
                return None, " ".join(fields[2:])
            count = int(fields[3])
            values = []
            for more in lines[index + 1:]:
                if len(values) >= count:
                    break
                values.extend(int(w, 16) for w in more.split())
            return (fields[2], values), None
    return None, "no record of this case"


def check(path, name):
    want, error = read_record(path, name)
    if want is None:
        print(f"FAIL {name}: {path}: {error}")
        return 1
    try:
        kind, got = words(cases()[name]())
    except Exception as error:
        print(f"FAIL {name}: {type(error).__name__}: {error}")
        return 1
    if (kind, got) != want:
        bad = [k for k in range(min(len(got), len(want[1]))) if got[k] != want[1][k]]
        print(f"FAIL {name}: {len(bad)} of {len(got)} values differ from the GPU's (first at {bad[:1]})")
        return 1
    print(f"PASS {name}: {len(got)} values, bit-exact")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "record":
        record(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    elif len(sys.argv) == 3 and sys.argv[1] == "exact":
        sys.exit(check_exact(sys.argv[2]))
    elif len(sys.argv) == 2 and sys.argv[1] == "list":
        print("\n".join(cases()))
    else:
        print(__doc__)
        sys.exit(2)
