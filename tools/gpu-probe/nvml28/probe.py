#!/usr/bin/env python3
"""What NVIDIA's NVML (libnvidia-ml.so.1 of driver 580) answers for the queries cuemu's NVML implements, through
ctypes only (no pynvml needed). Run on a GPU machine: python3 probe.py > nvml-<gpu>.txt; on cuemu through
`cuemu run -- python3 probe.py` to compare."""
import ctypes as C
import os

lib = C.CDLL("libnvidia-ml.so.1")
lib.nvmlErrorString.restype = C.c_char_p


def call(name, *args):
    fn = getattr(lib, name, None)
    if fn is None:
        return "missing"
    r = fn(*args)
    return r if r == 0 else f"{r} ({lib.nvmlErrorString(r).decode()})"


def text(name, *args, size=96):
    buf = C.create_string_buffer(size)
    r = call(name, *args, buf, size)
    return buf.value.decode(errors="replace") if r == 0 else r


def uint(name, *args):
    v = C.c_uint(0)
    r = call(name, *args, C.byref(v))
    return v.value if r == 0 else r


print("before init: count", uint("nvmlDeviceGetCount_v2"))
print("init", call("nvmlInit_v2"), "init again", call("nvmlInit_v2"))
print("driver", text("nvmlSystemGetDriverVersion"), "nvml", text("nvmlSystemGetNVMLVersion"))
v = C.c_int(0)
print("cuda", call("nvmlSystemGetCudaDriverVersion_v2", C.byref(v)), v.value)
print("count", uint("nvmlDeviceGetCount_v2"))
h = C.c_void_p()
print("handle", call("nvmlDeviceGetHandleByIndex_v2", 0, C.byref(h)))
print("name", text("nvmlDeviceGetName", h), "uuid", text("nvmlDeviceGetUUID", h))
print("name in 4 bytes", call("nvmlDeviceGetName", h, C.create_string_buffer(4), 4))


class Pci(C.Structure):
    _fields_ = [("busIdLegacy", C.c_char * 16), ("domain", C.c_uint), ("bus", C.c_uint), ("device", C.c_uint),
                ("pciDeviceId", C.c_uint), ("pciSubSystemId", C.c_uint), ("busId", C.c_char * 32)]


p = Pci()
print("pci", call("nvmlDeviceGetPciInfo_v3", h, C.byref(p)), p.busIdLegacy, p.domain, p.bus, p.device,
      hex(p.pciDeviceId), hex(p.pciSubSystemId), p.busId)
for form in (p.busId, p.busIdLegacy, p.busIdLegacy.lower(), p.busId[4:], b"0:" + p.busId.split(b":", 1)[1]):
    h2 = C.c_void_p()
    print("by bus id", form, call("nvmlDeviceGetHandleByPciBusId_v2", C.c_char_p(form), C.byref(h2)), h2.value == h.value)
for u in (text("nvmlDeviceGetUUID", h).encode(), text("nvmlDeviceGetUUID", h).upper().encode(),
          text("nvmlDeviceGetUUID", h)[4:].encode(),
          b"GPU-00000000-0000-0000-0000-000000000000"):
    h2 = C.c_void_p()
    print("by uuid", u, call("nvmlDeviceGetHandleByUUID", C.c_char_p(u), C.byref(h2)))
print("bad index", call("nvmlDeviceGetHandleByIndex_v2", 99, C.byref(C.c_void_p())))
# (a handle NVML did not give out crashes NVIDIA's library: not probed)
major, minor = C.c_int(), C.c_int()
print("cc", call("nvmlDeviceGetCudaComputeCapability", h, C.byref(major), C.byref(minor)), major.value, minor.value)
print("arch", uint("nvmlDeviceGetArchitecture", h), "brand", uint("nvmlDeviceGetBrand", h),
      "cores", uint("nvmlDeviceGetNumGpuCores", h), "minor", uint("nvmlDeviceGetMinorNumber", h),
      "index", uint("nvmlDeviceGetIndex", h), "buswidth", uint("nvmlDeviceGetMemoryBusWidth", h))
