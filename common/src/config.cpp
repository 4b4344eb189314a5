// SPDX-License-Identifier: Apache-2.0
// Config registry, loading (defaults < JSON file < environment < overrides) and validation.
#include "genie/common/config.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

extern char** environ;

namespace genie::config {
namespace {

struct RegistryState {
  std::mutex mu;
  std::map<std::string, ParamInfo> params;
};
RegistryState& state() {
  static RegistryState* s = new RegistryState();  // never destroyed: used from static destructors too
  return *s;
}

const char* type_name(ParamType t) {
  switch (t) {
    case ParamType::kBool: return "bool";
    case ParamType::kInt: return "int";
    case ParamType::kDouble: return "double";
    case ParamType::kString: return "string";
  }
  return "?";
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

}  // namespace

const char* source_name(Source s) noexcept {
  switch (s) {
    case Source::kDefault: return "default";
    case Source::kFile: return "file";
    case Source::kEnv: return "env";
    case Source::kOverride: return "override";
  }
  return "?";
}

std::string env_name_for_key(const std::string& key) {
  std::string out = "GENIE_";
  for (char c : key) out += (c == '.' || c == '-') ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

Registry& Registry::instance() {
  static Registry r;
  return r;
}

void Registry::declare(ParamInfo info) {
  auto& s = state();
  std::lock_guard lk(s.mu);
  // A second declaration of the same key (the same .cpp linked into two tests) must agree.
  s.params[info.key] = std::move(info);
}

const ParamInfo* Registry::find(const std::string& key) const {
  auto& s = state();
  std::lock_guard lk(s.mu);
  auto it = s.params.find(key);
  return it == s.params.end() ? nullptr : &it->second;  // map nodes are stable
}

std::vector<ParamInfo> Registry::all() const {
  auto& s = state();
  std::lock_guard lk(s.mu);
  std::vector<ParamInfo> v;
  for (auto& [k, p] : s.params) v.push_back(p);
  return v;
}

namespace detail {
ParamInfo make_info(std::string key, ParamType type, std::string def, std::string desc,
                    std::vector<std::string> choices, std::optional<double> lo, std::optional<double> hi,
                    std::string env_name) {
  ParamInfo p;
  p.env_name = env_name.empty() ? env_name_for_key(key) : std::move(env_name);
  p.key = std::move(key);
  p.type = type;
  p.default_text = std::move(def);
  p.description = std::move(desc);
  p.choices = std::move(choices);
  p.min_value = lo;
  p.max_value = hi;
  return p;
}

bool parse_bool(const std::string& s0, bool* out) {
  std::string s;
  for (char c : trim(s0)) s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "1" || s == "true" || s == "yes" || s == "on") { *out = true; return true; }
  if (s == "0" || s == "false" || s == "no" || s == "off") { *out = false; return true; }
  return false;
}
std::string to_text(bool v) { return v ? "1" : "0"; }
std::string to_text(int64_t v) { return std::to_string(v); }
std::string to_text(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}
}  // namespace detail

Status validate(const ParamInfo& info, const std::string& text, const std::string& where) {
  auto bad = [&](const std::string& why) {
    return invalid_argument(where + ": invalid value '" + text + "' for " + info.key + " (" + info.env_name +
                            "): " + why);
  };
  // Bounds are doubles; an integer is compared in long double, which holds every int64 exactly (a double
  // does not above 2^53: 10^18 + 1 would round to 10^18 and pass a maximum of 10^18).
  long double number = 0;
  switch (info.type) {
    case ParamType::kBool: {
      bool b;
      if (!detail::parse_bool(text, &b)) return bad("expected a boolean (0/1, true/false, yes/no, on/off)");
      return Status::ok();
    }
    case ParamType::kInt: {
      std::string t = trim(text);
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(t.c_str(), &end, 10);
      // The whole text: a NUL inside it (a JSON config file can hold "\u0000") must not end the number.
      if (t.empty() || end != t.c_str() + t.size() || errno == ERANGE) return bad("expected an integer");
      number = static_cast<long double>(v);
      break;
    }
    case ParamType::kDouble: {
      std::string t = trim(text);
      char* end = nullptr;
      double v = std::strtod(t.c_str(), &end);
      if (t.empty() || end != t.c_str() + t.size() || !std::isfinite(v)) return bad("expected a finite number");
      number = v;
      break;
    }
    case ParamType::kString:
      if (!info.choices.empty() && std::find(info.choices.begin(), info.choices.end(), text) == info.choices.end()) {
        std::string list;
        for (auto& c : info.choices) list += (list.empty() ? "" : ", ") + c;
        return bad("expected one of: " + list);
      }
      return Status::ok();
  }
  if (info.min_value && number < static_cast<long double>(*info.min_value))
    return bad("below the minimum " + detail::to_text(*info.min_value));
  if (info.max_value && number > static_cast<long double>(*info.max_value))
    return bad("above the maximum " + detail::to_text(*info.max_value));
  return Status::ok();
}

std::optional<Config::Value> Config::find(const std::string& key) const {
  if (auto it = values_.find(key); it != values_.end()) return it->second;
  if (!env_) return std::nullopt;
  const ParamInfo* p = Registry::instance().find(key);
  if (p == nullptr) return std::nullopt;
  auto e = env_->find(p->env_name);
  if (e == env_->end()) return std::nullopt;
  if (Status st = validate(*p, e->second, "environment variable " + p->env_name); !st.is_ok()) {
    // Declared after the load, so load() could not report it: say so once per key, use the default.
    static std::mutex mu;
    static std::set<std::string> told;
    std::lock_guard lk(mu);
    if (told.insert(key).second) std::fprintf(stderr, "genie: %s; using the default\n", st.message().c_str());
    return std::nullopt;
  }
  return Value{e->second, Source::kEnv};
}

std::string Config::text(const std::string& key) const {
  if (auto v = find(key)) return v->text;
  if (const ParamInfo* p = Registry::instance().find(key)) return p->default_text;
  return {};
}

Source Config::source(const std::string& key) const {
  auto v = find(key);
  return v ? v->source : Source::kDefault;
}

Status Config::set(const std::string& key, const std::string& text) {
  const ParamInfo* p = Registry::instance().find(key);
  if (p == nullptr) return invalid_argument("unknown configuration key '" + key + "'");
  GENIE_TRY(validate(*p, text, "override"));
  values_[key] = {text, Source::kOverride};
  return Status::ok();
}

Status Config::merge_json(const std::string& json_text, const std::string& origin) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const std::exception& e) {
    return invalid_argument(origin + ": not valid JSON: " + e.what());
  }
  if (!doc.is_object()) return invalid_argument(origin + ": top level must be a JSON object");
  // Walk nested objects; a leaf at path a/b/c is key "a.b.c".
  std::function<Status(const nlohmann::json&, const std::string&)> walk = [&](const nlohmann::json& node,
                                                                             const std::string& prefix) -> Status {
    for (auto it = node.begin(); it != node.end(); ++it) {
      std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
      std::string path = "/" + key;
      std::replace(path.begin(), path.end(), '.', '/');
      const ParamInfo* p = Registry::instance().find(key);
      if (it->is_object() && p == nullptr) {
        GENIE_TRY(walk(*it, key));
        continue;
      }
      if (p == nullptr) return invalid_argument(origin + ": unknown key at JSON path " + path);
      std::string text;
      if (it->is_string()) text = it->get<std::string>();
      else if (it->is_boolean()) text = it->get<bool>() ? "1" : "0";
      else if (it->is_number_integer()) text = std::to_string(it->get<int64_t>());
      else if (it->is_number()) text = detail::to_text(it->get<double>());
      else return invalid_argument(origin + ": JSON path " + path + " must be a string, number or boolean");
      GENIE_TRY(validate(*p, text, origin + " at JSON path " + path));
      values_[key] = {text, Source::kFile};
    }
    return Status::ok();
  };
  return walk(doc, "");
}

