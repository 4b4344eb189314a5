// SPDX-License-Identifier: Apache-2.0
// libnccl.so.2, part 1: version, ids, errors, communicators, memory, registration and the device API, with their
// pncclXxx aliases (collectives, reduction operators and groups: nccl_api_coll.cpp). Arguments are checked before
// any state is touched (NCCL's ArgsCheck/CommCheck); nothing throws across this boundary.
#include <nccl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>

#include "bootstrap.hpp"
#include "comm_handle.hpp"
#include "communicator.hpp"
#include "genie/common/config.hpp"
#include "genie/fakecuda/runtime.hpp"
#include "group.hpp"
#include "nccl_debug.hpp"
#include "one_sided.hpp"
#include "peer_memory.hpp"
#include "nccl_api_support.hpp"
#include "shim_errors.hpp"

namespace genie::shim {

std::chrono::milliseconds bootstrap_timeout();
std::string bootstrap_addr();
double scalar_from_bytes(const void* p, netsim::DataType dt);

namespace {

constexpr int kNcclVersionCode = NCCL_VERSION_CODE;  // 2.32.6, the API served in full: clients gate features on it

const config::Param<int64_t> kLaunchOverheadNs{
    "shim.launch_overhead_ns",
    5000,
    "Modelled host time of one NCCL call that launches work (virtual mode), in ns. Default: the 5-10 us per "
    "launch issue #8 states for real NCCL; TODO(#8): calibrate against a measured NCCL launch.",
    {},
    0.0,
    1e9};

// Environment variables that override every communicator's config, as NCCL's envConfigOverride does.
const config::Param<int64_t> kCommBlocking{
    "shim.comm_blocking",
    -1,
    "NCCL_COMM_BLOCKING: 1 blocking, 0 non-blocking communicator init (any other "
    "value: the config's blocking attribute decides).",
    {},
    -2147483648.0,
    2147483647.0,
    "NCCL_COMM_BLOCKING"};
const config::Param<int64_t> kMinCtas{"shim.min_ctas",
                                      -2147483648,
                                      "NCCL_MIN_CTAS: at least this many channels (CTAs) per collective, over the "
                                      "config's minCTAs; values <= 0 leave the config's.",
                                      {},
                                      -2147483648.0,
                                      2147483647.0,
                                      "NCCL_MIN_CTAS"};
const config::Param<int64_t> kMaxCtas{"shim.max_ctas",
                                      -2147483648,
                                      "NCCL_MAX_CTAS: at most this many channels (CTAs) per collective, over the "
                                      "config's maxCTAs; values <= 0 leave the config's.",
                                      {},
                                      -2147483648.0,
                                      2147483647.0,
                                      "NCCL_MAX_CTAS"};

Status bad_config(const char* what, int v) {
  return invalid_argument(std::string("Invalid config ") + what + " attribute value " + std::to_string(v));
}

// A communicator's options from its ncclConfig_t (null: `o` as it is, the defaults or the parent's) and the
// environment, with NCCL 2.28.9's checks and messages (init.cc parseCommConfig): the caller's struct is read up to
// its `size` over NCCL_CONFIG_INITIALIZER, fields newer than its `version` are ignored, -1 values are errors
// where NCCL's are. NCCL's min/max check compares the raw values, so a minCTAs set without a maxCTAs is refused
// (maxCTAs still NCCL_CONFIG_UNDEF_INT, INT_MIN): so it is here.
Status comm_options(const ncclConfig_t* config, CommOptions* o) {
  if (config != nullptr) {
    ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
    c.magic = 0;
    size_t size = 0;
    std::memcpy(&size, config, sizeof(size));
    std::memcpy(&c, config, std::min(size, sizeof(c)));
    if (c.magic != 0xcafebeef)
      return invalid_argument("ncclConfig_t argument not initialized via NCCL_CONFIG_INITIALIZER");
    constexpr int kUndef = NCCL_CONFIG_UNDEF_INT;
    if (c.version < NCCL_VERSION(2, 14, 0)) c.blocking = kUndef;
    if (c.version < NCCL_VERSION(2, 17, 0)) c.cgaClusterSize = c.minCTAs = c.maxCTAs = kUndef, c.netName = nullptr;
    if (c.version < NCCL_VERSION(2, 25, 0)) c.trafficClass = kUndef;
    if (c.version < NCCL_VERSION(2, 27, 0)) c.collnetEnable = c.CTAPolicy = c.shrinkShare = c.nvlsCTAs = kUndef;
    if (c.version < NCCL_VERSION(2, 28, 0)) c.nChannelsPerNetPeer = c.nvlinkCentricSched = kUndef;
    auto bool_like = [](int v) { return v == kUndef || v == 0 || v == 1; };
    if (!bool_like(c.blocking)) return bad_config("blocking", c.blocking);
    if (c.cgaClusterSize != kUndef && c.cgaClusterSize < 0) return bad_config("cgaClusterSize", c.cgaClusterSize);
    if ((c.minCTAs != kUndef && c.minCTAs <= 0) || (c.maxCTAs != kUndef && c.maxCTAs <= 0) || c.minCTAs > c.maxCTAs)
      return invalid_argument("Invalid config min/max channels attribute value " + std::to_string(c.minCTAs) + "/" +
                              std::to_string(c.maxCTAs));
    if (!bool_like(c.splitShare)) return bad_config("splitShare", c.splitShare);
    if (!bool_like(c.collnetEnable)) return bad_config("collnetEnable", c.collnetEnable);
    if (c.CTAPolicy != kUndef && (c.CTAPolicy < NCCL_CTA_POLICY_DEFAULT || c.CTAPolicy > NCCL_CTA_POLICY_ZERO))
      return bad_config("policy", c.CTAPolicy);
    if (!bool_like(c.shrinkShare)) return bad_config("shrinkShare", c.shrinkShare);
    if (c.nvlsCTAs != kUndef && c.nvlsCTAs <= 0) return bad_config("nvlsCTAs", c.nvlsCTAs);
    if (c.nChannelsPerNetPeer != kUndef && (c.nChannelsPerNetPeer <= 0 || c.nChannelsPerNetPeer > 64))
      return bad_config("nChannelsPerNetPeer", c.nChannelsPerNetPeer);
    if (!bool_like(c.nvlinkCentricSched)) return bad_config("nvlinkCentricSched", c.nvlinkCentricSched);
    if (c.blocking != kUndef) o->blocking = c.blocking == 1;
    if (c.minCTAs != kUndef) o->tuning.min_ctas = c.minCTAs;
    if (c.maxCTAs != kUndef) o->tuning.max_ctas = c.maxCTAs;
    if (c.collnetEnable != kUndef) o->tuning.collnet_enable = c.collnetEnable;
    if (c.commName != nullptr) o->name = c.commName;
  }
  const config::Config& cfg = config::global();
  if (const int64_t b = cfg.get(kCommBlocking); b == 0 || b == 1) o->blocking = b == 1;
  if (const int64_t m = cfg.get(kMinCtas); m > 0) o->tuning.min_ctas = static_cast<int>(m);
  if (const int64_t m = cfg.get(kMaxCtas); m > 0) o->tuning.max_ctas = static_cast<int>(m);
  return Status::ok();
}

// Creates the handle and runs (or defers, or backgrounds) `init`.
Status start_init(ncclComm_t* out, const CommOptions& opts, int dev,
                  std::function<Result<std::shared_ptr<Communicator>>()> init) {
  auto* h = new ncclComm();
  h->blocking = opts.blocking;
  h->cuda_dev = dev;
  h->out = out;
  HandleRegistry::instance().add(h);
  *out = h;
  if (in_group()) {
    defer_init(h, std::move(init));
    return Status::ok();
  }
  if (!opts.blocking) {
    h->init_thread = std::thread([h, f = std::move(init)] { h->finish(f()); });
    return Status(Errc::kNotReady, "in progress");
  }
  h->finish(init());
  auto r = h->wait_ready();
  if (!r.is_ok()) {
    // A failed blocking init leaves no communicator behind (NCCL sets *comm only on success).
    HandleRegistry::instance().remove(h);
    delete h;
    *out = nullptr;
    return r.status();
  }
  return Status::ok();
}

Status init_rank_config(ncclComm_t* newcomm, int nranks, const ncclUniqueId& commId, int rank, ncclConfig_t* config) {
  GENIE_TRY(check_ptr(newcomm, "newcomm"));
  *newcomm = nullptr;
  if (nranks < 1) return invalid_argument("nranks " + std::to_string(nranks) + " must be at least 1");
  if (rank < 0 || rank >= nranks)
    return invalid_argument("rank " + std::to_string(rank) + " is out of range [0, " + std::to_string(nranks) + ")");
  CommOptions opts;
  GENIE_TRY(comm_options(config, &opts));
  GENIE_ASSIGN_OR_RETURN(UniqueId id, UniqueId::decode(commId.internal));
  GENIE_ASSIGN_OR_RETURN(fakecuda::Runtime * rt, the_runtime());
  const int dev = rt->current_device();
  return start_init(newcomm, opts, dev, [rt, id, nranks, rank, dev, opts] {
    return Communicator::init_rank(*rt, id, nranks, rank, dev, opts);
  });
}

Result<UniqueId> new_unique_id() { return start_root(bootstrap_addr(), bootstrap_timeout()); }

}  // namespace

SimTime launch_overhead() {
  static const SimTime overhead = SimTime::ns(config::global().get(kLaunchOverheadNs));
  return overhead;
}

}  // namespace genie::shim

