# Fixed on helper/s27-tinygrad ("cuGraphLaunch takes a stream of any context"); kept as a check.
# Found by tinygrad 0.13.0's tests on cuemu with several devices (test_multitensor.py's test_copy_jit,
# test_graph.py's test_copies_2_devs):
# TinyJit replays a jitted function as one CUDA graph per batch of work; for a copy from CUDA:1 to CUDA:0 followed
# by a kernel on CUDA:0 the graph holds a memcpy node naming CUDA:1's context and the kernel node, and a later
# replay launches it on the NULL stream with whichever context tinygrad made current last (here CUDA:1's).
# cuemu answered cuGraphLaunch with CUDA_ERROR_INVALID_VALUE (it only took streams of the context the graph was
# instantiated in); driver 580 launches a graph into any context's stream (measured on an H200 with two contexts
# of one device: tools/gpu-probe/graphctx30.py; no machine with two GPUs was lent to measure two devices).
#   cuemu run --device-count 2 -- python tools/repro/tinygrad_graph_in_another_context.py   # "ok" when fixed
import numpy as np
from tinygrad import Device, Tensor, TinyJit

d1 = f"{Device.DEFAULT}:1"


@TinyJit
def copy_tensor(x: Tensor) -> Tensor:
    return x.to(Device.DEFAULT) + 1


for _ in range(4):  # the third call is the first one replayed from the graph
    t = Tensor.rand(256, device=d1).realize()  # leaves CUDA:1's context current
    x = copy_tensor(t)
    np.testing.assert_equal((t + 1).numpy(), x.numpy())
print("ok")
