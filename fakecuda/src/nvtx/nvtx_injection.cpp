// SPDX-License-Identifier: Apache-2.0
// libgenie_nvtx.so: an NVTX injection library (NVTX_INJECTION64_PATH). NVTX v3 is header-only: every library
// that annotates (PyTorch's torch.cuda.nvtx, Megatron, NCCL-using programs) reads NVTX_INJECTION64_PATH on its
// first NVTX call, dlopens the library and calls InitializeInjectionNvtx2, which fills the callback tables. We
// record push/pop and start/end ranges at the calling thread's host time on Genie's clock, attributed to its
// current CUDA device; the report breaks each range down into compute, communication and idle time.
#include <nvtx3/nvToolsExt.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "genie/common/internal_scope.hpp"
#include "genie/fakecuda/runtime.hpp"

namespace {

using genie::fakecuda::Runtime;
using genie::SimTime;

// Range names, interned: the timeline keys labels by address until they are drained.
const char* intern(std::string s) {
  static std::mutex mu;
  static auto* names = new std::unordered_set<std::string>();  // never destroyed: records may outlive exit
  std::lock_guard lk(mu);
  return names->insert(std::move(s)).first->c_str();
}

std::string utf8(const wchar_t* w) {
  std::string out;
  if (!w) return out;
  for (; *w; ++w) {
    const auto c = static_cast<uint32_t>(*w);
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x110000) {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += '?';
    }
  }
  return out;
}

// What nvtxDomainCreate and nvtxDomainRegisterString hand out: the application only passes them back.
struct Domain {
  std::string name;
};
struct Registered {
  const char* name;
};

// Handles live until the process ends (the application may use one after nvtxDomainDestroy, and other threads'
// late records refer to them), kept in a list so they stay reachable rather than leaked.
template <class T>
T* keep(T* p) {
  static std::mutex mu;
  static auto* all = new std::vector<std::unique_ptr<void, void (*)(void*)>>();  // never destroyed
  std::lock_guard lk(mu);
  all->emplace_back(p, [](void* q) { delete static_cast<T*>(q); });
  return p;
}

const char* registered_name(nvtxStringHandle_t h) {
  return h ? reinterpret_cast<const Registered*>(h)->name : "";
}

// The range's name: the message of the attributes (ASCII, wide or registered), prefixed by a named domain.
const char* name_of(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* a) {
  std::string msg;
  constexpr size_t kNeeds = offsetof(nvtxEventAttributes_t, message) + sizeof(nvtxMessageValue_t);
  if (a && a->size >= kNeeds) {
    switch (a->messageType) {
      case NVTX_MESSAGE_TYPE_ASCII: msg = a->message.ascii ? a->message.ascii : ""; break;
      case NVTX_MESSAGE_TYPE_UNICODE: msg = utf8(a->message.unicode); break;
      case NVTX_MESSAGE_TYPE_REGISTERED: msg = registered_name(a->message.registered); break;
      default: break;
    }
  }
  if (msg.empty()) msg = "range";
  if (domain) msg = reinterpret_cast<const Domain*>(domain)->name + ": " + msg;
  return intern(std::move(msg));
}

struct Open {
  const char* name;
  SimTime start;
  int device;
};

// Where a range starts: the thread's host time and current device; no runtime yet (no CUDA call so far):
// nothing to attribute it to.
bool begin(const char* name, Open* o) {
  Runtime* rt = Runtime::existing();
  if (!rt || !rt->timeline().record_trace()) return false;
  genie::InternalScope internal;
  *o = Open{name, rt->clock().now(), rt->current_device()};
  return true;
}

void finish(const Open& o) {
  Runtime* rt = Runtime::existing();
  if (!rt) return;
  genie::InternalScope internal;
  rt->timeline().record_host(o.name, o.start, rt->clock().now(), genie::sched::OpKind::kRange, o.device);
}

// Push/pop ranges: a stack per thread and domain (nullptr: the default domain).
struct Stack {
  std::vector<Open> open;  // ranges whose begin() failed are kept with name nullptr, so levels stay right
};
thread_local std::unordered_map<const void*, Stack> t_stacks;

