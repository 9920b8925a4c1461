// Stream-ordered pool memory (cudaMallocAsync) never freed: what the leak check reports.
#include "common.h"
int main() {
  int* a;
  cudaStream_t stream;
  STEP(cudaStreamCreate(&stream));
  STEP(cudaMallocAsync(&a, 1000, stream));
  STEP(cudaStreamSynchronize(stream));
  return finish();
}
