"""Does device printf output written before a trap reach stdout, and at which driver call?

A kernel calls vprintf, then traps. Each case runs in a fresh process (a trap poisons the context) and marks each
driver call on stdout, flushing C's stdout after each, so the output shows at which call the kernel's text appears.
Run: python probe.py   (on a GPU, or with cuemu's libcuda.so.1 first on the loader path)
"""
import ctypes
import os
import subprocess
import sys

PTX = b"""
.version 8.0
.target sm_90
.address_size 64
.extern .func (.param .b32 r) vprintf (.param .b64 f, .param .b64 a);
.global .align 1 .b8 msg[14] = {107, 101, 114, 110, 101, 108, 32, 116, 101, 120, 116, 10, 0, 0};
.visible .entry k(.param .u32 doTrap)
{
  .reg .b64 %a;
  .reg .b32 %r;
  .reg .pred %p;
  mov.u64 %a, msg;
  cvta.global.u64 %a, %a;
  {
  .param .b64 p0;
  st.param.b64 [p0], %a;
  .param .b64 p1;
  st.param.b64 [p1], 0;
  .param .b32 rv;
  call.uni (rv), vprintf, (p0, p1);
  ld.param.b32 %r, [rv];
  }
  ld.param.u32 %r, [doTrap];
  setp.ne.u32 %p, %r, 0;
  @%p trap;
  ret;
}
"""


def case(name):
    from cuda.bindings import driver as d

    libc = ctypes.CDLL(None)

    def mark(text):
        libc.fflush(None)
        os.write(1, f"[{text}]\n".encode())

    d.cuInit(0)
    _, dev = d.cuDeviceGet(0)
    _, ctx = d.cuDevicePrimaryCtxRetain(dev)
    d.cuCtxSetCurrent(ctx)
    _, mod = d.cuModuleLoadData(PTX)
    _, k = d.cuModuleGetFunction(mod, b"k")
    trap = ctypes.c_uint32(0 if name == "no-trap" else 1)
    args = (ctypes.c_void_p * 1)(ctypes.addressof(trap))
    mark(f"launch {d.cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, 0, ctypes.addressof(args), 0)[0].name}")
    if name == "query-then-ctx-sync":
        import time

        for _ in range(200):
            r = d.cuStreamQuery(0)[0]
            if r.name != "CUDA_ERROR_NOT_READY":
                break
            time.sleep(0.01)
        mark(f"cuStreamQuery {r.name}")
        mark(f"cuStreamIsCapturing {d.cuStreamIsCapturing(0)[0].name}")
    if name in ("ctx-sync", "no-trap", "query-then-ctx-sync"):
        mark(f"cuCtxSynchronize {d.cuCtxSynchronize()[0].name}")
        mark(f"cuCtxSynchronize again {d.cuCtxSynchronize()[0].name}")
    elif name == "stream-sync":
        mark(f"cuStreamSynchronize {d.cuStreamSynchronize(0)[0].name}")
    elif name == "memcpy":
        buf = (ctypes.c_char * 4)()
        _, dptr = d.cuMemAlloc(4)
        mark(f"cuMemAlloc {_.name}")
        mark(f"cuMemcpyDtoH {d.cuMemcpyDtoH(buf, dptr, 4)[0].name}")
    mark("exit")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        case(sys.argv[1])
        sys.exit(0)
    for name in ("no-trap", "ctx-sync", "stream-sync", "query-then-ctx-sync", "memcpy"):
        r = subprocess.run([sys.executable, __file__, name], capture_output=True, text=True, timeout=60)
        print(f"== {name} (exit {r.returncode})")
        print(r.stdout, end="")
        if r.stderr.strip():
            print("stderr:", r.stderr.strip().replace("\n", " | ")[:300])
