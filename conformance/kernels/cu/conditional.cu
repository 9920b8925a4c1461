// Kernels that set the value of a conditional graph node (api.graph.Conditional cases). cudaGraphSetConditional
// stays an extern function in the PTX: the driver resolves it (libcudadevrt's on a GPU, a built-in on cuemu).
extern "C" __global__ void set_conditional(cudaGraphConditionalHandle handle, const unsigned* value) {
  if (threadIdx.x == 0) cudaGraphSetConditional(handle, *value);
}

// One iteration of a WHILE body: counts `remaining` down, counts the iteration, and goes on while remaining > 0.
extern "C" __global__ void count_down(cudaGraphConditionalHandle handle, unsigned* remaining, unsigned* iterations) {
  if (threadIdx.x == 0) {
    *iterations += 1;
    *remaining -= 1;
    cudaGraphSetConditional(handle, *remaining > 0 ? 1u : 0u);
  }
}
