// SPDX-License-Identifier: Apache-2.0
// libnccl.so.2, part 3: the host entry points of NCCL's device API (communicator properties, teams, window device
// pointers, device-communicator and resource requirements), with their pncclXxx aliases. Device kernels never run on
// Genie, so creating a device communicator is refused (ncclInvalidUsage, as NCCL refuses it where the hardware lacks
// what it needs); what a host program can ask about the communicator and its windows is answered.
#include <nccl.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "comm_handle.hpp"
#include "communicator.hpp"
#include "device_api.hpp"
#include "nccl_api_support.hpp"
#include "one_sided.hpp"
#include "peer_memory.hpp"
#include "shim_errors.hpp"

using namespace genie;        // NOLINT
using namespace genie::shim;  // NOLINT

namespace {

ncclResult_t device_api(const char* fn) {
  return fail(fn, invalid_usage("the NCCL device API needs GPU kernels and NVLink symmetric memory, which Genie "
                                "does not emulate"));
}

// Ranks of the communicator on the first rank's server: the NVLink ("LSA") team, as on one HGX server.
int lsa_size(Communicator& k) {
  auto& t = k.timing();
  const auto server = [&](int r) { return t.topology().nodes()[static_cast<size_t>(t.topology().gpu_node(t.gpu_of(r)))].server; };
  int per_node = 0;
  for (int r = 0; r < k.nranks(); ++r)
    if (server(r) == server(0)) ++per_node;
  return std::max(1, per_node);
}

ncclTeam_t team_of(ncclComm_t comm, int which) {
  auto c = ready_comm(comm);
  if (!c.is_ok()) return ncclTeam_t{0, -1, 1};
  Communicator& k = *c.value();
  const int per_node = lsa_size(k);
  switch (which) {
    case 0:
      return ncclTeam_t{k.nranks(), k.rank(), 1};
    case 1:
      return ncclTeam_t{per_node, k.rank() % per_node, 1};
    default:
      return ncclTeam_t{std::max(1, k.nranks() / per_node), k.rank() / per_node, per_node};
  }
}

// A window's device address of rank `world_rank`'s buffer at `offset`, as this process can address it: peers on this
// emulated node are mapped here (their memory is host memory on a memfd); a peer elsewhere has no address (NULL, as
// NCCL answers for a peer outside the LSA team).
Status peer_pointer(ncclWindow_t window, size_t offset, int world_rank, void** out) {
  GENIE_TRY(check_ptr(out, "outPtr"));
  *out = nullptr;
  GENIE_ASSIGN_OR_RETURN(auto found, window_lookup(window, "window"));
  auto [comm, w] = found;
  GENIE_ASSIGN_OR_RETURN(Communicator * c, ready_comm_ptr(comm));
  if (world_rank < 0 || world_rank >= c->nranks())
    return invalid_argument("peer " + std::to_string(world_rank) + " is out of range for a communicator of " +
                            std::to_string(c->nranks()) + " ranks");
  if (offset > w->sizes[static_cast<size_t>(world_rank)])
    return invalid_argument("offset " + std::to_string(offset) + " is past the end of the window");
  const int per_node = lsa_size(*c);
  if (world_rank / per_node != c->rank() / per_node) return Status::ok();  // not addressable from this node
  if (w->sizes[static_cast<size_t>(world_rank)] == 0) return Status::ok();
  GENIE_ASSIGN_OR_RETURN(char* base, PeerMemory::instance().resolve(w->ranks[static_cast<size_t>(world_rank)]));
  *out = base + offset;
  return Status::ok();
}

Status multimem_pointer(ncclWindow_t window, size_t offset, void** out) {
  GENIE_TRY(check_ptr(out, "outPtr"));
  *out = nullptr;
  GENIE_ASSIGN_OR_RETURN(auto found, window_lookup(window, "window"));
  auto [comm, w] = found;
  GENIE_ASSIGN_OR_RETURN(Communicator * c, ready_comm_ptr(comm));
  if (!c->timing().topology().nvls)
    return invalid_usage("multimem pointers need NVLink SHARP multicast (NVLS), which this preset's topology '" +
                         c->timing().topology_name() + "' does not have");
  if (offset > w->size) return invalid_argument("offset " + std::to_string(offset) + " is past the end of the window");
  // Kernels do not run here: the local replica stands for the multicast object.
  *out = static_cast<char*>(w->base) + offset;
  return Status::ok();
}

}  // namespace

