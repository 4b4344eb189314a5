// SPDX-License-Identifier: Apache-2.0
// Name <-> callback id tables built once from cupti_cbid_names.inc (generated from the toolkit's headers).
#include "cupti_cbid.hpp"

#include <cctype>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace genie::fakecuda::cupti {

namespace {

struct Tables {
  std::unordered_map<std::string, uint32_t> by_name[2];  // [ApiDomain]: function name -> newest id
  std::vector<const char*> names[2];                     // [ApiDomain]: id -> CUPTI's name
};

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel" (the version suffix: _v and four or more digits).
std::string function_name(std::string_view s) {
  const size_t v = s.rfind("_v");
  if (v == std::string_view::npos || s.size() - v - 2 < 4) return std::string(s);
  for (size_t i = v + 2; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return std::string(s);
  return std::string(s.substr(0, v));
}

const Tables& tables() {
  static const Tables t = [] {
    Tables out;
    out.names[0].assign(CUPTI_RUNTIME_TRACE_CBID_SIZE, nullptr);
    out.names[1].assign(CUPTI_DRIVER_TRACE_CBID_SIZE, nullptr);
    auto add = [&](int d, const char* name, uint32_t cbid) {
      if (cbid >= out.names[d].size()) return;
      out.names[d][cbid] = name;
      auto& slot = out.by_name[d][d == 0 ? function_name(name) : std::string(name)];
      if (cbid > slot) slot = cbid;
    };
#define GENIE_CUPTI_RT(n) add(0, #n, CUPTI_RUNTIME_TRACE_CBID_##n);
#define GENIE_CUPTI_DRV(n) add(1, #n, CUPTI_DRIVER_TRACE_CBID_##n);
#include "cupti_cbid_names.inc"
#undef GENIE_CUPTI_RT
#undef GENIE_CUPTI_DRV
    return out;
  }();
  return t;
}

}  // namespace

uint32_t cbid_of(ApiDomain domain, const char* name) {
  if (name == nullptr) return 0;
  const int d = domain == ApiDomain::kRuntime ? 0 : 1;
  std::string_view n(name);
  if (n.rfind("impl_", 0) == 0) n.remove_prefix(5);  // cudart's shared bodies of a call and its _ptsz twin
  // CUDA 13's <<<>>> enters through __cudaLaunchKernel (cbid 505), which Kineto before CUDA 13 names "INVALID" and
  // draws no launch arrow from: reported as the cudaLaunchKernel it stands for.
  if (n == "__cudaLaunchKernel") n = "cudaLaunchKernel";
  const auto& map = tables().by_name[d];
  auto it = map.find(std::string(n));
  return it == map.end() ? 0 : it->second;
}

const char* cbid_name(CUpti_CallbackDomain domain, uint32_t cbid) {
  int d;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) d = 0;
  else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) d = 1;
  else return nullptr;
  const auto& names = tables().names[d];
  return cbid < names.size() ? names[cbid] : nullptr;
}

}  // namespace genie::fakecuda::cupti