using namespace genie;        // NOLINT
using namespace genie::shim;  // NOLINT

// ----------------------------------------------------------------------------------------------------
// Version, ids, errors
GENIE_NCCL_EXPORT ncclResult_t ncclGetVersion(int* version) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(version, "version"));
    *version = kNcclVersionCode;
    return Status::ok();
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(uniqueId, "uniqueId"));
    GENIE_ASSIGN_OR_RETURN(UniqueId id, new_unique_id());
    id.encode(uniqueId->internal);
    return Status::ok();
  });
}

GENIE_NCCL_EXPORT const char* ncclGetErrorString(ncclResult_t result) {
  switch (enum_raw(result)) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError:
      return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
      return "internal error - please report this issue to the NCCL developers";
    case ncclInvalidArgument:
      return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
      return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
    case ncclTimeout:
      return "timeout";
    default:
      return "unknown result code";
  }
}

GENIE_NCCL_EXPORT const char* ncclGetLastError(ncclComm_t /*comm*/) { return last_error(); }

GENIE_NCCL_EXPORT void ncclResetDebugInit() {}
GENIE_NCCL_EXPORT void ncclResetDebugInitInternal() {}

// ----------------------------------------------------------------------------------------------------
// Communicators
GENIE_NCCL_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t* newcomm, int nranks, ncclUniqueId commId, int rank,
                                                      ncclConfig_t* config) {
  return guard(__func__, [&] { return init_rank_config(newcomm, nranks, commId, rank, config); });
}

