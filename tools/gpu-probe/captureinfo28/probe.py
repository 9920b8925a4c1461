"""What cuStreamGetCaptureInfo hands out for a capture that an unsafe call (cuMemAlloc) invalidated: the status, the
id, the graph (NULL or not) and the dependencies, before and after a node was captured; then cuStreamEndCapture.
Run: python probe.py   (on a GPU, or with cuemu's libcuda.so.1 first on the loader path)
"""
from cuda.bindings import driver as d


def info(s, label):
    res = d.cuStreamGetCaptureInfo(s)  # (err, status, id, graph, dependencies[, edge data], count)
    err, status, cid, graph, n = res[0], res[1], res[2], res[3], res[-1]
    print(f"{label:34s} {err.name} status={status.name} id={'set' if cid and int(cid) else 0} "
          f"graph={'set' if graph is not None and int(graph) else 'NULL'} dependencies={n}")


def main():
    d.cuInit(0)
    _, dev = d.cuDeviceGet(0)
    _, ctx = d.cuDevicePrimaryCtxRetain(dev)
    d.cuCtxSetCurrent(ctx)
    _, s = d.cuStreamCreate(1)
    _, buf = d.cuMemAlloc(4096)
    for mode in ("THREAD_LOCAL", "GLOBAL"):
        for node_first in (False, True):
            print(f"== {mode}, {'a memset captured first' if node_first else 'nothing captured first'}")
            d.cuStreamBeginCapture(s, getattr(d.CUstreamCaptureMode, f"CU_STREAM_CAPTURE_MODE_{mode}"))
            if node_first:
                print("memset", d.cuMemsetD8Async(buf, 1, 4096, s)[0].name)
            info(s, "active")
            print("cuMemAlloc", d.cuMemAlloc(4096)[0].name)
            info(s, "after the refused cuMemAlloc")
            print("memset after", d.cuMemsetD8Async(buf, 2, 4096, s)[0].name)
            info(s, "after a memset")
            err, g = d.cuStreamEndCapture(s)
            print("cuStreamEndCapture", err.name, "graph", "set" if g is not None and int(g) else "NULL")
            info(s, "after the end")
    print("context", d.cuCtxSynchronize()[0].name)


main()
