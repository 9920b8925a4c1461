"""pytest option ``--cuemu`` (or CUEMU_PYTEST=1): the test session runs on cuemu.

The plugin loads cuemu's driver into the pytest process before tests import cuda-python, numba-cuda or CuPy, so
their ``dlopen("libcuda.so.1")`` gets cuemu. Worker processes (pytest-xdist) inherit the option. Without the wheel
(cuemu built from source), run ``cuemu run -- python -m pytest ...`` instead, or call ``cuemu.preload()`` at the top
of a conftest.py.
"""
import os


def pytest_addoption(parser):
    parser.addoption("--cuemu", action="store_true", default=False,
                     help="run CUDA code of this session on cuemu (a CUDA driver on the CPU)")


def pytest_configure(config):
    if config.getoption("--cuemu") or os.environ.get("CUEMU_PYTEST") == "1":
        from . import preload, version
        preload()
        os.environ["CUEMU_PYTEST"] = "1"  # xdist workers and subprocesses started by tests
        config._cuemu_version = version()


def pytest_report_header(config):
    v = getattr(config, "_cuemu_version", None)
    return f"cuemu {v[0]}.{v[1]}.{v[2]}: CUDA runs on the CPU" if v else None