GENIE_NCCL_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t* newcomm, int nranks, ncclUniqueId commId, int rank) {
  return guard(__func__, [&] { return init_rank_config(newcomm, nranks, commId, rank, nullptr); });
}

GENIE_NCCL_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId,
                                                        ncclUniqueId* commIds, ncclConfig_t* config) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(commIds, "commIds"));
    if (nId < 1) return invalid_argument("nId " + std::to_string(nId) + " must be at least 1");
    // Several roots only spread NCCL's bootstrap load; one root (the first id) serves every rank here.
    return init_rank_config(newcomm, nranks, commIds[0], myrank, config);
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(comms, "comms"));
    if (ndev < 1) return invalid_argument("ndev " + std::to_string(ndev) + " must be at least 1");
    GENIE_ASSIGN_OR_RETURN(fakecuda::Runtime * rt, the_runtime());
    std::vector<int> devs(static_cast<size_t>(ndev));
    for (int i = 0; i < ndev; ++i) {
      devs[static_cast<size_t>(i)] = devlist ? devlist[i] : i;
      int d = devs[static_cast<size_t>(i)];
      if (d < 0 || d >= rt->device_count())
        return invalid_argument("devlist[" + std::to_string(i) + "] = " + std::to_string(d) + " is not a valid device");
      for (int j = 0; j < i; ++j)
        if (devs[static_cast<size_t>(j)] == d)
          return invalid_argument("devlist has device " + std::to_string(d) + " twice");
    }
    CommOptions opts;
    GENIE_TRY(comm_options(nullptr, &opts));
    GENIE_ASSIGN_OR_RETURN(UniqueId id, new_unique_id());
    GENIE_TRY(group_start());
    Status first;
    for (int i = 0; i < ndev; ++i) {
      int dev = devs[static_cast<size_t>(i)];
      Status s = start_init(&comms[i], opts, dev, [rt, id, ndev, i, dev, opts] {
        return Communicator::init_rank(*rt, id, ndev, i, dev, opts);
      });
      if (!s.is_ok() && first.is_ok()) first = s;
    }
    Status end = group_end();
    if (!first.is_ok()) return first;
    return end;
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                                             ncclConfig_t* config) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(newcomm, "newcomm"));
    *newcomm = nullptr;
    if (color < 0 && color != NCCL_SPLIT_NOCOLOR)
      return invalid_argument("color " + std::to_string(color) + " must be non-negative or NCCL_SPLIT_NOCOLOR");
    GENIE_ASSIGN_OR_RETURN(auto parent, ready_comm(comm));
    CommOptions opts = parent->options();
    GENIE_TRY(comm_options(config, &opts));
    if (color == NCCL_SPLIT_NOCOLOR && !in_group()) {
      GENIE_TRY(parent->split(color, key, opts).status());
      return Status::ok();
    }
    Status s = start_init(newcomm, opts, parent->cuda_dev(),
                          [parent, color, key, opts] { return parent->split(color, key, opts); });
    // A NOCOLOR rank inside a group gets a handle that resolves to no communicator: drop it after the group.
    return s;
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                                              ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(newcomm, "newcomm"));
    *newcomm = nullptr;
    if (excludeRanksCount < 0) return invalid_argument("excludeRanksCount must not be negative");
    if (excludeRanksCount > 0) GENIE_TRY(check_ptr(excludeRanksList, "excludeRanksList"));
    if (shrinkFlags != NCCL_SHRINK_DEFAULT && shrinkFlags != NCCL_SHRINK_ABORT)
      return invalid_argument("shrinkFlags " + std::to_string(shrinkFlags) +
                              " is not NCCL_SHRINK_DEFAULT or NCCL_SHRINK_ABORT");
    GENIE_ASSIGN_OR_RETURN(auto parent, ready_comm(comm));
    std::vector<int> exclude(excludeRanksList, excludeRanksList + excludeRanksCount);
    for (int r : exclude)
      if (r < 0 || r >= parent->nranks())
        return invalid_argument("excludeRanksList has rank " + std::to_string(r) + ", out of range");
    CommOptions opts = parent->options();
    GENIE_TRY(comm_options(config, &opts));
    // NCCL_SHRINK_ABORT: operations stuck on the parent (waiting for the excluded ranks) give up first.
    if (shrinkFlags == NCCL_SHRINK_ABORT) parent->abort();
    return start_init(newcomm, opts, parent->cuda_dev(),
                      [parent, exclude, opts] { return parent->shrink(exclude, opts); });
  });
}

