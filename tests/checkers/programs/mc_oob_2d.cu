// A 2-D grid of 2-D blocks: only thread (3,2,0) of block (1,1,0) writes past the end of a 16x16 image.
#include "common.h"
__global__ void image_overrun(float* img, int width) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  int index = y * width + x;
  if (blockIdx.x == 1 && blockIdx.y == 1 && threadIdx.x == 3 && threadIdx.y == 2) index += 1000;
  img[index] = 1.0f;
}
int main() {
  float* img;
  STEP(cudaMalloc(&img, 16 * 16 * sizeof(float)));
  image_overrun<<<dim3(2, 2), dim3(8, 8)>>>(img, 16);
  return finish();
}
