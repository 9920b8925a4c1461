// Cluster occupancy against an H200's own answers: cuOccupancyMaxActiveClusters for clusters of 1 to 16 blocks of
// 128 threads, with shared memory sized for 1 to 16 blocks per SM, as tools/gpu-probe/occupancy29.py asked driver
// 580 (its table, read from tools/gpu-probe/results/occupancy29-h200-2026-11-28.txt, 104 answers, which the GPC
// layout was fitted to), and the 48 answers of occupancy30.py (cluster sizes and 2-D/3-D shapes the layout was not
// fitted to). Both profiles of the configured machine (h100, h200) take the H200's GPC layout
// (DeviceProfile::gpcSms).
#include "test_util.h"

#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace {

using cuemu::test::initDriver;

constexpr char kEmptyKernel[] = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry empty()
{
  ret;
}
)";

struct Row {
  int blocksPerSm;
  unsigned sharedBytes;
  struct Answer {
    unsigned x, y, z;  // the cluster's shape
    int clusters;
  };
  std::vector<Answer> answers;
};

// The tables of clusters by shape and blocks per SM: " 4 blocks/SM (57344 B): 1:528 2:264 ..." (occupancy29:
// cluster sizes along x) or " 3 blocks/SM (76800 B): 11x1x1:28 2x2x1:92 ..." (occupancy30: shapes).
std::vector<Row> recordedTable(const char* file) {
  std::ifstream in(std::string(CUEMU_GPU_PROBE_RESULTS "/") + file);
  std::vector<Row> rows;
  std::string line;
  const std::regex head(R"(^\s*(\d+) blocks/SM \((\d+) B\):(.*)$)"), answer(R"((\d+)(?:x(\d+)x(\d+))?:(\d+))");
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_match(line, m, head)) continue;
    Row r{std::stoi(m[1]), unsigned(std::stoul(m[2])), {}};
    const std::string rest = m[3];
    for (auto it = std::sregex_iterator(rest.begin(), rest.end(), answer); it != std::sregex_iterator(); ++it) {
      const std::smatch& a = *it;
      r.answers.push_back({unsigned(std::stoul(a[1])), a[2].matched ? unsigned(std::stoul(a[2])) : 1u,
                           a[3].matched ? unsigned(std::stoul(a[3])) : 1u, std::stoi(a[4])});
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

class ClusterOccupancy : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    initDriver();
    ASSERT_CU(CUDA_SUCCESS, cuDevicePrimaryCtxRetain(&ctx_, GetParam()));
    ASSERT_CU(CUDA_SUCCESS, cuCtxSetCurrent(ctx_));
    ASSERT_CU(CUDA_SUCCESS, cuModuleLoadData(&module_, kEmptyKernel));
    ASSERT_CU(CUDA_SUCCESS, cuModuleGetFunction(&fn_, module_, "empty"));
    int optin = 0;
    ASSERT_CU(CUDA_SUCCESS,
              cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, GetParam()));
    ASSERT_CU(CUDA_SUCCESS, cuFuncSetAttribute(fn_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin));
    ASSERT_CU(CUDA_SUCCESS, cuFuncSetAttribute(fn_, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
  }
  void TearDown() override {
    if (module_) cuModuleUnload(module_);
    if (ctx_) cuDevicePrimaryCtxRelease(GetParam());
  }
  int activeClusters(const Row::Answer& shape, unsigned sharedBytes) {
    CUlaunchAttribute attr{};
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = shape.x;
    attr.value.clusterDim.y = shape.y;
    attr.value.clusterDim.z = shape.z;
    CUlaunchConfig config{};
    config.gridDimX = shape.x;
    config.gridDimY = shape.y;
    config.gridDimZ = shape.z;
    config.blockDimX = 128;
    config.blockDimY = config.blockDimZ = 1;
    config.sharedMemBytes = sharedBytes;
    config.attrs = &attr;
    config.numAttrs = 1;
    int n = -1;
    EXPECT_CU(CUDA_SUCCESS, cuOccupancyMaxActiveClusters(&n, fn_, &config));
    return n;
  }
  // Every answer of a recorded table; returns how many there were.
  size_t checkTable(const char* file) {
    size_t answers = 0;
    for (const Row& r : recordedTable(file)) {
      int blocks = -1;
      EXPECT_CU(CUDA_SUCCESS, cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn_, 128, r.sharedBytes));
      EXPECT_EQ(blocks, r.blocksPerSm) << r.sharedBytes << " shared bytes a block";
      for (const Row::Answer& a : r.answers) {
        EXPECT_EQ(activeClusters(a, r.sharedBytes), a.clusters)
            << file << ": clusters of " << a.x << "x" << a.y << "x" << a.z << ", " << r.blocksPerSm
            << " blocks per SM (" << r.sharedBytes << " B)";
        ++answers;
      }
    }
    return answers;
  }
  CUcontext ctx_ = nullptr;
  CUmodule module_ = nullptr;
  CUfunction fn_ = nullptr;
};

TEST_P(ClusterOccupancy, EveryAnswerTheH200Gave) {
  EXPECT_EQ(checkTable("occupancy29-h200-2026-11-28.txt"), 104u);
  EXPECT_EQ(checkTable("occupancy30-h200-2026-11-28.txt"), 48u);
}

// The largest cluster is bounded by the GPCs' SMs and the portable/non-portable limit, not by the blocks each SM
// holds (occupancy30: 8 portable, 16 not, for 1 to 16 blocks per SM).
TEST_P(ClusterOccupancy, PotentialSizeIsTheLimit) {
  CUlaunchConfig config{};
  config.gridDimX = config.gridDimY = config.gridDimZ = 1;
  config.blockDimX = 128;
  config.blockDimY = config.blockDimZ = 1;
  for (unsigned shared : {232448u, 13568u}) {
    config.sharedMemBytes = shared;
    int size = 0;
    EXPECT_CU(CUDA_SUCCESS, cuOccupancyMaxPotentialClusterSize(&size, fn_, &config));
    EXPECT_EQ(size, 16) << "non-portable sizes allowed, " << shared << " shared bytes a block";
  }
  ASSERT_CU(CUDA_SUCCESS, cuFuncSetAttribute(fn_, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 0));
  int size = 0;
  EXPECT_CU(CUDA_SUCCESS, cuOccupancyMaxPotentialClusterSize(&size, fn_, &config));
  EXPECT_EQ(size, 8);
}

INSTANTIATE_TEST_SUITE_P(H100AndH200Profiles, ClusterOccupancy, ::testing::Values(0, 1));

}  // namespace