// ----------------------------------------------------------------------------------------------------
// Growing a communicator (NCCL 2.29): the grown communicator is a new one on a fresh bootstrap, whose id the existing
// root made with ncclCommGetUniqueId and hands to the other existing ranks over the parent; existing ranks keep their
// ranks, new ranks take the ones they are given.
namespace {
std::mutex g_grow_mu;
std::unordered_set<const ncclComm*> g_grow_pending;  // communicators whose grow id was made and not yet used

struct GrowEntry {
  int32_t has_id = 0;
  char id[NCCL_UNIQUE_ID_BYTES] = {};
};
}  // namespace

GENIE_NCCL_EXPORT ncclResult_t ncclCommGetUniqueId(ncclComm_t comm, ncclUniqueId* uniqueId) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(uniqueId, "uniqueId"));
    GENIE_TRY(ready_comm(comm).status());
    std::lock_guard lk(g_grow_mu);
    if (g_grow_pending.count(comm) != 0)
      return invalid_usage("the communicator's last ncclCommGetUniqueId id has not been used by ncclCommGrow yet");
    GENIE_ASSIGN_OR_RETURN(UniqueId id, new_unique_id());
    id.encode(uniqueId->internal);
    g_grow_pending.insert(comm);
    return Status::ok();
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclCommGrow(ncclComm_t comm, int nRanks, const ncclUniqueId* uniqueId, int rank,
                                            ncclComm_t* newcomm, ncclConfig_t* config) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(newcomm, "newcomm"));
    *newcomm = nullptr;
    if (comm == nullptr) {  // a new rank
      GENIE_TRY(check_ptr(uniqueId, "uniqueId"));
      return init_rank_config(newcomm, nRanks, *uniqueId, rank, config);
    }
    if (rank != -1)
      return invalid_argument("rank " + std::to_string(rank) + ": existing ranks pass -1 (they keep their ranks)");
    GENIE_ASSIGN_OR_RETURN(auto parent, ready_comm(comm));
    if (nRanks <= parent->nranks())
      return invalid_argument("nRanks " + std::to_string(nRanks) + " must be larger than the communicator's " +
                              std::to_string(parent->nranks()) + " ranks");
    if (uniqueId != nullptr) {
      std::lock_guard lk(g_grow_mu);
      if (g_grow_pending.count(comm) == 0)
        return invalid_usage("uniqueId was not made by ncclCommGetUniqueId on this communicator, or was used");
    }
    CommOptions opts = parent->options();
    GENIE_TRY(comm_options(config, &opts));
    GrowEntry mine;
    if (uniqueId != nullptr) {
      mine.has_id = 1;
      std::memcpy(mine.id, uniqueId->internal, sizeof(mine.id));
    }
    std::vector<int> everyone(static_cast<size_t>(parent->nranks()));
    for (int r = 0; r < parent->nranks(); ++r) everyone[static_cast<size_t>(r)] = r;
    GENIE_ASSIGN_OR_RETURN(auto all, parent->gather_small(everyone, &mine, sizeof(mine)));
    int roots = 0;
    GrowEntry root;
    for (const auto& bytes : all) {
      GrowEntry e;
      std::memcpy(&e, bytes.data(), sizeof(e));
      if (e.has_id) roots++, root = e;
    }
    if (roots != 1)
      return invalid_usage("ncclCommGrow: exactly one existing rank (the root) passes the uniqueId; " +
                           std::to_string(roots) + " did");
    GENIE_ASSIGN_OR_RETURN(UniqueId id, UniqueId::decode(root.id));
    GENIE_ASSIGN_OR_RETURN(fakecuda::Runtime * rt, the_runtime());
    const int dev = parent->cuda_dev();
    const int me = parent->rank();
    Status st = start_init(newcomm, opts, dev, [rt, id, nRanks, me, dev, opts] {
      return Communicator::init_rank(*rt, id, nRanks, me, dev, opts);
    });
    if (uniqueId != nullptr && (st.is_ok() || st.code() == Errc::kNotReady)) {
      std::lock_guard lk(g_grow_mu);
      g_grow_pending.erase(comm);  // consumed
    }
    return st;
  });
}

