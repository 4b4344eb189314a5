// SPDX-License-Identifier: Apache-2.0
// CUPTI callback ids of the runtime and driver API (cupti_runtime_cbid.h, cupti_driver_cbid.h) by name.
#pragma once

#include <cupti.h>

#include <cstdint>

#include "genie/fakecuda/activity.hpp"

namespace genie::fakecuda::cupti {

/// The callback id of the entry point `name` as an API guard names it ("cudaLaunchKernel", "cuLaunchKernel");
/// 0 (CUPTI's INVALID) when CUPTI has none. The runtime's ids carry a version suffix (cudaLaunchKernel_v7000):
/// the newest id of the name is taken.
uint32_t cbid_of(ApiDomain domain, const char* name);

/// CUPTI's name of a callback id (cuptiGetCallbackName: "cudaLaunchKernel_v7000", "cuLaunchKernel"), nullptr when
/// unknown.
const char* cbid_name(CUpti_CallbackDomain domain, uint32_t cbid);

}  // namespace genie::fakecuda::cupti
