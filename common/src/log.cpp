// SPDX-License-Identifier: Apache-2.0
// Module loggers: stderr or GENIE_LOG_FILE (%h host, %p pid), levels from GENIE_LOG_LEVEL (spdlog syntax).
#include "genie/common/log.hpp"

#include <unistd.h>

#include <array>
#include <cstring>
#include <atomic>
#include <mutex>
#include <spdlog/cfg/helpers.h>
#include <spdlog/spdlog.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/dist_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include "genie/common/config.hpp"
#include "genie/common/status.hpp"

namespace genie::log {
namespace {

const config::Param<std::string> kLogLevel{
    "log_level", "warn",
    "Log levels in spdlog syntax: 'warn' or 'warn,netsim=debug,sched=trace' (loggers: common, netsim, sched, "
    "fakecuda, shim)."};
const config::Param<std::string> kLogFile{
    "log_file", "", "Log file instead of stderr; %h is replaced by the host name and %p by the pid."};

std::atomic<int> g_rank{-1};
std::atomic<bool> g_initialized{false};  // set once sinks exist; before that, breadcrumbs are dropped
std::atomic<int64_t (*)() noexcept> g_vt_source{nullptr};

class RankFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg&, const std::tm&, spdlog::memory_buf_t& dest) override {
    int r = g_rank.load(std::memory_order_relaxed);
    std::string s = r >= 0 ? "r" + std::to_string(r) : "r-";
    dest.append(s.data(), s.data() + s.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<RankFlag>(); }
};

class VirtualTimeFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg&, const std::tm&, spdlog::memory_buf_t& dest) override {
    auto fn = g_vt_source.load(std::memory_order_relaxed);
    int64_t vt = fn ? fn() : -1;
    std::string s = vt >= 0 ? fmt::format("vt={:.3f}us", static_cast<double>(vt) / 1e3) : "vt=-";
    dest.append(s.data(), s.data() + s.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<VirtualTimeFlag>(); }
};

struct State {
  std::once_flag once;
  // The module loggers by the address of their name constant: the hot path of every log macro (a
  // trace line that is filtered out costs this lookup and a level check, no lock).
  std::array<std::pair<const char*, spdlog::logger*>, 5> fast{};
  std::shared_ptr<spdlog::sinks::dist_sink_mt> sinks;
  std::mutex mu;
  std::map<std::string, std::shared_ptr<spdlog::logger>> loggers;
};
State& state() {
  static State* s = new State();  // leaked on purpose: logging may happen during static destruction
  return *s;
}

std::string expand_file_name(std::string pattern) {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  for (size_t p; (p = pattern.find("%h")) != std::string::npos;) pattern.replace(p, 2, host);
  for (size_t p; (p = pattern.find("%p")) != std::string::npos;) pattern.replace(p, 2, std::to_string(getpid()));
  return pattern;
}

void init_once() {
  auto& s = state();
  s.sinks = std::make_shared<spdlog::sinks::dist_sink_mt>();
  const auto& cfg = config::global();
  std::string file = cfg.get(kLogFile);
  try {
    if (!file.empty()) s.sinks->add_sink(std::make_shared<spdlog::sinks::basic_file_sink_mt>(expand_file_name(file)));
  } catch (...) {
    // Fall back to stderr; the warning below tells the user.
  }
  if (file.empty() || s.sinks->sinks().empty()) s.sinks->add_sink(std::make_shared<spdlog::sinks::stderr_sink_mt>());
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<RankFlag>('*').add_flag<VirtualTimeFlag>('&');
  formatter->set_pattern("[%H:%M:%S.%e] [%*] [%&] [%n] [%l] %v");
  s.sinks->set_formatter(std::move(formatter));
  for (const char* name : {kCommon, kNetsim, kSched, kFakecuda, kShim}) {
    auto lg = std::make_shared<spdlog::logger>(name, s.sinks);
    lg->set_level(spdlog::level::warn);
    lg->flush_on(spdlog::level::warn);
    s.loggers[name] = lg;
    spdlog::register_logger(lg);
  }
  size_t i = 0;
  for (const char* name : {kCommon, kNetsim, kSched, kFakecuda, kShim}) s.fast[i++] = {name, s.loggers[name].get()};
  // spdlog's load_levels applies to registered loggers; bad level names are ignored by spdlog.
  spdlog::cfg::helpers::load_levels(cfg.get(kLogLevel));
  if (!file.empty() && s.sinks->sinks().size() == 1 &&
      std::dynamic_pointer_cast<spdlog::sinks::stderr_sink_mt>(s.sinks->sinks()[0])) {
    s.loggers[kCommon]->warn("cannot open GENIE_LOG_FILE '{}', logging to stderr", file);
  }
  if (!config::global_status().is_ok()) s.loggers[kCommon]->error("configuration: {}", config::global_status().message());
  g_initialized.store(true, std::memory_order_release);
}

}  // namespace

