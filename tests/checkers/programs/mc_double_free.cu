// The same buffer freed twice.
#include "common.h"
int main() {
  void* a;
  STEP(cudaMalloc(&a, 4096));
  STEP(cudaFree(a));
  STEP(cudaFree(a));
  return finish();
}
