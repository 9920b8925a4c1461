#include "native/digest.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace ptx::exec::native {

namespace {

// The standard's constants: the first 32 bits of the fractional parts of the square roots of the first 8 primes
// (the initial state) and of the cube roots of the first 64 primes (the round constants), computed here rather than
// typed in; the digests of the standard's examples are checked in the tests (DigestTest).
struct Constants {
  uint32_t initial[8];
  uint32_t rounds[64];
};

uint32_t fractionBits(long double x) {
  const long double fraction = x - std::floor(x);
  return uint32_t(std::floor(std::ldexp(fraction, 32)));
}

const Constants& constants() {
  static const Constants c = [] {
    Constants k{};
    int found = 0;
    for (uint32_t n = 2; found < 64; ++n) {
      bool prime = true;
      for (uint32_t d = 2; d * d <= n; ++d) prime = prime && n % d != 0;
      if (!prime) continue;
      if (found < 8) k.initial[found] = fractionBits(std::sqrt(static_cast<long double>(n)));
      k.rounds[found] = fractionBits(std::cbrt(static_cast<long double>(n)));
      ++found;
    }
    return k;
  }();
  return c;
}

}  // namespace

Sha256::Sha256() { std::memcpy(state_.data(), constants().initial, sizeof constants().initial); }

void Sha256::block(const uint8_t* p) {
  const uint32_t* k = constants().rounds;
  uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = uint32_t(p[4 * i]) << 24 | uint32_t(p[4 * i + 1]) << 16 | uint32_t(p[4 * i + 2]) << 8 | p[4 * i + 3];
  for (int i = 16; i < 64; ++i) {
    const uint32_t s0 = std::rotr(w[i - 15], 7) ^ std::rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const uint32_t s1 = std::rotr(w[i - 2], 17) ^ std::rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3], e = state_[4], f = state_[5], g = state_[6],
           h = state_[7];
  for (int i = 0; i < 64; ++i) {
    const uint32_t sum1 = std::rotr(e, 6) ^ std::rotr(e, 11) ^ std::rotr(e, 25);
    const uint32_t choose = (e & f) ^ (~e & g);
    const uint32_t t1 = h + sum1 + choose + k[i] + w[i];
    const uint32_t sum0 = std::rotr(a, 2) ^ std::rotr(a, 13) ^ std::rotr(a, 22);
    const uint32_t majority = (a & b) ^ (a & c) ^ (b & c);
    const uint32_t t2 = sum0 + majority;
    h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
  }
  const uint32_t out[8] = {a, b, c, d, e, f, g, h};
  for (int i = 0; i < 8; ++i) state_[size_t(i)] += out[i];
}

void Sha256::update(const void* data, size_t bytes) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  totalBytes_ += bytes;
  while (bytes) {
    const size_t take = std::min(bytes, sizeof pending_ - pendingBytes_);
    std::memcpy(pending_ + pendingBytes_, p, take);
    pendingBytes_ += take, p += take, bytes -= take;
    if (pendingBytes_ == sizeof pending_) {
      block(pending_);
      pendingBytes_ = 0;
    }
  }
}

std::string Sha256::hex() {
  const uint64_t bits = totalBytes_ * 8;
  const uint8_t one = 0x80, zero = 0;
  update(&one, 1);
  while (pendingBytes_ != 56) update(&zero, 1);
  uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = uint8_t(bits >> (56 - 8 * i));
  update(length, sizeof length);
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (uint32_t v : state_)
    for (int shift = 28; shift >= 0; shift -= 4) out += kDigits[(v >> shift) & 15];
  return out;
}

}  // namespace ptx::exec::native
