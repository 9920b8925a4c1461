// Results inside the driver: an Error carries the CUresult the API returns plus a message for the log;
// Expected<T> is a value or an Error. Converted to a bare CUresult only at the API boundary.
#pragma once

#include "api/cuda_internal.h"

#include <string>
#include <utility>
#include <variant>

namespace cuemu {

struct Error {
  CUresult code = CUDA_ERROR_UNKNOWN;
  std::string message;
};

inline Error makeError(CUresult code, std::string message = {}) { return Error{code, std::move(message)}; }

template <typename T> class [[nodiscard]] Expected {
 public:
  Expected(T value) : state_(std::move(value)) {}
  Expected(Error error) : state_(std::move(error)) {}

  explicit operator bool() const { return std::holds_alternative<T>(state_); }
  T& operator*() { return std::get<T>(state_); }
  const T& operator*() const { return std::get<T>(state_); }
  T* operator->() { return &std::get<T>(state_); }
  const Error& error() const { return std::get<Error>(state_); }
  Error takeError() { return std::move(std::get<Error>(state_)); }

 private:
  std::variant<T, Error> state_;
};

}  // namespace cuemu