GENIE_NCCL_EXPORT ncclResult_t ncclCommQueryProperties(ncclComm_t comm, ncclCommProperties_t* props) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(props, "props"));
    if (props->magic != NCCL_API_MAGIC || props->size < offsetof(ncclCommProperties_t, rank))
      return invalid_argument("props is not initialized with NCCL_COMM_PROPERTIES_INITIALIZER");
    GENIE_ASSIGN_OR_RETURN(auto c, ready_comm(comm));
    ncclCommProperties_t p{};
    p.size = props->size;
    p.magic = props->magic;
    p.version = props->version;
    p.rank = c->rank();
    p.nRanks = c->nranks();
    p.cudaDev = c->cuda_dev();
    p.nvmlDev = c->cuda_dev();  // Genie's NVML numbers devices as CUDA does
    p.deviceApiSupport = false;
    p.multimemSupport = c->timing().topology().nvls;
    p.ginType = NCCL_GIN_TYPE_NONE;
    p.nLsaTeams = std::max(1, c->nranks() / lsa_size(*c));
    p.hostRmaSupport = true;  // ncclPutSignal / ncclSignal / ncclWaitSignal
    p.railedGinType = NCCL_GIN_TYPE_NONE;
    p.commHash = c->key();
    p.ginMinStride = 0;
    p.ginConnectionType = NCCL_GIN_CONNECTION_NONE;
    p.devCommRuntimeVersionSize = 0;
    std::memcpy(props, &p, std::min(props->size, sizeof(p)));
    return Status::ok();
  });
}

GENIE_NCCL_EXPORT ncclResult_t ncclDevCommCreate(ncclComm_t, const ncclDevCommRequirements*, ncclDevComm*) {
  return device_api(__func__);
}
GENIE_NCCL_EXPORT ncclResult_t ncclDevCommDestroy(ncclComm_t, const ncclDevComm*) { return device_api(__func__); }
GENIE_NCCL_EXPORT ncclResult_t ncclGinBarrierCreateRequirement(ncclComm_t, ncclTeam_t, int, ncclGinBarrierHandle*,
                                                               ncclDevResourceRequirements*) {
  return device_api(__func__);
}
GENIE_NCCL_EXPORT ncclResult_t ncclLsaBarrierCreateRequirement(ncclTeam_t, int, ncclLsaBarrierHandle*,
                                                               ncclDevResourceRequirements*) {
  return device_api(__func__);
}
GENIE_NCCL_EXPORT ncclResult_t ncclLLA2ACreateRequirement(int, int, ncclLLA2AHandle*, ncclDevResourceRequirements*) {
  return device_api(__func__);
}
GENIE_NCCL_EXPORT ncclResult_t ncclGinOutboxCreateRequirement(int, int, ncclGinOutboxHandle*,
                                                              ncclDevResourceRequirements*) {
  return device_api(__func__);
}
GENIE_NCCL_EXPORT ncclResult_t ncclGinInboxA2ACreateRequirement(ncclTeam_t, int, int, ncclGinInboxA2AHandle*,
                                                                ncclDevResourceRequirements*) {
  return device_api(__func__);
}
GENIE_NCCL_EXPORT int ncclLLA2ACalcSlots(int maxElts, int maxEltSize) {
  // Slots of 8 bytes per element (LL-style), as a host-side sizing helper; no device state is involved.
  if (maxElts < 0 || maxEltSize < 0) return 0;
  return maxElts * ((maxEltSize + 7) / 8);
}

