// SPDX-License-Identifier: Apache-2.0
// libcupti.so.13's emulated entry points: the activity API Kineto (torch.profiler) uses, the callback API subset it
// subscribes to, timestamps, versions and errors. Arguments are checked here (a bad one is a CUPTI error code and
// a warning naming it, never a crash); the state is CuptiRecorder's. Exports not emulated: cupti_unsupported.cpp.
#include <cupti.h>

#include <cstring>
#include <mutex>
#include <new>

#include "cupti_cbid.hpp"
#include "cupti_recorder.hpp"
#include "genie/common/internal_scope.hpp"
#include "genie/common/log.hpp"
#include "genie/fakecuda/driver_api.hpp"

#define GENIE_CUPTI_EXPORT extern "C" __attribute__((visibility("default")))

namespace genie::fakecuda::cupti {
namespace {

thread_local CUptiResult t_last_error = CUPTI_SUCCESS;

// Runs an entry point's body: nothing escapes, errors are kept for cuptiGetLastError, and the runtime's API calls
// made on CUPTI's behalf are not reported to the profiler as the program's (CuptiRecorder::InternalCall).
template <class F>
CUptiResult guard(const char* fn, F&& body) noexcept {
  InternalScope internal;
  CuptiRecorder::InternalCall quiet;
  CUptiResult r;
  try {
    r = body(fn);
  } catch (const std::bad_alloc&) {
    r = CUPTI_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    GENIE_LOG_ERROR(log::kFakecuda, "{}: internal error: {}", fn, e.what());
    r = CUPTI_ERROR_UNKNOWN;
  } catch (...) {
    GENIE_LOG_ERROR(log::kFakecuda, "{}: internal error", fn);
    r = CUPTI_ERROR_UNKNOWN;
  }
  if (r != CUPTI_SUCCESS) t_last_error = r;
  return r;
}

// Logs (warn) an argument rejected at the boundary and returns `e`.
CUptiResult reject(const char* fn, const char* what, CUptiResult e = CUPTI_ERROR_INVALID_PARAMETER) {
  GENIE_LOG_WARN(log::kFakecuda, "{}: invalid {}", fn, what);
  return e;
}

bool valid_external_kind(CUpti_ExternalCorrelationKind k) {
  return k > CUPTI_EXTERNAL_CORRELATION_KIND_INVALID && k < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE;
}

const char* result_name(CUptiResult r) {
  switch (r) {
    case CUPTI_SUCCESS: return "CUPTI_SUCCESS";
    case CUPTI_ERROR_INVALID_PARAMETER: return "CUPTI_ERROR_INVALID_PARAMETER";
    case CUPTI_ERROR_INVALID_DEVICE: return "CUPTI_ERROR_INVALID_DEVICE";
    case CUPTI_ERROR_INVALID_CONTEXT: return "CUPTI_ERROR_INVALID_CONTEXT";
    case CUPTI_ERROR_INVALID_EVENT_DOMAIN_ID: return "CUPTI_ERROR_INVALID_EVENT_DOMAIN_ID";
    case CUPTI_ERROR_INVALID_EVENT_ID: return "CUPTI_ERROR_INVALID_EVENT_ID";
    case CUPTI_ERROR_INVALID_EVENT_NAME: return "CUPTI_ERROR_INVALID_EVENT_NAME";
    case CUPTI_ERROR_INVALID_OPERATION: return "CUPTI_ERROR_INVALID_OPERATION";
    case CUPTI_ERROR_OUT_OF_MEMORY: return "CUPTI_ERROR_OUT_OF_MEMORY";
    case CUPTI_ERROR_HARDWARE: return "CUPTI_ERROR_HARDWARE";
    case CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT: return "CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT";
    case CUPTI_ERROR_API_NOT_IMPLEMENTED: return "CUPTI_ERROR_API_NOT_IMPLEMENTED";
    case CUPTI_ERROR_MAX_LIMIT_REACHED: return "CUPTI_ERROR_MAX_LIMIT_REACHED";
    case CUPTI_ERROR_NOT_READY: return "CUPTI_ERROR_NOT_READY";
    case CUPTI_ERROR_NOT_COMPATIBLE: return "CUPTI_ERROR_NOT_COMPATIBLE";
    case CUPTI_ERROR_NOT_INITIALIZED: return "CUPTI_ERROR_NOT_INITIALIZED";
    case CUPTI_ERROR_INVALID_METRIC_ID: return "CUPTI_ERROR_INVALID_METRIC_ID";
    case CUPTI_ERROR_INVALID_METRIC_NAME: return "CUPTI_ERROR_INVALID_METRIC_NAME";
    case CUPTI_ERROR_QUEUE_EMPTY: return "CUPTI_ERROR_QUEUE_EMPTY";
    case CUPTI_ERROR_INVALID_HANDLE: return "CUPTI_ERROR_INVALID_HANDLE";
    case CUPTI_ERROR_INVALID_STREAM: return "CUPTI_ERROR_INVALID_STREAM";
    case CUPTI_ERROR_INVALID_KIND: return "CUPTI_ERROR_INVALID_KIND";
    case CUPTI_ERROR_INVALID_EVENT_VALUE: return "CUPTI_ERROR_INVALID_EVENT_VALUE";
    case CUPTI_ERROR_DISABLED: return "CUPTI_ERROR_DISABLED";
    case CUPTI_ERROR_INVALID_MODULE: return "CUPTI_ERROR_INVALID_MODULE";
    case CUPTI_ERROR_INVALID_METRIC_VALUE: return "CUPTI_ERROR_INVALID_METRIC_VALUE";
    case CUPTI_ERROR_HARDWARE_BUSY: return "CUPTI_ERROR_HARDWARE_BUSY";
    case CUPTI_ERROR_NOT_SUPPORTED: return "CUPTI_ERROR_NOT_SUPPORTED";
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: return "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
    case CUPTI_ERROR_UNKNOWN: return "CUPTI_ERROR_UNKNOWN";
    default: return nullptr;
  }
}

// Activity attributes: what a client sets is kept and read back; Genie's buffers are the client's own.
struct Attributes {
  std::mutex mu;
  size_t device_buffer_size = size_t{8} << 20;
  size_t values[CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_DEVICE_GRAPHS + 1] = {};
  bool set[CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_DEVICE_GRAPHS + 1] = {};
};
Attributes& attributes() {
  static Attributes* a = new Attributes();
  return *a;
}
// Bytes of an attribute's value: size_t for sizes and limits, uint8_t for switches.
size_t attribute_size(CUpti_ActivityAttribute a) {
  switch (a) {
    case CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER:
    case CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED:
    case CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER:
      return sizeof(uint8_t);
    default:
      return sizeof(size_t);
  }
}

}  // namespace
}  // namespace genie::fakecuda::cupti

