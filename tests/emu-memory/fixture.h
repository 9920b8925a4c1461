// A test fixture with an initialised driver and a fresh context made current.
#pragma once

#include "api/cuda_internal.h"
#include "core/address_space.h"
#include "core/context.h"
#include "core/device.h"
#include "core/driver.h"
#include "core/stream.h"

#include <gtest/gtest.h>

#include <memory>

// Byte-exact bounds (CUEMU_BOUNDS=exact) for the allocations made while it lives, for tests of the allocator's
// precision; the default (granule) mode comes back afterwards.
class ExactBounds {
 public:
  ExactBounds() { cuemu::AddressSpace::instance().setBoundsMode(cuemu::BoundsMode::Exact); }
  ~ExactBounds() { cuemu::AddressSpace::instance().setBoundsMode(cuemu::BoundsMode::Granule); }
  ExactBounds(const ExactBounds&) = delete;
  ExactBounds& operator=(const ExactBounds&) = delete;
};

class MemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(cuInit(0), CUDA_SUCCESS);
    cuemu::Device* device = cuemu::deviceByOrdinal(0);
    ASSERT_NE(device, nullptr);
    context_ = std::make_shared<cuemu::Context>(*device, 0, /*primary=*/false);
    context_->registerHandle();
    cuemu::pushCurrentContext(context_);
  }
  void TearDown() override {
    cuemu::forgetContextOnThisThread(*context_);
    cuemu::handleTable<cuemu::Context>().erase(context_->handle());
    context_->teardown();
    context_.reset();
  }
  std::shared_ptr<cuemu::Context> context_;
};