print("pcie curr gen", uint("nvmlDeviceGetCurrPcieLinkGeneration", h), "max gen", uint("nvmlDeviceGetMaxPcieLinkGeneration", h),
      "gpu max gen", uint("nvmlDeviceGetGpuMaxPcieLinkGeneration", h), "curr width", uint("nvmlDeviceGetCurrPcieLinkWidth", h),
      "max width", uint("nvmlDeviceGetMaxPcieLinkWidth", h), "speed", uint("nvmlDeviceGetPcieSpeed", h),
      "max speed", uint("nvmlDeviceGetPcieLinkMaxSpeed", h))
for t, nm in ((0, "graphics"), (1, "sm"), (2, "mem"), (3, "video")):
    c = C.c_uint()
    print("clock", nm, call("nvmlDeviceGetClockInfo", h, t, C.byref(c)), c.value,
          "max", call("nvmlDeviceGetMaxClockInfo", h, t, C.byref(c)), c.value)
m = (C.c_ulonglong * 3)()
print("memory", call("nvmlDeviceGetMemoryInfo", h, m), list(m))


class Mem2(C.Structure):
    _fields_ = [("version", C.c_uint), ("total", C.c_ulonglong), ("reserved", C.c_ulonglong), ("free", C.c_ulonglong),
                ("used", C.c_ulonglong)]


m2 = Mem2()
m2.version = C.sizeof(Mem2) | (2 << 24)
print("memory v2", call("nvmlDeviceGetMemoryInfo_v2", h, C.byref(m2)), m2.total, m2.reserved, m2.free, m2.used)
m2.version = 1
print("memory v2 bad version", call("nvmlDeviceGetMemoryInfo_v2", h, C.byref(m2)))
print("bar1", call("nvmlDeviceGetBAR1MemoryInfo", h, m), list(m))
print("compute mode", uint("nvmlDeviceGetComputeMode", h), "persistence", uint("nvmlDeviceGetPersistenceMode", h),
      "display", uint("nvmlDeviceGetDisplayMode", h), "display active", uint("nvmlDeviceGetDisplayActive", h),
      "multi gpu board", uint("nvmlDeviceGetMultiGpuBoard", h))
a, b = C.c_uint(), C.c_uint()
print("mig", call("nvmlDeviceGetMigMode", h, C.byref(a), C.byref(b)), a.value, b.value)
n = C.c_uint(0)
print("procs with 0", call("nvmlDeviceGetComputeRunningProcesses_v3", h, C.byref(n), None), n.value)
print("graphics procs", call("nvmlDeviceGetGraphicsRunningProcesses_v3", h, C.byref(n), None), n.value)
print("nvlink 0", uint("nvmlDeviceGetNvLinkState", h, 0), "nvlink 99", uint("nvmlDeviceGetNvLinkState", h, 99))
print("temperature", uint("nvmlDeviceGetTemperature", h, 0), "unit count", uint("nvmlUnitGetCount"))
print("process name", text("nvmlSystemGetProcessName", os.getpid(), size=256))
print("topology self", uint("nvmlDeviceGetTopologyCommonAncestor", h, h))
print("p2p self read", uint("nvmlDeviceGetP2PStatus", h, h, 0), "nvlink", uint("nvmlDeviceGetP2PStatus", h, h, 2))
print("shutdown", call("nvmlShutdown"), call("nvmlShutdown"), call("nvmlShutdown"))
print("after shutdown: count", uint("nvmlDeviceGetCount_v2"), "name", text("nvmlDeviceGetName", h),
      "temperature", uint("nvmlDeviceGetTemperature", h, 0), "driver", text("nvmlSystemGetDriverVersion"),
      "nvml", text("nvmlSystemGetNVMLVersion"))
v = C.c_int(0)
print("cuda after shutdown", call("nvmlSystemGetCudaDriverVersion", C.byref(v)), v.value)
print("init flags no gpus", call("nvmlInitWithFlags", 1), call("nvmlShutdown"))
