// SPDX-License-Identifier: Apache-2.0
// Status / Result<T>: Genie's internal error type, converted to NCCL or CUDA codes only at the C ABI.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace genie {

/// Error categories. Each C ABI converts these to its own return codes in exactly one place
/// (`to_cuda` in fakecuda, `to_nccl` in shim).
enum class Errc {
  kOk = 0,
  kInvalidArgument,
  kInvalidUsage,
  kUnsupported,
  kInternal,
  kSystem,
  kRemote,
  kTimeout,
  kNotFound,
  kOutOfMemory,
  kNotReady,
};

/// Human-readable name of an Errc ("InvalidArgument").
const char* errc_name(Errc e) noexcept;

/// The result of an operation that returns no value: Ok, or an error code with a message.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Errc code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status ok() { return {}; }

  bool is_ok() const { return code_ == Errc::kOk; }
  explicit operator bool() const { return is_ok(); }
  Errc code() const { return code_; }
  const std::string& message() const { return message_; }
  /// "InvalidArgument: <message>".
  std::string to_string() const;

 private:
  Errc code_ = Errc::kOk;
  std::string message_;
};

inline Status invalid_argument(std::string m) { return {Errc::kInvalidArgument, std::move(m)}; }
inline Status invalid_usage(std::string m) { return {Errc::kInvalidUsage, std::move(m)}; }
inline Status unsupported(std::string m) { return {Errc::kUnsupported, std::move(m)}; }
inline Status internal_error(std::string m) { return {Errc::kInternal, std::move(m)}; }
inline Status system_error(std::string m) { return {Errc::kSystem, std::move(m)}; }
inline Status not_found(std::string m) { return {Errc::kNotFound, std::move(m)}; }

/// A value or an error Status (expected-like; libstdc++ 12 has no std::expected).
template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    if (std::get<Status>(v_).is_ok()) v_ = Status(Errc::kInternal, "Result constructed from an ok Status");
  }

  bool is_ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return is_ok(); }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  /// The error; Ok when a value is held.
  Status status() const { return is_ok() ? Status() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

namespace detail {
/// Trace-level breadcrumb for each hop of an error (NCCLCHECK style); implemented in log.cpp.
void trace_error_hop(const Status& s, const char* file, int line) noexcept;
[[noreturn]] void assert_fail(const char* cond, const char* file, int line, const std::string& msg) noexcept;
inline const Status& as_status(const Status& s) { return s; }
template <class T>
Status as_status(const Result<T>& r) { return r.status(); }
}  // namespace detail

}  // namespace genie

#define GENIE_CONCAT_INNER(a, b) a##b
#define GENIE_CONCAT(a, b) GENIE_CONCAT_INNER(a, b)

/// Propagate a non-ok Status (or Result's status) to the caller, leaving a trace breadcrumb.
#define GENIE_TRY(expr)                                                      \
  do {                                                                       \
    auto&& genie_try_v_ = (expr);                                            \
    if (!genie_try_v_.is_ok()) {                                             \
      ::genie::Status genie_try_s_ = ::genie::detail::as_status(genie_try_v_); \
      ::genie::detail::trace_error_hop(genie_try_s_, __FILE__, __LINE__);    \
      return genie_try_s_;                                                   \
    }                                                                        \
  } while (0)

#define GENIE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)           \
  auto tmp = (expr);                                          \
  if (!tmp.is_ok()) {                                         \
    ::genie::detail::trace_error_hop(tmp.status(), __FILE__, __LINE__); \
    return tmp.status();                                      \
  }                                                           \
  lhs = std::move(tmp).value()

/// `GENIE_ASSIGN_OR_RETURN(auto x, f())`: unwrap a Result or return its error.
#define GENIE_ASSIGN_OR_RETURN(lhs, expr) GENIE_ASSIGN_OR_RETURN_IMPL(GENIE_CONCAT(genie_r_, __LINE__), lhs, expr)

/// Invariant check that stays on in release builds: logs a critical message and aborts. Never for user input.
#define GENIE_ASSERT(cond, ...)                                                                 \
  do {                                                                                          \
    if (!(cond)) ::genie::detail::assert_fail(#cond, __FILE__, __LINE__, ::std::string(__VA_ARGS__)); \
  } while (0)

/// Thread-local storage on hot API paths: the initial-exec model avoids a __tls_get_addr call per access
/// in our shared libraries. The few bytes come from glibc's static TLS surplus, which also serves
/// libraries loaded later with dlopen (as `import torch` loads libcudart).
#define GENIE_TLS_FAST __attribute__((tls_model("initial-exec")))
