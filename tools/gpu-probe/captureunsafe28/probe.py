"""A potentially unsafe call (cuMemAlloc, cuMemFree, cuStreamQuery of another stream) during a stream capture: its
result, and the capture's status afterwards and cuStreamEndCapture's result, for each capture mode; also cuMemAlloc
from a second thread (in its default, global mode) while the first captures.
Run: python probe.py   (on a GPU, or with cuemu's libcuda.so.1 first on the loader path)
"""
import threading

from cuda.bindings import driver as d

MODES = {"global": d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL,
         "thread-local": d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
         "relaxed": d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_RELAXED}


def main():
    d.cuInit(0)
    _, dev = d.cuDeviceGet(0)
    _, ctx = d.cuDevicePrimaryCtxRetain(dev)
    d.cuCtxSetCurrent(ctx)
    _, s = d.cuStreamCreate(1)
    _, other = d.cuStreamCreate(1)
    _, spare = d.cuMemAlloc(4096)
    calls = {"cuMemAlloc": lambda: d.cuMemAlloc(4096)[0],
             "cuMemFree": lambda: d.cuMemFree(spare)[0],
             "cuMemAllocAsync(other stream)": lambda: d.cuMemAllocAsync(4096, other)[0],
             "cuMemAlloc on a second thread": None}
    for mode, value in MODES.items():
        for name, call in calls.items():
            d.cuStreamBeginCapture(s, value)
            if call is None:
                out = []

                def worker():
                    d.cuCtxSetCurrent(ctx)
                    out.append(d.cuMemAlloc(4096)[0])

                t = threading.Thread(target=worker)
                t.start()
                t.join()
                result = out[0]
            else:
                result = call()
            status = d.cuStreamIsCapturing(s)[1]
            end, g = d.cuStreamEndCapture(s)
            print(f"{mode:12s} {name:32s} -> {result.name:40s} status after: {status.name:40s} end: {end.name}")
            if name == "cuMemFree" and result == d.CUresult.CUDA_SUCCESS:
                _, spare = d.cuMemAlloc(4096)
            if g:
                d.cuGraphDestroy(g)
    print("context", d.cuCtxSynchronize()[0].name)


main()
