// SPDX-License-Identifier: Apache-2.0
// libnccl.so.2, part 4: NCCL 2.30's parameter API over Genie's one configuration registry (genie/common/config.hpp),
// and NCCL 2.32's ncclSetEncryption, with their pncclXxx aliases. A parameter's key is its environment name: NCCL's
// own (NCCL_ALGO, NCCL_MIN_CTAS, ...) for the NCCL parameters Genie honours, GENIE_<SECTION>_<KEY> for Genie's.
#include <nccl.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "communicator.hpp"
#include "genie/common/config.hpp"
#include "nccl_api_support.hpp"
#include "nccl_debug.hpp"
#include "shim_errors.hpp"

struct ncclParamHandle {
  static constexpr uint64_t kMagic = 0x4e43434c50415241ull;  // "NCCLPARA"
  uint64_t magic = kMagic;
  std::string key;       ///< the registry's key
  std::string env_name;  ///< the key the program used
};

using namespace genie;        // NOLINT
using namespace genie::shim;  // NOLINT

namespace {

std::mutex g_param_mu;
std::map<std::string, std::unique_ptr<ncclParamHandle>> g_handles;  // by env name; live as long as the library

// The registry's parameter whose environment name (or dotted key) is `name`.
const config::ParamInfo* find_param(const std::string& name, std::vector<config::ParamInfo>* storage) {
  *storage = config::Registry::instance().all();
  for (const auto& p : *storage)
    if (p.env_name == name || p.key == name) return &p;
  return nullptr;
}

Result<ncclParamHandle*> handle_ok(ncclParamHandle_t h) {
  if (h == nullptr || h->magic != ncclParamHandle::kMagic)
    return invalid_argument("h is not a handle from ncclParamBind");
  return h;
}

// The value as an integer of the type's range.
template <class T>
Status typed(ncclParamHandle_t h, T* out) {
  GENIE_ASSIGN_OR_RETURN(ncclParamHandle * p, handle_ok(h));
  GENIE_TRY(check_ptr(out, "out"));
  const std::string text = config::global().text(p->key);
  long double v = 0;
  if (text == "true" || text == "false") {
    v = text == "true" ? 1 : 0;
  } else {
    errno = 0;
    char* end = nullptr;
    v = std::strtold(text.c_str(), &end);
    if (text.empty() || end == nullptr || *end != '\0' || errno != 0 || v != std::floor(v))
      return invalid_argument(p->env_name + " = '" + text + "' is not an integer");
  }
  if (v < static_cast<long double>(std::numeric_limits<T>::min()) ||
      v > static_cast<long double>(std::numeric_limits<T>::max()))
    return invalid_argument(p->env_name + " = " + text + " does not fit the requested integer type");
  *out = static_cast<T>(v);
  return Status::ok();
}

}  // namespace

GENIE_NCCL_EXPORT ncclResult_t ncclParamBind(ncclParamHandle_t* out, const char* key) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(out, "out"));
    GENIE_TRY(check_ptr(key, "key"));
    std::vector<config::ParamInfo> all;
    const config::ParamInfo* p = find_param(key, &all);
    if (p == nullptr) return invalid_argument(std::string("key '") + key + "' is not a known parameter");
    std::lock_guard lk(g_param_mu);
    auto& h = g_handles[key];
    if (!h) {
      h = std::make_unique<ncclParamHandle>();
      h->key = p->key;
      h->env_name = key;
    }
    *out = h.get();
    return Status::ok();
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclParamGetI8(ncclParamHandle_t h, int8_t* out) {
  return guard(__func__, [&] { return typed(h, out); });
}
GENIE_NCCL_EXPORT ncclResult_t ncclParamGetI16(ncclParamHandle_t h, int16_t* out) {
  return guard(__func__, [&] { return typed(h, out); });
}
GENIE_NCCL_EXPORT ncclResult_t ncclParamGetI32(ncclParamHandle_t h, int32_t* out) {
  return guard(__func__, [&] { return typed(h, out); });
}
GENIE_NCCL_EXPORT ncclResult_t ncclParamGetI64(ncclParamHandle_t h, int64_t* out) {
  return guard(__func__, [&] { return typed(h, out); });
}
GENIE_NCCL_EXPORT ncclResult_t ncclParamGetU8(ncclParamHandle_t h, uint8_t* out) {
  return guard(__func__, [&] { return typed(h, out); });
}
GENIE_NCCL_EXPORT ncclResult_t ncclParamGetU16(ncclParamHandle_t h, uint16_t* out) {
  return guard(__func__, [&] { return typed(h, out); });
}
GENIE_NCCL_EXPORT ncclResult_t ncclParamGetU32(ncclParamHandle_t h, uint32_t* out) {
  return guard(__func__, [&] { return typed(h, out); });
}
GENIE_NCCL_EXPORT ncclResult_t ncclParamGetU64(ncclParamHandle_t h, uint64_t* out) {
  return guard(__func__, [&] { return typed(h, out); });
}

GENIE_NCCL_EXPORT ncclResult_t ncclParamGetStr(ncclParamHandle_t h, const char** out) {
  return guard(__func__, [&]() -> Status {
    GENIE_ASSIGN_OR_RETURN(ncclParamHandle * p, handle_ok(h));
    GENIE_TRY(check_ptr(out, "out"));
    thread_local std::string value;  // valid until this thread's next call, as NCCL says
    value = config::global().text(p->key);
    *out = value.c_str();
    return Status::ok();
  });
}

