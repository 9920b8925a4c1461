// The pattern of a segmentation-tree program that once stayed in one phase for more than 300 s on cuemu
// (issue 24): per level, sort (key, value) pairs by segment, reduce_by_key to per-segment sums, an exclusive
// scan for offsets, and a transform that splits segments for the next level. Checked against a host model.
// thrust_stress [levels] [elements]
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/reduce.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/sequence.h>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

struct Split {
  int level;
  __host__ __device__ int operator()(int segment, int value) const {
    return segment * 2 + ((value >> (level % 16)) & 1);
  }
};

int main(int argc, char** argv) {
  int levels = argc > 1 ? std::atoi(argv[1]) : 12;
  int n = argc > 2 ? std::atoi(argv[2]) : 20000;
  std::vector<int> hostValues(n);
  unsigned state = 12345;
  for (int& v : hostValues) {
    state = state * 1664525u + 1013904223u;
    v = int(state >> 8) & 0xffff;
  }
  thrust::device_vector<int> values(hostValues.begin(), hostValues.end());
  thrust::device_vector<int> segments(n, 0);
  std::vector<int> modelSegments(n, 0);
  std::vector<int> modelValues = hostValues;
  for (int level = 0; level < levels; ++level) {
    thrust::sort_by_key(segments.begin(), segments.end(), values.begin());
    thrust::device_vector<int> keys(n), sums(n);
    auto ends = thrust::reduce_by_key(segments.begin(), segments.end(), values.begin(), keys.begin(), sums.begin());
    int count = int(ends.first - keys.begin());
    thrust::device_vector<int> offsets(count);
    thrust::exclusive_scan(sums.begin(), sums.begin() + count, offsets.begin());
    thrust::transform(segments.begin(), segments.end(), values.begin(), segments.begin(), Split{level});
    int total = thrust::reduce(values.begin(), values.end());
    // host model
    std::vector<std::pair<int, int>> pairs(n);
    for (int i = 0; i < n; ++i) pairs[i] = {modelSegments[i], modelValues[i]};
    std::stable_sort(pairs.begin(), pairs.end(), [](auto& a, auto& b) { return a.first < b.first; });
    std::map<int, long long> modelSums;
    long long modelTotal = 0;
    for (auto& p : pairs) {
      modelSums[p.first] += p.second;
      modelTotal += p.second;
    }
    if (int(modelSums.size()) != count || int(modelTotal) != total) {
      std::printf("FAIL level %d: %d segments (expected %zu), total %d (expected %lld)\n", level, count,
                  modelSums.size(), total, modelTotal);
      return 1;
    }
    thrust::host_vector<int> hostOffsets = offsets;
    long long running = 0;
    int i = 0;
    for (auto& [segment, sum] : modelSums) {
      if (hostOffsets[i] != int(running)) {
        std::printf("FAIL level %d: offset %d is %d, expected %lld\n", level, i, int(hostOffsets[i]), running);
        return 1;
      }
      running += sum;
      ++i;
    }
    for (int k = 0; k < n; ++k) {
      modelSegments[k] = pairs[k].first * 2 + ((pairs[k].second >> (level % 16)) & 1);
      modelValues[k] = pairs[k].second;
    }
  }
  std::printf("PASS thrust_stress %d levels of %d elements\n", levels, n);
  return 0;
}
