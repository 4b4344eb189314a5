// SPDX-License-Identifier: Apache-2.0
// The legacy (v7-style) cuDNN descriptors: tensors, filters, convolutions, activations, each kind a set of live
// objects that the API functions look up by pointer (cudnn_descriptors.cpp defines them and their API;
// cudnn_legacy.cpp's convolution and batch-norm calls read them).
#pragma once

#include <cudnn.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "dnn/conv_engines.hpp"
#include "dnn/dnn_common.hpp"

namespace genie::fakecuda::dnn {

struct LegacyTensor {
  TensorInfo info;
  bool set = false;
};
struct LegacyFilter {
  TensorInfo info;  ///< dims [K, C/groups, spatial...], strides from the format
  int format = CUDNN_TENSOR_NCHW;
  bool set = false;
};
struct LegacyConv {
  ConvParams params;
  int mode = CUDNN_CROSS_CORRELATION;
  int compute_type = CUDNN_DATA_FLOAT;
  int groups = 1;
  int math = CUDNN_DEFAULT_MATH;
  int reorder = CUDNN_DEFAULT_REORDER;
  bool set = false;
};
struct LegacyActivation {
  int mode = CUDNN_ACTIVATION_RELU;
  int nan = CUDNN_NOT_PROPAGATE_NAN;
  double coef = 0;
};

/// Live descriptors of one kind (pointer identity; never dereferenced before lookup).
template <class T>
class Live {
 public:
  T* create() {
    auto p = std::make_unique<T>();
    T* raw = p.get();
    std::lock_guard lk(mu_);
    objects_.emplace(raw, std::move(p));
    return raw;
  }
  bool destroy(const void* p) {
    std::lock_guard lk(mu_);
    return objects_.erase(p) > 0;
  }
  T* find(const void* p) {
    std::lock_guard lk(mu_);
    auto it = objects_.find(p);
    return it == objects_.end() ? nullptr : it->second.get();
  }

 private:
  std::mutex mu_;
  std::map<const void*, std::unique_ptr<T>> objects_;
};

/// The live descriptors of each kind (never destroyed: used from atexit handlers).
Live<LegacyTensor>& tensors();
Live<LegacyFilter>& filters();
Live<LegacyConv>& convs();
Live<LegacyActivation>& activations();

/// cudnnCreate*Descriptor: a new descriptor of `live` in *out (`what` names the argument).
template <class T, class Handle>
cudnnStatus_t create_in(Live<T>& live, Handle* out, const char* fn, const char* what) {
  return guard(fn, [&] {
    if (out == nullptr) return fail(fn, std::string(what) + " is null", CUDNN_STATUS_BAD_PARAM_NULL_POINTER);
    *out = reinterpret_cast<Handle>(live.create());
    return CUDNN_STATUS_SUCCESS;
  });
}

/// cudnnDestroy*Descriptor: destroying null is a no-op, as in cuDNN; anything but a live descriptor is refused.
template <class T>
cudnnStatus_t destroy_in(Live<T>& live, const void* d, const char* fn, const char* what) {
  if (d == nullptr) return CUDNN_STATUS_SUCCESS;
  return live.destroy(d) ? CUDNN_STATUS_SUCCESS
                         : fail(fn, std::string(what) + " is not a live descriptor", CUDNN_STATUS_BAD_PARAM);
}

/// Strides of a packed tensor of `dims` (N, C, spatial...), channels innermost when `channels_last`.
std::vector<int64_t> packed_strides(const std::vector<int64_t>& dims, bool channels_last);

inline bool known_dtype(int t) { return dtype_bytes(t) > 0; }

}  // namespace genie::fakecuda::dnn
