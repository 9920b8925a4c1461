"""cuemu's NVML (libnvidia-ml.so.1) through NVIDIA's own Python binding, nvidia-ml-py (`import pynvml`).

pynvml declares NVML's structures for ctypes as NVIDIA's nvml.h does, so these tests also check the layouts cuemu's
library fills. Every answer is compared with what cuemu's driver says through the driver API (cuda-python), the
one source of both.
"""

import ctypes
import os
import subprocess
import sys

import pytest

N = pytest.importorskip("pynvml")
from cuda.bindings import driver as cu  # noqa: E402


def check(result):
    err, *values = result if isinstance(result, tuple) else (result,)
    assert err == cu.CUresult.CUDA_SUCCESS, err
    return values[0] if len(values) == 1 else values


@pytest.fixture(scope="module", autouse=True)
def nvml():
    check(cu.cuInit(0))
    N.nvmlInit()
    yield
    N.nvmlShutdown()


def devices():
    return [N.nvmlDeviceGetHandleByIndex(i) for i in range(N.nvmlDeviceGetCount())]


def test_versions_are_driver_580s():
    assert N.nvmlSystemGetDriverVersion() == "580.159.04"
    assert N.nvmlSystemGetCudaDriverVersion() == check(cu.cuDriverGetVersion()) == 13000
    assert N.nvmlSystemGetCudaDriverVersion_v2() == 13000
    assert N.nvmlSystemGetNVMLVersion().startswith("13.580")


def test_each_device_is_the_drivers():
    assert N.nvmlDeviceGetCount() == check(cu.cuDeviceGetCount()) >= 1
    for ordinal, h in enumerate(devices()):
        dev = check(cu.cuDeviceGet(ordinal))
        assert N.nvmlDeviceGetIndex(h) == ordinal
        assert N.nvmlDeviceGetName(h) == check(cu.cuDeviceGetName(256, dev)).split(b"\0")[0].decode()
        raw = bytes(check(cu.cuDeviceGetUuid(dev)).bytes)
        hexed = raw.hex()
        want = f"GPU-{hexed[:8]}-{hexed[8:12]}-{hexed[12:16]}-{hexed[16:20]}-{hexed[20:]}"
        assert N.nvmlDeviceGetUUID(h) == want
        bus = check(cu.cuDeviceGetPCIBusId(64, dev)).split(b"\0")[0].decode()  # dddd:bb:dd.f
        pci = N.nvmlDeviceGetPciInfo(h)
        assert pci.busIdLegacy.upper() == bus.upper()
        assert pci.busId == "0000" + bus.upper()
        attr = cu.CUdevice_attribute
        assert pci.bus == check(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, dev))
        assert pci.pciDeviceId == check(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID, dev)) & 0xFFFFFFFF
        assert pci.pciDeviceId & 0xFFFF == 0x10DE
        major = check(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev))
        minor = check(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev))
        assert N.nvmlDeviceGetCudaComputeCapability(h) == (major, minor)
        sms = check(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev))
        assert N.nvmlDeviceGetNumGpuCores(h) == 128 * sms
        clock = check(cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev))
        assert N.nvmlDeviceGetClockInfo(h, N.NVML_CLOCK_SM) == clock // 1000
        assert N.nvmlDeviceGetMemoryInfo(h).total == check(cu.cuDeviceTotalMem(dev))
        # found again by its bus id (either form, any case) and by its UUID
        for text in (pci.busId, pci.busIdLegacy, pci.busIdLegacy.lower()):
            assert N.nvmlDeviceGetIndex(N.nvmlDeviceGetHandleByPciBusId(text)) == ordinal
        assert N.nvmlDeviceGetIndex(N.nvmlDeviceGetHandleByUUID(want)) == ordinal