namespace {
spdlog::logger* get(const char* name) noexcept {
  auto& s = state();
  try {
    // std::call_once writes libstdc++'s thread-locals on every call: check the flag first.
    if (!g_initialized.load(std::memory_order_acquire)) std::call_once(s.once, init_once);
    for (const auto& [n, lg] : s.fast)  // each library has its own copy of the name constants
      if (n == name || (n != nullptr && std::strcmp(n, name) == 0)) return lg;
    std::lock_guard lk(s.mu);
    auto it = s.loggers.find(name);
    if (it != s.loggers.end()) return it->second.get();
    auto lg = std::make_shared<spdlog::logger>(name, s.sinks);
    lg->set_level(s.loggers[kCommon]->level());
    s.loggers[name] = lg;
    return lg.get();
  } catch (...) {
    static spdlog::logger null_logger("null");
    null_logger.set_level(spdlog::level::off);
    return &null_logger;
  }
}
}  // namespace

bool enabled(const char* name, Level level) noexcept {
  return get(name)->should_log(static_cast<spdlog::level::level_enum>(level));
}

void write(const char* name, Level level, const char* file, int line, const char* function,
           fmt::string_view message) noexcept {
  try {
    get(name)->log(spdlog::source_loc{file, line, function}, static_cast<spdlog::level::level_enum>(level),
                   spdlog::string_view_t(message.data(), message.size()));
  } catch (...) {
  }
}

void flush() noexcept {
  try {
    get(kCommon);
    state().sinks->flush();
  } catch (...) {
  }
}

void set_rank(int rank) noexcept { g_rank.store(rank, std::memory_order_relaxed); }
void set_virtual_time_source(int64_t (*fn)() noexcept) noexcept { g_vt_source.store(fn, std::memory_order_relaxed); }

void add_sink(std::shared_ptr<spdlog::sinks::sink> sink) noexcept {
  get(kCommon);
  try {
    state().sinks->add_sink(std::move(sink));
  } catch (...) {
  }
}
void remove_sink(const std::shared_ptr<spdlog::sinks::sink>& sink) noexcept {
  try {
    state().sinks->remove_sink(sink);
  } catch (...) {
  }
}

}  // namespace genie::log

namespace genie {

const char* errc_name(Errc e) noexcept {
  switch (e) {
    case Errc::kOk: return "Ok";
    case Errc::kInvalidArgument: return "InvalidArgument";
    case Errc::kInvalidUsage: return "InvalidUsage";
    case Errc::kUnsupported: return "Unsupported";
    case Errc::kInternal: return "Internal";
    case Errc::kSystem: return "System";
    case Errc::kRemote: return "Remote";
    case Errc::kTimeout: return "Timeout";
    case Errc::kNotFound: return "NotFound";
    case Errc::kOutOfMemory: return "OutOfMemory";
    case Errc::kNotReady: return "NotReady";
  }
  return "?";
}

std::string Status::to_string() const {
  return is_ok() ? "Ok" : std::string(errc_name(code_)) + ": " + message_;
}

namespace detail {
void trace_error_hop(const Status& s, const char* file, int line) noexcept {
  // Errors while loading the configuration happen before logging exists (logging reads the
  // configuration): initialising it here would recurse.
  if (!log::g_initialized.load(std::memory_order_acquire)) return;
  GENIE_LOG_TRACE(log::kCommon, "-> {} at {}:{}", errc_name(s.code()), file, line);
}
void assert_fail(const char* cond, const char* file, int line, const std::string& msg) noexcept {
  try {
    log::emit(log::kCommon, log::Level::kCritical, file, line, "", "assertion failed: {} at {}:{}: {}", cond, file,
              line, msg);
    log::flush();
  } catch (...) {
  }
  std::fprintf(stderr, "genie: assertion failed: %s at %s:%d: %s\n", cond, file, line, msg.c_str());
  std::abort();
}
}  // namespace detail
}  // namespace genie