GENIE_NCCL_EXPORT ncclTeam_t ncclTeamWorld(ncclComm_t comm) { return team_of(comm, 0); }
GENIE_NCCL_EXPORT ncclTeam_t ncclTeamLsa(ncclComm_t comm) { return team_of(comm, 1); }
GENIE_NCCL_EXPORT ncclTeam_t ncclTeamRail(ncclComm_t comm) { return team_of(comm, 2); }
// CFT teams span the ranks a copy engine reaches over NVLink: on Genie's topologies, the NVLink (LSA) team in both
// modes (ncclCommQueryProperties reports cftSupport false: nothing is built on them).
GENIE_NCCL_EXPORT ncclTeam_t ncclTeamCft(ncclComm_t comm, ncclCftTeamMode_t /*mode*/) { return team_of(comm, 1); }
GENIE_NCCL_EXPORT ncclTeam_t ncclTeamCftMultimem(ncclComm_t comm) { return team_of(comm, 1); }
GENIE_NCCL_EXPORT int ncclTeamRankToWorld(ncclComm_t comm, ncclTeam_t team, int rank) {
  auto c = ready_comm(comm);
  if (!c.is_ok()) return -1;
  return c.value()->rank() + (rank - team.rank) * team.stride;
}
GENIE_NCCL_EXPORT int ncclTeamRankToLsa(ncclComm_t comm, ncclTeam_t team, int rank) {
  ncclTeam_t lsa = ncclTeamLsa(comm);
  int world = ncclTeamRankToWorld(comm, team, rank);
  if (world < 0 || lsa.nRanks <= 0) return -1;
  return world % lsa.nRanks;
}

GENIE_NCCL_EXPORT ncclResult_t ncclGetPeerDevicePointer(ncclWindow_t window, size_t offset, int peer, void** outPtr) {
  return guard(__func__, [&] { return peer_pointer(window, offset, peer, outPtr); });
}
GENIE_NCCL_EXPORT ncclResult_t ncclGetLsaDevicePointer(ncclWindow_t window, size_t offset, int lsaRank,
                                                       void** outPtr) {
  return guard(__func__, [&]() -> Status {
    GENIE_TRY(check_ptr(outPtr, "outPtr"));
    GENIE_ASSIGN_OR_RETURN(auto found, window_lookup(window, "window"));
    GENIE_ASSIGN_OR_RETURN(Communicator * c, ready_comm_ptr(found.first));
    const int per_node = lsa_size(*c);
    if (lsaRank < 0 || lsaRank >= per_node)
      return invalid_argument("lsaRank " + std::to_string(lsaRank) + " is out of range for an LSA team of " +
                              std::to_string(per_node) + " ranks");
    return peer_pointer(window, offset, c->rank() / per_node * per_node + lsaRank, outPtr);
  });
}
GENIE_NCCL_EXPORT ncclResult_t ncclGetLsaMultimemDevicePointer(ncclWindow_t window, size_t offset, void** outPtr) {
  return guard(__func__, [&] { return multimem_pointer(window, offset, outPtr); });
}
GENIE_NCCL_EXPORT ncclResult_t ncclGetMultimemDevicePointer(ncclWindow_t window, size_t offset,
                                                            ncclMultimemHandle_t /*multimem*/, void** outPtr) {
  return guard(__func__, [&] { return multimem_pointer(window, offset, outPtr); });
}
// CFT (copy-engine fabric) handles: Genie's windows have none (ncclCommQueryProperties: cftSupport false).
GENIE_NCCL_EXPORT ncclResult_t ncclGetMultimemDeviceLeInfo(ncclWindow_t, size_t, ncclCftLeId*, size_t*) {
  return fail(__func__, invalid_usage("CFT handles need copy-engine fabric support, which Genie does not emulate "
                                      "(ncclCommQueryProperties reports cftSupport 0)"));
}
GENIE_NCCL_EXPORT ncclResult_t ncclGetCftDeviceLeInfo(ncclWindow_t, size_t, int, ncclTeam_t, ncclCftLeId*, size_t*) {
  return fail(__func__, invalid_usage("CFT handles need copy-engine fabric support, which Genie does not emulate "
                                      "(ncclCommQueryProperties reports cftSupport 0)"));
}
GENIE_NCCL_EXPORT ncclResult_t ncclGetPeerDeviceLeInfo(ncclWindow_t, size_t, int, ncclCftLeId*, size_t*) {
  return fail(__func__, invalid_usage("CFT handles need copy-engine fabric support, which Genie does not emulate "
                                      "(ncclCommQueryProperties reports cftSupport 0)"));
}

