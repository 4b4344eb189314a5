// SPDX-License-Identifier: Apache-2.0
// The one typed configuration registry of Genie (NCCL DEFINE_NCCL_PARAM / libfabric fi_param_define style).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "genie/common/status.hpp"

namespace genie::config {

enum class ParamType { kBool, kInt, kDouble, kString };

/// Static description of one parameter. Declared once, at namespace scope, through Param<T>.
struct ParamInfo {
  std::string key;           ///< dotted snake_case key: "netsim.model", or "device" for top-level ones.
  ParamType type = ParamType::kString;
  std::string default_text;  ///< default, in text form
  std::string description;
  std::string env_name;      ///< GENIE_<SECTION>_<KEY> derived from key, or a foreign name (NCCL_ALGO)
  std::vector<std::string> choices;  ///< for strings: allowed values (empty: any)
  std::optional<double> min_value;   ///< for numbers: inclusive bounds
  std::optional<double> max_value;
};

/// Where a value came from (NCCL `set_by=`).
enum class Source { kDefault, kFile, kEnv, kOverride };
const char* source_name(Source s) noexcept;

/// `netsim.model` -> `GENIE_NETSIM_MODEL`.
std::string env_name_for_key(const std::string& key);

/// Process-wide list of declared parameters. Thread-safe; declarations happen at static-init time.
class Registry {
 public:
  static Registry& instance();
  void declare(ParamInfo info);
  const ParamInfo* find(const std::string& key) const;
  std::vector<ParamInfo> all() const;  ///< sorted by key
};

/// Checks `text` against `info` (type, choices, bounds); the error names the key and where it came from.
Status validate(const ParamInfo& info, const std::string& text, const std::string& where);

template <class T>
class Param;

/// A snapshot of every parameter's effective value. Built once at init and passed down (no globals
/// below common): default < JSON file (GENIE_CONFIG) < environment < override.
class Config {
 public:
  using EnvMap = std::map<std::string, std::string>;

  /// Loads from the given environment (and the JSON file it names in GENIE_CONFIG).
  static Result<Config> load(const EnvMap& env);
  /// Loads from the process environment.
  static Result<Config> load_from_process();
  /// Merges a JSON document of the form {"netsim": {"model": "flow"}, "device": "h200"}; unknown keys are
  /// errors naming the JSON path. `origin` names the file in messages.
  Status merge_json(const std::string& json_text, const std::string& origin);
  /// Test override (highest precedence). Validated.
  Status set(const std::string& key, const std::string& text);

  std::string text(const std::string& key) const;  ///< effective value in text form; "" if undeclared
  Source source(const std::string& key) const;
  template <class T>
  T get(const Param<T>& p) const;

  /// One line per parameter: key, value, source, env name and description (GENIE_PRINT_CONFIG=1).
  std::string describe() const;

 private:
  struct Value {
    std::string text;
    Source source = Source::kDefault;
  };
  /// The value of `key`: set at load, or — for a parameter declared after the load (a library whose static
  /// initialisers ran after the first global() call) — read from the loaded environment now, validated.
  std::optional<Value> find(const std::string& key) const;
  std::map<std::string, Value> values_;
  std::shared_ptr<const EnvMap> env_;  ///< the environment this config was loaded from (late declarations)
};

/// A declared parameter. Declare at namespace scope in the .cpp that reads it:
///   const config::Param<std::string> kClock{"clock", "virtual", "Clock mode", {"virtual", "realtime"}};
template <class T>
class Param {
 public:
  Param(std::string key, T default_value, std::string description, std::vector<std::string> choices = {},
        std::optional<double> min_value = {}, std::optional<double> max_value = {}, std::string env_name = {});
  const std::string& key() const { return key_; }
  T default_value() const { return default_; }

 private:
  std::string key_;
  T default_;
};

namespace detail {
ParamInfo make_info(std::string key, ParamType type, std::string def, std::string desc,
                    std::vector<std::string> choices, std::optional<double> lo, std::optional<double> hi,
                    std::string env_name);
bool parse_bool(const std::string& s, bool* out);
std::string to_text(bool v);
std::string to_text(int64_t v);
std::string to_text(double v);
inline std::string to_text(const std::string& v) { return v; }
template <class T>
constexpr ParamType type_of() {
  if constexpr (std::is_same_v<T, bool>) return ParamType::kBool;
  else if constexpr (std::is_same_v<T, int64_t>) return ParamType::kInt;
  else if constexpr (std::is_same_v<T, double>) return ParamType::kDouble;
  else return ParamType::kString;
}
}  // namespace detail

template <class T>
Param<T>::Param(std::string key, T default_value, std::string description, std::vector<std::string> choices,
                std::optional<double> min_value, std::optional<double> max_value, std::string env_name)
    : key_(key), default_(default_value) {
  Registry::instance().declare(detail::make_info(std::move(key), detail::type_of<T>(), detail::to_text(default_value),
                                                 std::move(description), std::move(choices), min_value, max_value,
                                                 std::move(env_name)));
}

template <class T>
T Config::get(const Param<T>& p) const {
  const std::optional<Value> v = find(p.key());
  if (!v) return p.default_value();
  if constexpr (std::is_same_v<T, bool>) {
    bool b = p.default_value();
    detail::parse_bool(v->text, &b);
    return b;
  } else if constexpr (std::is_same_v<T, int64_t>) {
    // Validated text (validate()); strtoll, not stoll, so that nothing here can throw.
    return static_cast<int64_t>(std::strtoll(v->text.c_str(), nullptr, 10));
  } else if constexpr (std::is_same_v<T, double>) {
    // strtod, not stod: stod throws out_of_range for a valid subnormal such as 1e-310.
    return std::strtod(v->text.c_str(), nullptr);
  } else {
    return v->text;
  }
}

/// The process's configuration, loaded once (thread-safe) from the environment. Used only by the C ABI
/// entry points of the preloaded libraries and by the CLI, which pass the structs down from there.
/// If loading failed, `global_status()` says why and `global()` holds defaults plus what did load.
const Config& global();
const Status& global_status();
/// Replaces the global config (tests, and the launcher applying CLI flags). Not thread-safe against readers.
void set_global_for_testing(Config c);

/// The process environment as a map (for launchers that pass it on to children).
Config::EnvMap process_environment();

}  // namespace genie::config
