// SPDX-License-Identifier: Apache-2.0
// State shared by the NVML exports of libnvidia-ml.so.1 (nvml_api.cpp and the not-supported table).
#pragma once

namespace genie::fakecuda::nvml {

/// Whether nvmlInit* has succeeded more often than nvmlShutdown was called (NVML's init is reference counted).
bool initialized() noexcept;

}  // namespace genie::fakecuda::nvml