int push(nvtxDomainHandle_t domain, const char* name) {
  auto& st = t_stacks[domain].open;
  Open o{nullptr, SimTime::zero(), -1};
  if (!begin(name, &o)) o.name = nullptr;
  st.push_back(o);
  return static_cast<int>(st.size()) - 1;
}

int pop(nvtxDomainHandle_t domain) {
  auto it = t_stacks.find(domain);
  if (it == t_stacks.end() || it->second.open.empty()) return -1;  // NVTX: pop without a push
  const Open o = it->second.open.back();
  it->second.open.pop_back();
  if (o.name) finish(o);
  return static_cast<int>(it->second.open.size());
}

// Start/end ranges may end on another thread: process-wide, by id.
std::mutex g_mu;
std::unordered_map<nvtxRangeId_t, Open>* g_started = new std::unordered_map<nvtxRangeId_t, Open>();
nvtxRangeId_t g_next_id = 1;

nvtxRangeId_t start(const char* name) {
  Open o{};
  std::lock_guard lk(g_mu);
  const nvtxRangeId_t id = g_next_id++;
  if (begin(name, &o)) (*g_started)[id] = o;
  return id;
}

void end(nvtxRangeId_t id) {
  Open o{};
  {
    std::lock_guard lk(g_mu);
    auto it = g_started->find(id);
    if (it == g_started->end()) return;
    o = it->second;
    g_started->erase(it);
  }
  finish(o);
}

// --- the callbacks ---
int NVTX_API RangePushA(const char* m) { return push(nullptr, intern(m ? m : "range")); }
int NVTX_API RangePushW(const wchar_t* m) { return push(nullptr, intern(utf8(m))); }
int NVTX_API RangePushEx(const nvtxEventAttributes_t* a) { return push(nullptr, name_of(nullptr, a)); }
int NVTX_API RangePop() { return pop(nullptr); }
nvtxRangeId_t NVTX_API RangeStartA(const char* m) { return start(intern(m ? m : "range")); }
nvtxRangeId_t NVTX_API RangeStartW(const wchar_t* m) { return start(intern(utf8(m))); }
nvtxRangeId_t NVTX_API RangeStartEx(const nvtxEventAttributes_t* a) { return start(name_of(nullptr, a)); }
void NVTX_API RangeEnd(nvtxRangeId_t id) { end(id); }
void NVTX_API MarkEx(const nvtxEventAttributes_t*) {}
void NVTX_API MarkA(const char*) {}
void NVTX_API MarkW(const wchar_t*) {}
void NVTX_API NameCategoryA(uint32_t, const char*) {}
void NVTX_API NameCategoryW(uint32_t, const wchar_t*) {}
void NVTX_API NameOsThreadA(uint32_t, const char*) {}
void NVTX_API NameOsThreadW(uint32_t, const wchar_t*) {}

void NVTX_API DomainMarkEx(nvtxDomainHandle_t, const nvtxEventAttributes_t*) {}
nvtxRangeId_t NVTX_API DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return start(name_of(d, a));
}
void NVTX_API DomainRangeEnd(nvtxDomainHandle_t, nvtxRangeId_t id) { end(id); }
int NVTX_API DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) { return push(d, name_of(d, a)); }
int NVTX_API DomainRangePop(nvtxDomainHandle_t d) { return pop(d); }
nvtxResourceHandle_t NVTX_API DomainResourceCreate(nvtxDomainHandle_t, nvtxResourceAttributes_t*) { return nullptr; }
void NVTX_API DomainResourceDestroy(nvtxResourceHandle_t) {}
void NVTX_API DomainNameCategoryA(nvtxDomainHandle_t, uint32_t, const char*) {}
void NVTX_API DomainNameCategoryW(nvtxDomainHandle_t, uint32_t, const wchar_t*) {}
nvtxStringHandle_t NVTX_API DomainRegisterStringA(nvtxDomainHandle_t, const char* s) {
  return reinterpret_cast<nvtxStringHandle_t>(keep(new Registered{intern(s ? s : "")}));
}
nvtxStringHandle_t NVTX_API DomainRegisterStringW(nvtxDomainHandle_t, const wchar_t* s) {
  return reinterpret_cast<nvtxStringHandle_t>(keep(new Registered{intern(utf8(s))}));
}
nvtxDomainHandle_t NVTX_API DomainCreateA(const char* name) {
  return reinterpret_cast<nvtxDomainHandle_t>(keep(new Domain{name ? name : ""}));
}
nvtxDomainHandle_t NVTX_API DomainCreateW(const wchar_t* name) {
  return reinterpret_cast<nvtxDomainHandle_t>(keep(new Domain{utf8(name)}));
}
void NVTX_API DomainDestroy(nvtxDomainHandle_t) {}
void NVTX_API Initialize(const void*) {}  // nvtxInitialize: nothing to set up