using genie::fakecuda::cupti::CuptiRecorder;
using genie::fakecuda::cupti::guard;
using genie::fakecuda::cupti::reject;

// --- versions, errors, time ---------------------------------------------------------------------------------
GENIE_CUPTI_EXPORT CUptiResult cuptiGetVersion(uint32_t* version) {
  return guard(__func__, [&](const char* fn) {
    if (version == nullptr) return reject(fn, "version (null)");
    *version = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char** str) {
  return guard(__func__, [&](const char* fn) {
    if (str == nullptr) return reject(fn, "str (null)");
    const char* s = genie::fakecuda::cupti::result_name(result);
    if (s == nullptr) return reject(fn, "result");
    *str = s;
    return CUPTI_SUCCESS;
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiGetLastError(void) {
  CUptiResult r = genie::fakecuda::cupti::t_last_error;
  genie::fakecuda::cupti::t_last_error = CUPTI_SUCCESS;
  return r;
}

GENIE_CUPTI_EXPORT CUptiResult cuptiGetTimestamp(uint64_t* timestamp) {
  return guard(__func__, [&](const char* fn) {
    if (timestamp == nullptr) return reject(fn, "timestamp (null)");
    *timestamp = CuptiRecorder::instance().timestamp();
    return CUPTI_SUCCESS;
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc funcTimestamp) {
  return guard(__func__, [&](const char*) {
    CuptiRecorder::instance().register_timestamp_callback(funcTimestamp);
    return CUPTI_SUCCESS;
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type) {
  return guard(__func__, [&](const char* fn) {
    if (type != CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT && type != CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
      return reject(fn, "type");
    CuptiRecorder::instance().set_thread_id_type(type);
    return CUPTI_SUCCESS;
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiGetThreadIdType(CUpti_ActivityThreadIdType* type) {
  return guard(__func__, [&](const char* fn) {
    if (type == nullptr) return reject(fn, "type (null)");
    *type = CuptiRecorder::instance().thread_id_type();
    return CUPTI_SUCCESS;
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiGetDeviceId(CUcontext context, uint32_t* deviceId) {
  return guard(__func__, [&](const char* fn) {
    if (deviceId == nullptr) return reject(fn, "deviceId (null)");
    CUdevice d = 0;
    if (genie::fakecuda::drv::cuCtxGetDevice_v2(&d, context) != CUDA_SUCCESS)
      return reject(fn, "context", CUPTI_ERROR_INVALID_CONTEXT);
    *deviceId = static_cast<uint32_t>(d);
    return CUPTI_SUCCESS;
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiGetContextId(CUcontext context, uint32_t* contextId) {
  return guard(__func__, [&](const char* fn) {
    if (contextId == nullptr) return reject(fn, "contextId (null)");
    CUdevice d = 0;
    if (context == nullptr || genie::fakecuda::drv::cuCtxGetDevice_v2(&d, context) != CUDA_SUCCESS)
      return reject(fn, "context", CUPTI_ERROR_INVALID_CONTEXT);
    *contextId = static_cast<uint32_t>(d) + 1;  // the contextId of the device's records: one primary context each
    return CUPTI_SUCCESS;
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiFinalize(void) {
  return guard(__func__, [&](const char* fn) {
    CuptiRecorder::instance().finalize();
    return CUPTI_SUCCESS;
  });
}

// --- activity API -------------------------------------------------------------------------------------------
GENIE_CUPTI_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind) {
  return guard(__func__, [&](const char* fn) {
    if (!CuptiRecorder::supported_kind(kind)) {
      GENIE_LOG_WARN(genie::log::kFakecuda, "cuptiActivityEnable: activity kind {} is not emulated",
                     static_cast<int>(kind));
      return CUPTI_ERROR_NOT_COMPATIBLE;
    }
    return CuptiRecorder::instance().enable(kind, true);
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind) {
  return guard(__func__, [&](const char* fn) {
    if (!CuptiRecorder::supported_kind(kind)) return reject(fn, "kind", CUPTI_ERROR_NOT_COMPATIBLE);
    return CuptiRecorder::instance().enable(kind, false);
  });
}

// Per-context enabling: every device has one primary context, so a kind on for one is on for all.
GENIE_CUPTI_EXPORT CUptiResult cuptiActivityEnableContext(CUcontext context, CUpti_ActivityKind kind) {
  return guard(__func__, [&](const char* fn) {
    if (context == nullptr) return reject(fn, "context (null)", CUPTI_ERROR_INVALID_CONTEXT);
    if (!CuptiRecorder::supported_kind(kind)) return reject(fn, "kind", CUPTI_ERROR_NOT_COMPATIBLE);
    return CuptiRecorder::instance().enable(kind, true);
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiActivityDisableContext(CUcontext context, CUpti_ActivityKind kind) {
  return guard(__func__, [&](const char* fn) {
    if (context == nullptr) return reject(fn, "context (null)", CUPTI_ERROR_INVALID_CONTEXT);
    if (!CuptiRecorder::supported_kind(kind)) return reject(fn, "kind", CUPTI_ERROR_NOT_COMPATIBLE);
    return CuptiRecorder::instance().enable(kind, false);
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                                                             CUpti_BuffersCallbackCompleteFunc funcBufferCompleted) {
  return guard(__func__, [&](const char* fn) {
    if (funcBufferRequested == nullptr) return reject(fn, "funcBufferRequested (null)");
    if (funcBufferCompleted == nullptr) return reject(fn, "funcBufferCompleted (null)");
    return CuptiRecorder::instance().register_buffers(funcBufferRequested, funcBufferCompleted);
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t validBufferSizeBytes,
                                                         CUpti_Activity** record) {
  return guard(__func__, [&](const char* fn) {
    if (buffer == nullptr) return reject(fn, "buffer (null)");
    if (record == nullptr) return reject(fn, "record (null)");
    size_t offset = 0;
    if (*record != nullptr) {
      const auto* cur = reinterpret_cast<const uint8_t*>(*record);
      if (cur < buffer || cur >= buffer + validBufferSizeBytes) return reject(fn, "record (not in buffer)");
      const size_t n = genie::fakecuda::cupti::activity_record_size((*record)->kind);
      if (n == 0) return reject(fn, "record (unknown kind)", CUPTI_ERROR_INVALID_KIND);
      offset = static_cast<size_t>(cur - buffer) + ((n + 7) & ~size_t{7});
    }
    if (offset + sizeof(CUpti_Activity) > validBufferSizeBytes) {
      *record = nullptr;
      return CUPTI_ERROR_MAX_LIMIT_REACHED;  // the end: not an error worth a warning
    }
    auto* next = reinterpret_cast<CUpti_Activity*>(buffer + offset);
    const size_t n = genie::fakecuda::cupti::activity_record_size(next->kind);
    if (n == 0 || offset + n > validBufferSizeBytes) {
      *record = nullptr;
      return reject(fn, "buffer contents (not records Genie wrote)", CUPTI_ERROR_INVALID_KIND);
    }
    *record = next;
    return CUPTI_SUCCESS;
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag) {
  return guard(__func__, [&](const char* fn) { return CuptiRecorder::instance().flush_all(flag); });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiActivityFlush(CUcontext, uint32_t, uint32_t flag) {
  return guard(__func__, [&](const char* fn) { return CuptiRecorder::instance().flush_all(flag); });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  return guard(__func__, [&](const char* fn) {
    if (dropped == nullptr) return reject(fn, "dropped (null)");
    *dropped = CuptiRecorder::instance().dropped();
    return CUPTI_SUCCESS;
  });
}

/// The argument checks cuptiActivitySetAttribute and GetAttribute share; the attribute's size in *n.
static CUptiResult check_attribute(const char* fn, CUpti_ActivityAttribute attr, const size_t* valueSize, const void* value,
                            size_t* n) {
  if (valueSize == nullptr) return reject(fn, "valueSize (null)");
  if (value == nullptr) return reject(fn, "value (null)");
  if (attr < 0 || attr > CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE_DEVICE_GRAPHS) return reject(fn, "attr");
  *n = genie::fakecuda::cupti::attribute_size(attr);
  if (*valueSize < *n) return reject(fn, "valueSize", CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT);
  return CUPTI_SUCCESS;
}

GENIE_CUPTI_EXPORT CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute attr, size_t* valueSize,
                                                        void* value) {
  return guard(__func__, [&](const char* fn) {
    size_t n = 0;
    if (CUptiResult r = check_attribute(fn, attr, valueSize, value, &n); r != CUPTI_SUCCESS) return r;
    auto& a = genie::fakecuda::cupti::attributes();
    std::lock_guard lk(a.mu);
    size_t v = 0;
    std::memcpy(&v, value, n);
    a.values[attr] = v;
    a.set[attr] = true;
    return CUPTI_SUCCESS;
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiActivityGetAttribute(CUpti_ActivityAttribute attr, size_t* valueSize,
                                                        void* value) {
  return guard(__func__, [&](const char* fn) {
    size_t n = 0;
    if (CUptiResult r = check_attribute(fn, attr, valueSize, value, &n); r != CUPTI_SUCCESS) return r;
    auto& a = genie::fakecuda::cupti::attributes();
    std::lock_guard lk(a.mu);
    size_t v = a.set[attr] ? a.values[attr] : (attr == CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE ? a.device_buffer_size : 0);
    std::memcpy(value, &v, n);
    *valueSize = n;
    return CUPTI_SUCCESS;
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                                     uint64_t id) {
  return guard(__func__, [&](const char* fn) {
    if (!genie::fakecuda::cupti::valid_external_kind(kind)) return reject(fn, "kind");
    CuptiRecorder::instance().push_external(kind, id);
    return CUPTI_SUCCESS;
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                                    uint64_t* lastId) {
  return guard(__func__, [&](const char* fn) {
    if (!genie::fakecuda::cupti::valid_external_kind(kind)) return reject(fn, "kind");
    if (!CuptiRecorder::instance().pop_external(kind, lastId))
      return reject(fn, "pop (no external id was pushed)", CUPTI_ERROR_QUEUE_EMPTY);
    return CUPTI_SUCCESS;
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable) {
  return guard(__func__, [&](const char* fn) {
    if (cbid == 0 || cbid >= CUPTI_RUNTIME_TRACE_CBID_SIZE) return reject(fn, "cbid");
    CuptiRecorder::instance().enable_api_record(genie::fakecuda::ApiDomain::kRuntime, cbid, enable != 0);
    return CUPTI_SUCCESS;
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable) {
  return guard(__func__, [&](const char* fn) {
    if (cbid == 0 || cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE) return reject(fn, "cbid");
    CuptiRecorder::instance().enable_api_record(genie::fakecuda::ApiDomain::kDriver, cbid, enable != 0);
    return CUPTI_SUCCESS;
  });
}

// Switches of record fields Genie does not write (CUDA event records, queued/submitted times): accepted, and
// nothing changes.
GENIE_CUPTI_EXPORT CUptiResult cuptiActivityEnableCudaEventDeviceTimestamps(uint8_t) {
  return guard(__func__, [&](const char* fn) { return CUPTI_SUCCESS; });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiActivityEnableLatencyTimestamps(uint8_t) {
  return guard(__func__, [&](const char* fn) { return CUPTI_SUCCESS; });
}

// --- callback API -------------------------------------------------------------------------------------------
GENIE_CUPTI_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                             void* userdata) {
  return guard(__func__, [&](const char* fn) {
    if (subscriber == nullptr) return reject(fn, "subscriber (null)");
    if (callback == nullptr) return reject(fn, "callback (null)");
    return CuptiRecorder::instance().subscribe(subscriber, callback, userdata);
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber) {
  return guard(__func__, [&](const char* fn) {
    CUptiResult r = CuptiRecorder::instance().unsubscribe(subscriber);
    return r == CUPTI_SUCCESS ? r : reject(fn, "subscriber", r);
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                                  CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  return guard(__func__, [&](const char* fn) {
    CUptiResult r = CuptiRecorder::instance().enable_callback(enable != 0, subscriber, domain, cbid);
    return r == CUPTI_SUCCESS ? r : reject(fn, "subscriber, domain or cbid", r);
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                                CUpti_CallbackDomain domain) {
  return guard(__func__, [&](const char* fn) {
    CUptiResult r = CuptiRecorder::instance().enable_domain(enable != 0, subscriber, domain);
    return r == CUPTI_SUCCESS ? r : reject(fn, "subscriber or domain", r);
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle subscriber) {
  return guard(__func__, [&](const char* fn) {
    for (CUpti_CallbackDomain d : {CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_RESOURCE,
                                   CUPTI_CB_DOMAIN_SYNCHRONIZE, CUPTI_CB_DOMAIN_NVTX, CUPTI_CB_DOMAIN_STATE}) {
      CUptiResult r = CuptiRecorder::instance().enable_domain(enable != 0, subscriber, d);
      if (r != CUPTI_SUCCESS) return reject(fn, "subscriber", r);
    }
    return CUPTI_SUCCESS;
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiGetCallbackState(uint32_t* enable, CUpti_SubscriberHandle subscriber,
                                                    CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  return guard(__func__, [&](const char* fn) {
    if (enable == nullptr) return reject(fn, "enable (null)");
    CUptiResult r = CuptiRecorder::instance().callback_state(enable, subscriber, domain, cbid);
    return r == CUPTI_SUCCESS ? r : reject(fn, "subscriber, domain or cbid", r);
  });
}

GENIE_CUPTI_EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid, const char** name) {
  return guard(__func__, [&](const char* fn) {
    if (name == nullptr) return reject(fn, "name (null)");
    const char* n = genie::fakecuda::cupti::cbid_name(domain, cbid);
    if (n == nullptr) return reject(fn, "domain or cbid");
    *name = n;
    return CUPTI_SUCCESS;
  });
}
