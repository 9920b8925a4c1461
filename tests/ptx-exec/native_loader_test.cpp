// The native tier's pieces that work without its compiler library (docs/native-tier.md, "Cache"): the cache keys'
// digest and the loader of cached object code, on a real object and on damaged copies of it.
#include "native/cache_key.h"
#include "native/digest.h"
#include "native/object_loader.h"

#include <dlfcn.h>
#include <sched.h>
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <stdexcept>
#include <sstream>
#include <string>

using ptx::exec::native::loadObject;
using ptx::exec::native::Sha256;

namespace {

std::string sha256(const std::string& s) {
  Sha256 h;
  h.update(s);
  return h.hex();
}

std::string readObject() {
  std::ifstream in(LOADER_OBJECT, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

uint64_t resolveFromProcess(std::string_view name) {
  return reinterpret_cast<uint64_t>(dlsym(RTLD_DEFAULT, std::string(name).c_str()));
}

}  // namespace

// FIPS 180-4's examples (and the empty message, and one that spans many blocks).
TEST(NativeCacheKeys, Sha256GivesTheStandardsDigests) {
  EXPECT_EQ(sha256(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // fed in pieces of every size: the same digest
  const std::string text(300, 'x');
  const std::string whole = sha256(text);
  for (size_t piece = 1; piece < 130; piece += 7) {
    Sha256 h;
    for (size_t at = 0; at < text.size(); at += piece) h.update(text.substr(at, piece));
    EXPECT_EQ(h.hex(), whole) << piece;
  }
}

// A key must not depend on the core that computes it: the CPU's part once held the core's APIC ID, and processes of one
// program on different cores missed each other's code.
TEST(NativeCacheKeys, TheCpuIdentityIsTheSameOnEveryCore) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  std::string first;
  int cores = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    const std::string identity = ptx::exec::native::cpuIdentity();
    if (first.empty()) first = identity;
    EXPECT_EQ(identity, first) << "on core " << cpu;
    ++cores;
  }
  sched_setaffinity(0, sizeof allowed, &allowed);
  EXPECT_FALSE(first.empty());
  EXPECT_GE(cores, 1);
}

// The object runs: code, read-only and writable data, and a call that the resolver binds to the C library.
TEST(NativeObjectLoader, LoadsAndRunsARelocatableObject) {
  const std::string image = readObject();
  ASSERT_GT(image.size(), 64u) << LOADER_OBJECT;
  std::string why;
  auto object = loadObject(image, resolveFromProcess, why);
  ASSERT_TRUE(object) << why;
  auto kernel = reinterpret_cast<long (*)(const char*)>(const_cast<void*>(object->symbol("cuemu_kernel")));
  auto calls = reinterpret_cast<long (*)()>(const_cast<void*>(object->symbol("cuemu_calls")));
  auto message = reinterpret_cast<const char* (*)()>(const_cast<void*>(object->symbol("cuemu_message")));
  ASSERT_TRUE(kernel && calls && message);
  EXPECT_EQ(object->symbol("kMessage"), nullptr) << "a local symbol is not exported";
  EXPECT_EQ(kernel("5"), 15);
  EXPECT_EQ(kernel("-14"), -42);
  EXPECT_EQ(calls(), 2);
  EXPECT_STREQ(message(), "cuemu loader");
  EXPECT_GT(object->codeBytes(), 0u);
  // its unwind tables are registered: an exception passes through its frames, as through the JIT's code (the
  // interpreter's functions that compiled kernels call may throw: std::bad_alloc)
  auto through = reinterpret_cast<long (*)(long (*)(long), long)>(const_cast<void*>(object->symbol("cuemu_through")));
  ASSERT_TRUE(through);
  EXPECT_EQ(through([](long v) { return v + 1; }, 4), 11);
  EXPECT_THROW(through([](long v) -> long { throw std::runtime_error(std::to_string(v)); }, 4), std::runtime_error);
  // two loads are two copies, each with its own data
  auto again = loadObject(image, resolveFromProcess, why);
  ASSERT_TRUE(again) << why;
  EXPECT_EQ(reinterpret_cast<long (*)()>(const_cast<void*>(again->symbol("cuemu_calls")))(), 0);
}

TEST(NativeObjectLoader, RefusesWhatItCannotResolve) {
  const std::string image = readObject();
  std::string why;
  ptx::exec::native::LoadRefusal refusal{};
  auto object = loadObject(
      image, [](std::string_view) -> uint64_t { return 0; }, why, &refusal);
  EXPECT_FALSE(object);
  EXPECT_NE(why.find("strtol"), std::string::npos) << why;
  EXPECT_EQ(refusal, ptx::exec::native::LoadRefusal::Unsupported) << "a whole object, for the compiler's library";
}

// A damaged cache file is refused or loaded, never followed out of bounds: every prefix of the object, and copies with
// bytes changed at random (the loaded ones are not run: their code may be anything).
TEST(NativeObjectLoader, DamagedObjectsAreRefusedWithoutHarm) {
  const std::string image = readObject();
  std::string why;
  // every prefix lacks the section headers at the object's end: damaged (the cache removes such a file)
  for (size_t n = 0; n < image.size(); n += (n < 256 ? 1 : 13)) {
    ptx::exec::native::LoadRefusal refusal{};
    EXPECT_FALSE(loadObject(std::string_view(image).substr(0, n), resolveFromProcess, why, &refusal)) << n;
    EXPECT_EQ(refusal, ptx::exec::native::LoadRefusal::Damaged) << n << ": " << why;
  }
  EXPECT_FALSE(loadObject(std::string_view(image).substr(0, 10), resolveFromProcess, why));
  EXPECT_FALSE(why.empty());
  std::mt19937 rng(2026);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string copy = image;
    const int flips = 1 + int(rng() % 4);
    for (int k = 0; k < flips; ++k) copy[rng() % copy.size()] = char(rng());
    loadObject(copy, resolveFromProcess, why);  // whatever it says, it returns
  }
}
