// Shared helpers of the context tests: the driver initialised once, results compared by name.
#pragma once

#include <cuda.h>
#include <gtest/gtest.h>

namespace cuemu::test {

inline const char* resultName(CUresult result) {
  const char* name = nullptr;
  cuGetErrorName(result, &name);
  return name ? name : "(unknown CUresult)";
}

// Initialises the driver (the test environment configures two devices: an H100 and an H200 profile).
inline void initDriver() { ASSERT_EQ(cuInit(0), CUDA_SUCCESS); }

}  // namespace cuemu::test

#define EXPECT_CU(expected, call) EXPECT_STREQ(::cuemu::test::resultName(expected), ::cuemu::test::resultName(call))
#define ASSERT_CU(expected, call) ASSERT_STREQ(::cuemu::test::resultName(expected), ::cuemu::test::resultName(call))
