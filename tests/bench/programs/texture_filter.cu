// A 1024x768 float image resized to 1920x1080 through a bilinear 2D texture, 10 frames (an image-processing sample).
#include <cmath>
#include <vector>

#include "check.h"

__global__ void resize(cudaTextureObject_t tex, float* out, int w, int h, float sx, float sy, float gain) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  out[y * w + x] = gain * tex2D<float>(tex, (x + 0.5f) * sx, (y + 0.5f) * sy);
}

int main() {
  const int iw = 1024, ih = 768, ow = 1920, oh = 1080, frames = 10;
  std::vector<float> img(size_t(iw) * ih);
  for (int y = 0; y < ih; ++y)
    for (int x = 0; x < iw; ++x) img[size_t(y) * iw + x] = 0.5f + 0.5f * std::sin(0.01f * x) * std::cos(0.013f * y);
  cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  cudaArray_t array;
  CHECK(cudaMallocArray(&array, &desc, iw, ih));
  CHECK(cudaMemcpy2DToArray(array, 0, 0, img.data(), iw * sizeof(float), iw * sizeof(float), ih,
                            cudaMemcpyHostToDevice));
  cudaResourceDesc res = {};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = array;
  cudaTextureDesc td = {};
  td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
  td.filterMode = cudaFilterModeLinear;
  td.readMode = cudaReadModeElementType;
  cudaTextureObject_t tex;
  CHECK(cudaCreateTextureObject(&tex, &res, &td, nullptr));
  float* out;
  CHECK(cudaMalloc(&out, size_t(ow) * oh * sizeof(float)));
  const float sx = float(iw) / ow, sy = float(ih) / oh;
  dim3 block(16, 16), grid((ow + 15) / 16, (oh + 15) / 16);
  for (int f = 0; f < frames; ++f) resize<<<grid, block>>>(tex, out, ow, oh, sx, sy, 1.0f + 0.01f * f);
  CHECK(cudaGetLastError());
  std::vector<float> got(size_t(ow) * oh);
  CHECK(cudaMemcpy(got.data(), out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  // host bilinear filtering (the GPU's 8-bit weights differ by at most about 1/256 of a texel step)
  double worst = 0;
  const float gain = 1.0f + 0.01f * (frames - 1);
  for (int y = 0; y < oh; y += 7)
    for (int x = 0; x < ow; x += 5) {
      float u = (x + 0.5f) * sx - 0.5f, v = (y + 0.5f) * sy - 0.5f;
      int x0 = int(std::floor(u)), y0 = int(std::floor(v));
      float a = u - x0, b = v - y0;
      auto at = [&](int xx, int yy) {
        xx = xx < 0 ? 0 : xx >= iw ? iw - 1 : xx;
        yy = yy < 0 ? 0 : yy >= ih ? ih - 1 : yy;
        return img[size_t(yy) * iw + xx];
      };
      float want = gain * ((1 - a) * (1 - b) * at(x0, y0) + a * (1 - b) * at(x0 + 1, y0) +
                           (1 - a) * b * at(x0, y0 + 1) + a * b * at(x0 + 1, y0 + 1));
      worst = std::fmax(worst, std::fabs(double(want) - got[size_t(y) * ow + x]));
    }
  CHECK(cudaDestroyTextureObject(tex));
  CHECK(cudaFreeArray(array));
  CHECK(cudaFree(out));
  return verdict(worst < 1e-2, "texture_filter");
}