Result<Config> Config::load(const EnvMap& env) {
  Config c;
  c.env_ = std::make_shared<const EnvMap>(env);
  if (auto it = env.find("GENIE_CONFIG"); it != env.end() && !it->second.empty()) {
    std::ifstream in(it->second);
    if (!in) return invalid_argument("GENIE_CONFIG: cannot read file '" + it->second + "'");
    std::stringstream ss;
    ss << in.rdbuf();
    GENIE_TRY(c.merge_json(ss.str(), it->second));
  }
  for (const ParamInfo& p : Registry::instance().all()) {
    auto it = env.find(p.env_name);
    if (it == env.end()) continue;
    GENIE_TRY(validate(p, it->second, "environment variable " + p.env_name));
    c.values_[p.key] = {it->second, Source::kEnv};
  }
  return c;
}

Config::EnvMap process_environment() {
  Config::EnvMap env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string kv = *e;
    size_t eq = kv.find('=');
    if (eq == std::string::npos) continue;
    env.emplace(kv.substr(0, eq), kv.substr(eq + 1));
  }
  return env;
}

Result<Config> Config::load_from_process() { return load(process_environment()); }

std::string Config::describe() const {
  std::ostringstream os;
  for (const ParamInfo& p : Registry::instance().all()) {
    os << p.key << " = " << text(p.key) << "  [" << type_name(p.type) << ", set by " << source_name(source(p.key))
       << ", env " << p.env_name << "]\n    " << p.description << "\n";
  }
  return os.str();
}

namespace {
const Param<bool> kPrintConfig{"print_config", false,
                               "Print every parameter, its value, source and description to stderr at start-up."};

struct GlobalConfig {
  std::once_flag once;
  Config config;
  Status status;
};
GlobalConfig& global_state() {
  static GlobalConfig* g = new GlobalConfig();
  return *g;
}
}  // namespace

const Config& global() {
  auto& g = global_state();
  std::call_once(g.once, [&] {
    auto r = Config::load_from_process();
    if (r.is_ok()) g.config = std::move(r.value());
    else g.status = r.status();
    if (g.config.get(kPrintConfig)) std::fprintf(stderr, "genie configuration:\n%s", g.config.describe().c_str());
  });
  return g.config;
}

const Status& global_status() {
  global();
  return global_state().status;
}

void set_global_for_testing(Config c) {
  global();
  global_state().config = std::move(c);
  global_state().status = Status::ok();
}

}  // namespace genie::config