// ----------------------------------------------------------------------------------------------------
// pncclXxx: NCCL's profiling aliases.
GENIE_NCCL_ALIAS(ncclResult_t, ncclCommQueryProperties, (ncclComm_t, ncclCommProperties_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclDevCommCreate, (ncclComm_t, const ncclDevCommRequirements*, ncclDevComm*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclDevCommDestroy, (ncclComm_t, const ncclDevComm*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclGinBarrierCreateRequirement,
                 (ncclComm_t, ncclTeam_t, int, ncclGinBarrierHandle*, ncclDevResourceRequirements*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclLsaBarrierCreateRequirement,
                 (ncclTeam_t, int, ncclLsaBarrierHandle*, ncclDevResourceRequirements*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclLLA2ACreateRequirement, (int, int, ncclLLA2AHandle*, ncclDevResourceRequirements*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclGinOutboxCreateRequirement,
                 (int, int, ncclGinOutboxHandle*, ncclDevResourceRequirements*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclGinInboxA2ACreateRequirement,
                 (ncclTeam_t, int, int, ncclGinInboxA2AHandle*, ncclDevResourceRequirements*))
GENIE_NCCL_ALIAS(int, ncclLLA2ACalcSlots, (int, int))
GENIE_NCCL_ALIAS(ncclTeam_t, ncclTeamWorld, (ncclComm_t))
GENIE_NCCL_ALIAS(ncclTeam_t, ncclTeamLsa, (ncclComm_t))
GENIE_NCCL_ALIAS(ncclTeam_t, ncclTeamRail, (ncclComm_t))
GENIE_NCCL_ALIAS(ncclTeam_t, ncclTeamCft, (ncclComm_t, ncclCftTeamMode_t))
GENIE_NCCL_ALIAS(ncclTeam_t, ncclTeamCftMultimem, (ncclComm_t))
GENIE_NCCL_ALIAS(int, ncclTeamRankToWorld, (ncclComm_t, ncclTeam_t, int))
GENIE_NCCL_ALIAS(int, ncclTeamRankToLsa, (ncclComm_t, ncclTeam_t, int))
GENIE_NCCL_ALIAS(ncclResult_t, ncclGetPeerDevicePointer, (ncclWindow_t, size_t, int, void**))
GENIE_NCCL_ALIAS(ncclResult_t, ncclGetLsaDevicePointer, (ncclWindow_t, size_t, int, void**))
GENIE_NCCL_ALIAS(ncclResult_t, ncclGetLsaMultimemDevicePointer, (ncclWindow_t, size_t, void**))
GENIE_NCCL_ALIAS(ncclResult_t, ncclGetMultimemDevicePointer, (ncclWindow_t, size_t, ncclMultimemHandle_t, void**))
GENIE_NCCL_ALIAS(ncclResult_t, ncclGetMultimemDeviceLeInfo, (ncclWindow_t, size_t, ncclCftLeId*, size_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclGetCftDeviceLeInfo, (ncclWindow_t, size_t, int, ncclTeam_t, ncclCftLeId*, size_t*))
GENIE_NCCL_ALIAS(ncclResult_t, ncclGetPeerDeviceLeInfo, (ncclWindow_t, size_t, int, ncclCftLeId*, size_t*))