template <class F>
void set(NvtxFunctionTable table, unsigned size, unsigned id, F fn) {
  if (table && id < size && table[id]) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
  if (!get) return 0;
  const auto* cb = static_cast<const NvtxExportTableCallbacks*>(get(NVTX_ETID_CALLBACKS));
  if (!cb || cb->struct_size < sizeof(NvtxExportTableCallbacks) || !cb->GetModuleFunctionTable) return 0;
  NvtxFunctionTable t = nullptr;
  unsigned n = 0;
  if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &t, &n)) {
    set(t, n, NVTX_CBID_CORE_MarkEx, MarkEx);
    set(t, n, NVTX_CBID_CORE_MarkA, MarkA);
    set(t, n, NVTX_CBID_CORE_MarkW, MarkW);
    set(t, n, NVTX_CBID_CORE_RangeStartEx, RangeStartEx);
    set(t, n, NVTX_CBID_CORE_RangeStartA, RangeStartA);
    set(t, n, NVTX_CBID_CORE_RangeStartW, RangeStartW);
    set(t, n, NVTX_CBID_CORE_RangeEnd, RangeEnd);
    set(t, n, NVTX_CBID_CORE_RangePushEx, RangePushEx);
    set(t, n, NVTX_CBID_CORE_RangePushA, RangePushA);
    set(t, n, NVTX_CBID_CORE_RangePushW, RangePushW);
    set(t, n, NVTX_CBID_CORE_RangePop, RangePop);
    set(t, n, NVTX_CBID_CORE_NameCategoryA, NameCategoryA);
    set(t, n, NVTX_CBID_CORE_NameCategoryW, NameCategoryW);
    set(t, n, NVTX_CBID_CORE_NameOsThreadA, NameOsThreadA);
    set(t, n, NVTX_CBID_CORE_NameOsThreadW, NameOsThreadW);
  } else {
    return 0;
  }
  t = nullptr;
  n = 0;
  if (cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &t, &n)) {
    set(t, n, NVTX_CBID_CORE2_DomainMarkEx, DomainMarkEx);
    set(t, n, NVTX_CBID_CORE2_DomainRangeStartEx, DomainRangeStartEx);
    set(t, n, NVTX_CBID_CORE2_DomainRangeEnd, DomainRangeEnd);
    set(t, n, NVTX_CBID_CORE2_DomainRangePushEx, DomainRangePushEx);
    set(t, n, NVTX_CBID_CORE2_DomainRangePop, DomainRangePop);
    set(t, n, NVTX_CBID_CORE2_DomainResourceCreate, DomainResourceCreate);
    set(t, n, NVTX_CBID_CORE2_DomainResourceDestroy, DomainResourceDestroy);
    set(t, n, NVTX_CBID_CORE2_DomainNameCategoryA, DomainNameCategoryA);
    set(t, n, NVTX_CBID_CORE2_DomainNameCategoryW, DomainNameCategoryW);
    set(t, n, NVTX_CBID_CORE2_DomainRegisterStringA, DomainRegisterStringA);
    set(t, n, NVTX_CBID_CORE2_DomainRegisterStringW, DomainRegisterStringW);
    set(t, n, NVTX_CBID_CORE2_DomainCreateA, DomainCreateA);
    set(t, n, NVTX_CBID_CORE2_DomainCreateW, DomainCreateW);
    set(t, n, NVTX_CBID_CORE2_DomainDestroy, DomainDestroy);
    set(t, n, NVTX_CBID_CORE2_Initialize, Initialize);
  }
  return 1;
}