def test_the_h100_profile_reads_as_a_hopper_on_a_gen5_x16_link():
    h = devices()[0]
    if N.nvmlDeviceGetCudaComputeCapability(h) != (9, 0):
        pytest.skip("not the default profile")
    assert N.nvmlDeviceGetArchitecture(h) == N.NVML_DEVICE_ARCH_HOPPER
    assert N.nvmlDeviceGetBrand(h) == N.NVML_BRAND_NVIDIA
    assert (N.nvmlDeviceGetCurrPcieLinkGeneration(h), N.nvmlDeviceGetCurrPcieLinkWidth(h)) == (5, 16)
    assert N.nvmlDeviceGetMaxPcieLinkGeneration(h) == 5
    assert N.nvmlDeviceGetPcieSpeed(h) == 32000
    assert N.nvmlDeviceGetMigMode(h) == [0, 0]
    assert N.nvmlDeviceGetComputeMode(h) == N.NVML_COMPUTEMODE_DEFAULT


def test_memory_in_use_and_the_process_follow_this_processs_allocations():
    h = devices()[0]
    dev = check(cu.cuDeviceGet(0))
    before = N.nvmlDeviceGetMemoryInfo(h)
    assert before.total == before.free + before.used
    ctx = check(cu.cuDevicePrimaryCtxRetain(dev))
    check(cu.cuCtxSetCurrent(ctx))
    size = 64 << 20
    ptr = check(cu.cuMemAlloc(size))
    try:
        during = N.nvmlDeviceGetMemoryInfo(h)
        assert during.used == before.used + size
        assert during.free == before.free - size
        v2 = N.nvmlDeviceGetMemoryInfo(h, version=N.nvmlMemory_v2)
        assert (v2.total, v2.used, v2.reserved) == (during.total, during.used, 0)
        procs = N.nvmlDeviceGetComputeRunningProcesses(h)
        assert [p.pid for p in procs] == [os.getpid()]
        assert procs[0].usedGpuMemory >= size
        assert N.nvmlDeviceGetGraphicsRunningProcesses(h) == []
        assert os.path.basename(sys.executable) in N.nvmlSystemGetProcessName(os.getpid())
    finally:
        check(cu.cuMemFree(ptr))
        check(cu.cuDevicePrimaryCtxRelease(dev))
    assert N.nvmlDeviceGetMemoryInfo(h).used == before.used


def test_what_cuemu_does_not_model_is_not_supported_and_bad_arguments_are_errors():
    h = devices()[0]
    for query in (
        lambda: N.nvmlDeviceGetTemperature(h, N.NVML_TEMPERATURE_GPU),
        lambda: N.nvmlDeviceGetPowerUsage(h),
        lambda: N.nvmlDeviceGetFanSpeed(h),
        lambda: N.nvmlDeviceGetNvLinkState(h, 0),
    ):
        with pytest.raises(N.NVMLError_NotSupported):
            query()
    with pytest.raises(N.NVMLError_NotFound):
        N.nvmlDeviceGetHandleByUUID("GPU-00000000-0000-0000-0000-000000000000")
    with pytest.raises(N.NVMLError_NotFound):  # NVIDIA's NVML compares UUIDs exactly (tools/gpu-probe/results)
        N.nvmlDeviceGetHandleByUUID(N.nvmlDeviceGetUUID(h).upper())
    # A device and itself: not peers, no common ancestor (as NVIDIA's NVML answers)
    assert N.nvmlDeviceGetP2PStatus(h, h, 0) == N.NVML_P2P_STATUS_NOT_SUPPORTED
    with pytest.raises(N.NVMLError_NotSupported):
        N.nvmlDeviceGetTopologyCommonAncestor(h, h)
    with pytest.raises(N.NVMLError_InvalidArgument):
        N.nvmlDeviceGetHandleByIndex(N.nvmlDeviceGetCount())
    lib = ctypes.CDLL("libnvidia-ml.so.1")
    small = ctypes.create_string_buffer(4)
    assert lib.nvmlDeviceGetName(h, small, 4) == N.NVML_ERROR_INSUFFICIENT_SIZE
    assert lib.nvmlDeviceGetName(ctypes.c_void_p(0x1234), small, 4) == N.NVML_ERROR_INVALID_ARGUMENT
    lib.nvmlErrorString.restype = ctypes.c_char_p
    assert lib.nvmlErrorString(N.NVML_ERROR_NOT_SUPPORTED) == b"Not Supported"