namespace {
Status destroy_handle(ncclComm_t comm, bool abort) {
  if (!HandleRegistry::instance().remove(comm)) return invalid_argument("comm is not a valid communicator");
  if (comm->init_thread.joinable()) {
    if (abort) {
      // A joining rank waits for its peers; it gives up at the bootstrap timeout at the latest.
      std::unique_lock lk(comm->mu);
      comm->cv.wait_for(lk, std::chrono::seconds(1), [&] { return comm->state != ncclComm::State::kInitializing; });
    }
    comm->init_thread.join();
  }
  std::shared_ptr<Communicator> impl;
  {
    std::lock_guard lk(comm->mu);
    impl = comm->impl;
  }
  if (impl && (abort || impl->async_error() != Errc::kOk)) impl->abort();
  if (impl) impl->let_go(impl);  // kept while ops it issued are queued
  delete comm;
  return Status::ok();
}
}  // namespace

GENIE_NCCL_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  return guard(__func__, [&]() -> Status {
    GENIE_ASSIGN_OR_RETURN(auto c, ready_comm(comm));
    return c->drain();
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  return guard(__func__, [&]() -> Status {
    if (comm == nullptr) return Status::ok();  // NCCL: destroying NULL is a no-op
    return destroy_handle(comm, false);
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm) {
  return guard(__func__, [&]() -> Status {
    if (comm == nullptr) return Status::ok();
    return destroy_handle(comm, true);
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  return guard(__func__, [&]() -> Status {
    if (revokeFlags != NCCL_REVOKE_DEFAULT) return invalid_argument("revokeFlags must be NCCL_REVOKE_DEFAULT (0)");
    GENIE_ASSIGN_OR_RETURN(auto c, ready_comm(comm));
    c->abort();  // in-flight operations stop; the communicator can still be shrunk or destroyed
    return Status::ok();
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(asyncError, "asyncError"));
    if (!HandleRegistry::instance().contains(comm)) return invalid_argument("comm is not a valid communicator");
    std::lock_guard lk(comm->mu);
    if (comm->state == ncclComm::State::kInitializing)
      *asyncError = ncclInProgress;
    else if (comm->state == ncclComm::State::kFailed)
      *asyncError = to_nccl(comm->init_status);
    else
      *asyncError = to_nccl(Status(comm->impl->async_error(), ""));
    return Status::ok();
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(count, "count"));
    GENIE_ASSIGN_OR_RETURN(auto c, ready_comm(comm));
    *count = c->nranks();
    return Status::ok();
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(device, "device"));
    GENIE_ASSIGN_OR_RETURN(auto c, ready_comm(comm));
    *device = c->cuda_dev();
    return Status::ok();
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(rank, "rank"));
    GENIE_ASSIGN_OR_RETURN(auto c, ready_comm(comm));
    *rank = c->rank();
    return Status::ok();
  });
}

// ----------------------------------------------------------------------------------------------------
// Memory and registration
namespace {
struct Registration {
  static constexpr uint64_t kMagic = 0x4e43434c52454721ull;
  uint64_t magic = kMagic;
  const void* comm;
  void* buff;
  size_t size;
};
std::mutex g_reg_mu;
std::unordered_set<const void*> g_regs;

Result<void*> add_registration(ncclComm_t comm, void* buff, size_t size) {
  GENIE_ASSIGN_OR_RETURN(auto c, ready_comm(comm));
  GENIE_TRY(check_ptr(buff, "buff"));
  GENIE_TRY(PeerMemory::instance().publish(c->runtime(), buff, size, "buff", false).status());
  auto* r = new Registration{Registration::kMagic, comm, buff, size};
  std::lock_guard lk(g_reg_mu);
  g_regs.insert(r);
  return static_cast<void*>(r);
}

Status remove_registration(ncclComm_t comm, void* handle) {
  GENIE_TRY(ready_comm(comm).status());
  std::lock_guard lk(g_reg_mu);
  auto it = g_regs.find(handle);
  if (it == g_regs.end() || static_cast<Registration*>(handle)->comm != comm)
    return invalid_argument("handle was not registered on this communicator");
  g_regs.erase(it);
  delete static_cast<Registration*>(handle);
  return Status::ok();
}
}  // namespace

GENIE_NCCL_EXPORT ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(ptr, "ptr"));
    if (size == 0) {  // NCCL falls back to cudaMalloc(ptr, 0): success and a NULL pointer
      *ptr = nullptr;
      return Status::ok();
    }
    fakecuda::Runtime* rt = runtime_or_null();
    if (!rt) return Status(Errc::kSystem, "the CUDA runtime is not available");
    GENIE_ASSIGN_OR_RETURN(*ptr, rt->device_alloc(rt->current_device(), size));
    return Status::ok();
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclMemFree(void* ptr) {
  return guard(__func__, [&]() -> Status {
    if (ptr == nullptr) return Status::ok();
    fakecuda::Runtime* rt = runtime_or_null();
    if (!rt) return Status(Errc::kSystem, "the CUDA runtime is not available");
    return rt->free_memory(ptr, false);
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(handle, "handle"));
    GENIE_ASSIGN_OR_RETURN(*handle, add_registration(comm, buff, size));
    return Status::ok();
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  return guard(__func__, [&] { return remove_registration(comm, handle); });
}

namespace {
std::mutex g_win_mu;
std::unordered_set<const ncclWindow_vidmem*> g_wins;
}  // namespace

namespace genie::shim {
Result<Window*> window_of(ncclComm_t comm, ncclWindow_t win, const char* what) {
  std::lock_guard lk(g_win_mu);
  if (win == nullptr || g_wins.count(win) == 0 || win->comm != comm)
    return invalid_argument(std::string(what) + " is not a window registered on this communicator");
  return &win->w;
}
Result<std::pair<ncclComm_t, Window*>> window_lookup(ncclWindow_t win, const char* what) {
  std::lock_guard lk(g_win_mu);
  if (win == nullptr || g_wins.count(win) == 0) return invalid_argument(std::string(what) + " is not a registered window");
  return std::make_pair(const_cast<ncclComm_t>(static_cast<const ncclComm*>(win->comm)), &win->w);
}
}  // namespace genie::shim

// Collective, as in NCCL: every rank registers its buffer, and each learns where the others' are (one_sided.hpp).
GENIE_NCCL_EXPORT ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                                                      int winFlags) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(win, "win"));
    constexpr int kKnown = NCCL_WIN_COLL_SYMMETRIC | NCCL_WIN_STRICT_ORDERING | NCCL_WIN_GIN_ONLY | NCCL_WIN_CFT_COUNTED;
    if ((winFlags & ~kKnown) != 0)
      return invalid_argument("winFlags " + std::to_string(winFlags) + " is not a combination of NCCL_WIN_* flags");
    if ((winFlags & NCCL_WIN_COLL_SYMMETRIC) && reinterpret_cast<uintptr_t>(buff) % NCCL_WIN_REQUIRED_ALIGNMENT != 0)
      return invalid_argument("a symmetric window must be aligned to NCCL_WIN_REQUIRED_ALIGNMENT (4096)");
    if (size > 0) GENIE_TRY(check_ptr(buff, "buff"));
    GENIE_ASSIGN_OR_RETURN(auto c, ready_comm(comm));
    auto w = std::make_unique<ncclWindow_vidmem>();
    w->comm = comm;
    w->w.base = buff;
    w->w.size = size;
    w->w.flags = winFlags;
    GENIE_TRY(c->exchange_window(w->w));
    std::lock_guard lk(g_win_mu);
    *win = w.release();
    g_wins.insert(*win);
    return Status::ok();
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(ready_comm(comm).status());
    std::lock_guard lk(g_win_mu);
    if (win == nullptr || g_wins.count(win) == 0 || win->comm != comm)
      return invalid_argument("win is not a window registered on this communicator");
    g_wins.erase(win);
    delete win;
    return Status::ok();
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclWinGetUserPtr(ncclComm_t comm, ncclWindow_t win, void** outUserPtr) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(outUserPtr, "outUserPtr"));
    GENIE_ASSIGN_OR_RETURN(Window * w, window_of(comm, win, "win"));
    *outUserPtr = w->base;
    return Status::ok();
  });
}

