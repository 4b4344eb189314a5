// SPDX-License-Identifier: Apache-2.0
// Driver events (cuEvent*, cuStreamWaitEvent): the runtime's events, so a CUevent and a cudaEvent_t are the same
// object (as on a GPU, where the runtime's event is the driver's) and carry virtual times. Triton's benchmarking and
// JITs that time their kernels with the driver API get the modelled durations.
#include "driver_common.hpp"

namespace genie::fakecuda::drv {
namespace {
using detail::guard;
using detail::reject;
using detail::to_cu;

// CU_EVENT_DEFAULT, BLOCKING_SYNC, DISABLE_TIMING, INTERPROCESS: the same bits as the runtime's cudaEvent* flags.
constexpr unsigned kEventFlags = CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS;

Event* event_of(Runtime* r, CUevent h) { return r->resolve_event(static_cast<const void*>(h)); }

CUresult record(const char* fn, CUevent h, CUstream stream, unsigned flags, bool ptds) {
  if (flags & ~static_cast<unsigned>(CU_EVENT_RECORD_EXTERNAL)) return reject(fn, "flags");
  GENIE_CU_RT(r);
  Event* e = event_of(r, h);
  if (e == nullptr) return reject(fn, "hEvent", CUDA_ERROR_INVALID_HANDLE);
  GENIE_CU_STREAM(s, r, stream, ptds);
  return to_cu(r->record_event(*e, *s), CUDA_ERROR_INVALID_HANDLE);
}

CUresult wait(const char* fn, CUstream stream, CUevent h, unsigned flags, bool ptds) {
  if (flags & ~static_cast<unsigned>(CU_EVENT_WAIT_EXTERNAL)) return reject(fn, "Flags");
  GENIE_CU_RT(r);
  GENIE_CU_STREAM(s, r, stream, ptds);
  Event* e = event_of(r, h);
  if (e == nullptr) return reject(fn, "hEvent", CUDA_ERROR_INVALID_HANDLE);
  return to_cu(r->wait_event(*s, *e), CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
}
}  // namespace

CUresult cuEventCreate(CUevent* phEvent, unsigned int Flags) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (phEvent == nullptr) return reject(fn, "phEvent");
    if (Flags & ~kEventFlags) return reject(fn, "Flags");
    if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING)) return reject(fn, "Flags");
    GENIE_CU_RT(r);
    GENIE_CU_CTX(c, r);
    (void)c;
    *phEvent = reinterpret_cast<CUevent>(r->create_event(Flags));
    return CUDA_SUCCESS;
  });
}

CUresult cuEventDestroy_v2(CUevent hEvent) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    Event* e = event_of(r, hEvent);
    if (e == nullptr) return reject(fn, "hEvent", CUDA_ERROR_INVALID_HANDLE);
    return to_cu(r->destroy_event(e), CUDA_ERROR_INVALID_HANDLE);
  });
}

CUresult cuEventRecord(CUevent hEvent, CUstream hStream) {
  return guard(__func__, [&](const char* fn) { return record(fn, hEvent, hStream, 0, false); });
}
CUresult cuEventRecord_ptsz(CUevent hEvent, CUstream hStream) {
  return guard(__func__, [&](const char* fn) { return record(fn, hEvent, hStream, 0, true); });
}
CUresult cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags) {
  return guard(__func__, [&](const char* fn) { return record(fn, hEvent, hStream, flags, false); });
}
CUresult cuEventRecordWithFlags_ptsz(CUevent hEvent, CUstream hStream, unsigned int flags) {
  return guard(__func__, [&](const char* fn) { return record(fn, hEvent, hStream, flags, true); });
}

CUresult cuEventQuery(CUevent hEvent) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    Event* e = event_of(r, hEvent);
    if (e == nullptr) return reject(fn, "hEvent", CUDA_ERROR_INVALID_HANDLE);
    return to_cu(r->query_event(*e));
  });
}

CUresult cuEventSynchronize(CUevent hEvent) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    GENIE_CU_RT(r);
    Event* e = event_of(r, hEvent);
    if (e == nullptr) return reject(fn, "hEvent", CUDA_ERROR_INVALID_HANDLE);
    return to_cu(r->synchronize_event(*e));
  });
}

CUresult cuEventElapsedTime_v2(float* pMilliseconds, CUevent hStart, CUevent hEnd) {
  return guard(__func__, [&](const char* fn) -> CUresult {
    if (pMilliseconds == nullptr) return reject(fn, "pMilliseconds");
    GENIE_CU_RT(r);
    Event* a = event_of(r, hStart);
    Event* b = event_of(r, hEnd);
    if (a == nullptr || b == nullptr) return reject(fn, a ? "hEnd" : "hStart", CUDA_ERROR_INVALID_HANDLE);
    auto v = r->elapsed_ms(*a, *b);
    if (!v.is_ok()) return to_cu(v.status(), CUDA_ERROR_INVALID_HANDLE);
    *pMilliseconds = v.value();
    return CUDA_SUCCESS;
  });
}

CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  return guard(__func__, [&](const char* fn) { return wait(fn, hStream, hEvent, Flags, false); });
}
CUresult cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent, unsigned int Flags) {
  return guard(__func__, [&](const char* fn) { return wait(fn, hStream, hEvent, Flags, true); });
}

}  // namespace genie::fakecuda::drv