// The value's bytes: an integer or boolean parameter as an int64_t, a number as a double, a string with its NUL.
GENIE_NCCL_EXPORT ncclResult_t ncclParamGet(ncclParamHandle_t h, void* out, int maxLen, int* len) {
  return guard(__func__, [&]() -> Status {
    GENIE_ASSIGN_OR_RETURN(ncclParamHandle * p, handle_ok(h));
    GENIE_TRY(check_ptr(len, "len"));
    std::vector<config::ParamInfo> all;
    const config::ParamInfo* info = find_param(p->key, &all);
    const std::string text = config::global().text(p->key);
    std::vector<char> bytes;
    if (info && (info->type == config::ParamType::kInt || info->type == config::ParamType::kBool)) {
      int64_t v = 0;
      GENIE_TRY(typed(h, &v));
      bytes.resize(sizeof(v));
      std::memcpy(bytes.data(), &v, sizeof(v));
    } else if (info && info->type == config::ParamType::kDouble) {
      double v = std::strtod(text.c_str(), nullptr);
      bytes.resize(sizeof(v));
      std::memcpy(bytes.data(), &v, sizeof(v));
    } else {
      bytes.assign(text.begin(), text.end());
      bytes.push_back('\0');
    }
    *len = static_cast<int>(bytes.size());
    if (maxLen < *len)
      return invalid_argument("maxLen " + std::to_string(maxLen) + " is smaller than the value's " +
                              std::to_string(*len) + " bytes");
    GENIE_TRY(check_ptr(out, "out"));
    std::memcpy(out, bytes.data(), bytes.size());
    return Status::ok();
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclParamGetParameter(const char* key, const char** value, int* valueLen) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(key, "key"));
    GENIE_TRY(check_ptr(value, "value"));
    std::vector<config::ParamInfo> all;
    const config::ParamInfo* p = find_param(key, &all);
    if (p == nullptr) return invalid_argument(std::string("key '") + key + "' is not a known parameter");
    thread_local std::string text;
    text = config::global().text(p->key);
    *value = text.c_str();
    if (valueLen) *valueLen = static_cast<int>(text.size());
    return Status::ok();
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclParamGetAllParameterKeys(const char*** table, int* tableLen) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(table, "table"));
    GENIE_TRY(check_ptr(tableLen, "tableLen"));
    thread_local std::vector<std::string> names;
    thread_local std::vector<const char*> ptrs;
    names.clear();
    ptrs.clear();
    for (const auto& p : config::Registry::instance().all()) names.push_back(p.env_name);
    for (const auto& n : names) ptrs.push_back(n.c_str());
    *table = ptrs.data();
    *tableLen = static_cast<int>(ptrs.size());
    return Status::ok();
  });
}

GENIE_NCCL_EXPORT void ncclParamDumpAll(void) {
  (void)guard("ncclParamDumpAll", []() -> Status {
    const config::Config& cfg = config::global();
    for (const auto& p : config::Registry::instance().all())
      nccl_debug(NcclDebugLevel::kInfo, -1, "%s = %s (%s)", p.env_name.c_str(), cfg.text(p.key).c_str(),
                 config::source_name(cfg.source(p.key)));
    return Status::ok();
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclSetEncryption(const ncclEncryptionConfig_t* config) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(config, "config"));
    ncclEncryptionConfig_t c = NCCL_ENCRYPTION_CONFIG_INITIALIZER;
    size_t size = 0;
    std::memcpy(&size, config, sizeof(size));
    if (size < offsetof(ncclEncryptionConfig_t, mode))
      return invalid_argument("config: ncclEncryptionConfig_t size " + std::to_string(size) + " is too small");
    std::memcpy(&c, config, std::min(size, sizeof(c)));
    if (c.magic != NCCL_API_MAGIC)
      return invalid_argument("config: not initialized with NCCL_ENCRYPTION_CONFIG_INITIALIZER");
    if (c.mode != NCCL_ENCRYPTION_MODE_NONE && c.mode != NCCL_ENCRYPTION_MODE_PSK)
      return invalid_argument("config: mode " + std::to_string(c.mode) + " is not an ncclEncryptionMode_t");
    if (c.mode == NCCL_ENCRYPTION_MODE_PSK && (c.psk == nullptr || *c.psk == '\0'))
      return invalid_argument("config: NCCL_ENCRYPTION_MODE_PSK needs a non-empty psk");
    set_encryption_mode(c.mode);
    nccl_debug(NcclDebugLevel::kInfo, -1,
               "ncclSetEncryption: mode %s (communicators within one host are unaffected; between hosts Genie "
               "refuses to start a communicator, as it cannot encrypt)",
               c.mode == NCCL_ENCRYPTION_MODE_PSK ? "PSK" : "none");
    return Status::ok();
  });
}

GENIE_NCCL_ALIAS(ncclResult_t, ncclParamBind, (ncclParamHandle_t*, const char*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclParamGetI8, (ncclParamHandle_t, int8_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclParamGetI16, (ncclParamHandle_t, int16_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclParamGetI32, (ncclParamHandle_t, int32_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclParamGetI64, (ncclParamHandle_t, int64_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclParamGetU8, (ncclParamHandle_t, uint8_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclParamGetU16, (ncclParamHandle_t, uint16_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclParamGetU32, (ncclParamHandle_t, uint32_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclParamGetU64, (ncclParamHandle_t, uint64_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclParamGetStr, (ncclParamHandle_t, const char**))
GENIE_NCCL_ALIAS(ncclResult_t, ncclParamGet, (ncclParamHandle_t, void*, int, int*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclParamGetParameter, (const char*, const char**, int*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclParamGetAllParameterKeys, (const char***, int*))
GENIE_NCCL_ALIAS(void, ncclParamDumpAll, (void))
GENIE_NCCL_ALIAS(ncclResult_t, ncclSetEncryption, (const ncclEncryptionConfig_t*))