def test_functions_need_nvml_initialised_and_shutdown_counts_its_inits():
    N.nvmlInit()  # a second init: the fixture's shutdown still leaves one
    N.nvmlShutdown()
    N.nvmlShutdown()
    try:
        with pytest.raises(N.NVMLError_Uninitialized):
            N.nvmlDeviceGetCount()
        with pytest.raises(N.NVMLError_Uninitialized):
            N.nvmlSystemGetCudaDriverVersion()
        assert N.nvmlSystemGetNVMLVersion().startswith("13.")  # the one query that needs no init
        with pytest.raises(N.NVMLError_Uninitialized):
            N.nvmlDeviceGetTemperature(None, 0)  # a function cuemu does not implement checks it too
    finally:
        N.nvmlInit()


PROBE = """
import pynvml as N
N.nvmlInit()
hs = [N.nvmlDeviceGetHandleByIndex(i) for i in range(N.nvmlDeviceGetCount())]
print([N.nvmlDeviceGetName(h) for h in hs])
print([N.nvmlDeviceGetPciInfo(h).busId for h in hs])
print(N.nvmlDeviceGetCudaComputeCapability(hs[0]), N.nvmlDeviceGetArchitecture(hs[0]))
try:
    print(N.nvmlDeviceGetCurrPcieLinkGeneration(hs[0]))
except N.NVMLError_NotSupported:
    print("no pcie")
if len(hs) > 1:
    print(N.nvmlDeviceGetP2PStatus(hs[0], hs[1], 0),  # NVML_P2P_CAPS_INDEX_READ (pynvml spells it as a tuple)
          N.nvmlDeviceGetTopologyCommonAncestor(hs[0], hs[1]))
"""


def probe(**env):
    out = subprocess.run([sys.executable, "-c", PROBE], env={**os.environ, **env}, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_devices_and_profiles_of_the_configuration():
    lines = probe(CUEMU_DEVICE_COUNT="3")
    assert lines[0].count("cuemu virtual") == 3
    assert lines[1] == "['00000000:01:00.0', '00000000:02:00.0', '00000000:03:00.0']"
    assert lines[4] == f"{N.NVML_P2P_STATUS_OK} {N.NVML_TOPOLOGY_HOSTBRIDGE}"
    lines = probe(CUEMU_DEVICE_PROFILE="gb10")
    assert lines[2] == f"(12, 1) {N.NVML_DEVICE_ARCH_BLACKWELL}"
    assert lines[3] == "no pcie"
    lines = probe(CUEMU_DEVICE_PROFILE="rtx-pro-6000")
    assert lines[2] == f"(12, 0) {N.NVML_DEVICE_ARCH_BLACKWELL}"
    assert lines[3] == "5"


def test_cuda_core_finds_its_device_in_nvml():
    """cuda.core maps a CUDA device to NVML by the bare UUID of cuDeviceGetUuid (no "GPU-" prefix), as NVIDIA's NVML
    accepts, and reads its PCI bus id through nvmlDeviceGetPciInfoExt."""
    core = pytest.importorskip("cuda.core")
    if not getattr(core.system, "CUDA_BINDINGS_NVML_IS_COMPATIBLE", False):
        pytest.skip("cuda.core's system module needs newer cuda-bindings")
    sd = core.Device(0).to_system_device()
    h = devices()[0]
    assert sd.index == 0
    assert sd.uuid == N.nvmlDeviceGetUUID(h)
    assert sd.pci_bus_id == N.nvmlDeviceGetPciInfo(h).busId
    assert sd.name == N.nvmlDeviceGetName(h)
    assert N.nvmlDeviceGetIndex(N.nvmlDeviceGetHandleByUUID(N.nvmlDeviceGetUUID(h)[4:])) == 0
