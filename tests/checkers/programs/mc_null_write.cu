// A single thread stores through a null pointer.
#include "common.h"
__global__ void write_null(int* p) { *p = 42; }
int main() {
  write_null<<<1, 1>>>(nullptr);
  return finish();
}
