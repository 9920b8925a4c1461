"""The application frees a graph allocation (a captured cuMemAllocAsync the graph does not free) outside the graph:
before the graph is instantiated, before its first launch, after a launch; then launches again. Also: does a later
allocation get the freed graph allocation's address? Prints each call's result.
Run: python probe.py   (on a GPU, or with cuemu's libcuda.so.1 first on the loader path)
"""
from cuda.bindings import driver as d


def r(x):
    return (x[0] if isinstance(x, tuple) else x).name


def main():
    d.cuInit(0)
    _, dev = d.cuDeviceGet(0)
    _, ctx = d.cuDevicePrimaryCtxRetain(dev)
    d.cuCtxSetCurrent(ctx)
    _, s = d.cuStreamCreate(0)
    for case in ("before-instantiate", "before-launch", "after-launch", "after-launch-autofree"):
        d.cuStreamBeginCapture(s, d.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL)
        _, p = d.cuMemAllocAsync(1 << 16, s)
        _, g = d.cuStreamEndCapture(s)
        print(f"== {case}: graph allocation {int(p):#x}")
        if case == "before-instantiate":
            print("cuMemFreeAsync", r(d.cuMemFreeAsync(p, s)), "sync", r(d.cuStreamSynchronize(s)))
        flags = 1 if case.endswith("autofree") else 0
        _, e = d.cuGraphInstantiate(g, flags)
        if case == "before-launch":
            print("cuMemFreeAsync", r(d.cuMemFreeAsync(p, s)), "sync", r(d.cuStreamSynchronize(s)))
            print("cuMemFree", r(d.cuMemFree(p)))
        print("launch", r(d.cuGraphLaunch(e, s)), "sync", r(d.cuStreamSynchronize(s)))
        if case.startswith("after-launch"):
            print("cuMemFreeAsync", r(d.cuMemFreeAsync(p, s)), "sync", r(d.cuStreamSynchronize(s)))
            err, q = d.cuMemAlloc(1 << 16)
            err2, q2 = d.cuMemAllocAsync(1 << 16, s)
            d.cuStreamSynchronize(s)
            print("cuMemAlloc after the free:", err.name, "same address" if int(q) == int(p) else "other address",
                  "| cuMemAllocAsync:", err2.name, "same address" if int(q2) == int(p) else "other address")
            d.cuMemFree(q)
            d.cuMemFreeAsync(q2, s)
        print("launch again", r(d.cuGraphLaunch(e, s)), "sync", r(d.cuStreamSynchronize(s)))
        print("cuMemFreeAsync after it", r(d.cuMemFreeAsync(p, s)), "sync", r(d.cuStreamSynchronize(s)))
        print("exec destroy", r(d.cuGraphExecDestroy(e)), "graph destroy", r(d.cuGraphDestroy(g)))
        print("cuMemFreeAsync after destroy", r(d.cuMemFreeAsync(p, s)), "sync", r(d.cuStreamSynchronize(s)))
        print("context", r(d.cuCtxSynchronize()))


main()