// ----------------------------------------------------------------------------------------------------
// Suspend, resume, memory statistics (NCCL 2.29.7)
GENIE_NCCL_EXPORT ncclResult_t ncclCommSuspend(ncclComm_t comm, int flags) {
  return guard(__func__, [&]() -> Status {
    if ((flags & ~NCCL_SUSPEND_MEM) != 0)
      return invalid_argument("flags " + std::to_string(flags) + " is not a combination of NCCL_SUSPEND_* flags");
    GENIE_ASSIGN_OR_RETURN(auto c, ready_comm(comm));
    return c->suspend(flags);
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclCommResume(ncclComm_t comm) {
  return guard(__func__, [&]() -> Status {
    GENIE_ASSIGN_OR_RETURN(auto c, ready_comm(comm));
    return c->resume();
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclCommMemStats(ncclComm_t comm, ncclCommMemStat_t stat, uint64_t* value) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(value, "value"));
    GENIE_ASSIGN_OR_RETURN(auto c, ready_comm(comm));
    switch (enum_raw(stat)) {
      case ncclStatGpuMemSuspend:
        *value = c->suspendable_bytes();
        return Status::ok();
      case ncclStatGpuMemSuspended:
        *value = c->suspended() ? 1 : 0;
        return Status::ok();
      case ncclStatGpuMemPersist:
        *value = c->persistent_bytes();
        return Status::ok();
      case ncclStatGpuMemTotal:
        *value = c->suspendable_bytes() + c->persistent_bytes();
        return Status::ok();
      default:
        return invalid_argument("stat " + std::to_string(enum_raw(stat)) + " is not a ncclCommMemStat_t");
    }
  });
}

// ----------------------------------------------------------------------------------------------------
// pncclXxx: NCCL's profiling aliases.
GENIE_NCCL_ALIAS(ncclResult_t, ncclGetVersion, (int*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclGetUniqueId, (ncclUniqueId*))
GENIE_NCCL_ALIAS(const char*, ncclGetErrorString, (ncclResult_t))
GENIE_NCCL_ALIAS(const char*, ncclGetLastError, (ncclComm_t))
GENIE_NCCL_ALIAS(void, ncclResetDebugInit, ())
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommInitRankConfig, (ncclComm_t*, int, ncclUniqueId, int, ncclConfig_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommInitRank, (ncclComm_t*, int, ncclUniqueId, int))
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommInitRankScalable, (ncclComm_t*, int, int, int, ncclUniqueId*, ncclConfig_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommInitAll, (ncclComm_t*, int, const int*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommSplit, (ncclComm_t, int, int, ncclComm_t*, ncclConfig_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommShrink, (ncclComm_t, int*, int, ncclComm_t*, ncclConfig_t*, int))
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommFinalize, (ncclComm_t))
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommDestroy, (ncclComm_t))
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommAbort, (ncclComm_t))
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommRevoke, (ncclComm_t, int))
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommGetAsyncError, (ncclComm_t, ncclResult_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommCount, (const ncclComm_t, int*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommCuDevice, (const ncclComm_t, int*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommUserRank, (const ncclComm_t, int*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclMemAlloc, (void**, size_t))
GENIE_NCCL_ALIAS(ncclResult_t, ncclMemFree, (void*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommRegister, (const ncclComm_t, void*, size_t, void**))
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommDeregister, (const ncclComm_t, void*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommWindowRegister, (ncclComm_t, void*, size_t, ncclWindow_t*, int))
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommWindowDeregister, (ncclComm_t, ncclWindow_t))
GENIE_NCCL_ALIAS(ncclResult_t, ncclWinGetUserPtr, (ncclComm_t, ncclWindow_t, void**))
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommSuspend, (ncclComm_t, int))
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommResume, (ncclComm_t))
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommMemStats, (ncclComm_t, ncclCommMemStat_t, uint64_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommGetUniqueId, (ncclComm_t, ncclUniqueId*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommGrow, (ncclComm_t, int, const ncclUniqueId*, int, ncclComm_t*, ncclConfig_t*))
