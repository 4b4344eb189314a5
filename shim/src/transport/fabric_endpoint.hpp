// SPDX-License-Identifier: Apache-2.0
// FabricEndpoint: one libfabric reliable-datagram (FI_EP_RDM) endpoint with tagged messages, its address
// vector and a completion queue that blocks (FI_WAIT) instead of busy-polling when nothing completes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "genie/common/status.hpp"
#include "transport/fabric_bell.hpp"

struct fid_fabric;
struct fid_domain;
struct fid_ep;
struct fid_av;
struct fid_cq;
struct fi_info;

namespace genie::shim {

/// Per-operation context handed to libfabric. Providers that need FI_CONTEXT/FI_CONTEXT2 use the first
/// bytes, so every operation owns one and keeps it alive (stable address) until its completion.
struct alignas(8) FabricOpContext {
  void* provider_space[8] = {};  ///< struct fi_context2 (4 pointers) with room to spare
  uint64_t user = 0;             ///< the caller's op id
  bool large = false;            ///< set by the endpoint: longer than the provider delivers within the post
};

/// One completion: the operation's context, its status and, for receives, the bytes that arrived.
struct FabricCompletion {
  FabricOpContext* ctx = nullptr;
  Status status;
  size_t len = 0;
};

class FabricEndpoint {
 public:
  /// Opens an endpoint of `provider` ("tcp": libfabric's native RDM provider over TCP where there is one, else
  /// tcp;ofi_rxm; "verbs": verbs;ofi_rxm; "shm", "efa", ... as libfabric names them: libfabric_provider_names)
  /// bound to the local IPv4 address `src_addr` where the provider uses IP
  /// ("" : the provider's default). Unsupported when the provider is not present, with the message
  /// listing those that are. Where the provider offers several domains (one per NIC: verbs, efa), the
  /// endpoint of emulated GPU `gpu` uses, among the NICs nearest to this process's CPUs (hwloc: PCI
  /// locality against the process's binding), number gpu mod their count in libfabric's order — as an HGX
  /// server pairs GPU k with the NIC on its PCIe switch (choose_nic, nic_locality.hpp).
  static Result<std::unique_ptr<FabricEndpoint>> open(const std::string& provider, const std::string& src_addr,
                                                      int gpu = 0);
  /// How libfabric's shm provider moves large messages: "sar" (bounce buffers the sender fills while the
  /// receiver empties them, both copying in parallel) while there is a CPU per rank on the host, "cma" (the
  /// receiver reads the sender's pages itself, which needs no peer to be scheduled) when ranks outnumber CPUs.
  /// `mode` is GENIE_SHIM_FABRIC_SHM_CMA (auto, on, off); `user` a FI_SHM_DISABLE_CMA value the user set (null:
  /// unset), which wins.
  static std::string shm_copy_rule(int ranks_on_host, int cpus, const std::string& mode, const char* user);
  /// Applies shm_copy_rule once per process, before libfabric initialises (it reads FI_SHM_DISABLE_CMA once):
  /// the first communicator decides, later calls return that choice. Thread-safe (ranks of one process may
  /// initialise at once). Returns "cma" or "sar", for the log.
  static std::string choose_shm_copy(int ranks_on_host);
  /// The providers libfabric offers on this machine for tagged RDM endpoints ("tcp", "shm", ...).
  static std::vector<std::string> available_providers();
  ~FabricEndpoint();
  FabricEndpoint(const FabricEndpoint&) = delete;
  FabricEndpoint& operator=(const FabricEndpoint&) = delete;

  /// The endpoint's address, to be exchanged with the peers (opaque bytes).
  const std::vector<uint8_t>& name() const { return name_; }
  /// The provider as libfabric reports it ("net", "tcp;ofi_rxm", "shm").
  const std::string& provider() const { return provider_; }
  /// The domain (NIC, or "lo"/"shm") the endpoint uses.
  const std::string& domain_name() const { return domain_name_; }
  /// Inserts a peer's address; returns its fi_addr_t.
  Result<uint64_t> insert(const std::vector<uint8_t>& peer_name);
  /// shm provider: removes this endpoint's region file from /dev/shm (the mapping stays). Only once every peer
  /// has inserted this endpoint's address: the provider maps a peer's region at insertion and never opens it
  /// by name again, so afterwards no exit path (SIGKILL included) can leave the file behind. No-op otherwise.
  void unlink_shm_file();

  /// Posts a tagged send / receive. Returns false when the provider's queue is full (progress, then
  /// retry). The buffer and `ctx` must stay valid until the completion.
  Result<bool> send(uint64_t peer, const void* buf, size_t len, uint64_t tag, FabricOpContext* ctx);
  Result<bool> recv(uint64_t peer, void* buf, size_t len, uint64_t tag, FabricOpContext* ctx);
  /// Cancels a posted operation (it completes with an error, or not at all if it already completed).
  void cancel(FabricOpContext* ctx);

  /// shm provider: this endpoint's doorbell, for peers (null for other providers, or when the process has none
  /// left). A peer that sends to this endpoint rings it (set_peer_bell), so that poll() can sleep on it.
  const BellAddress* bell_address() const { return bell_ ? &bell_->address() : nullptr; }
  /// Rings `bell` after every send to `peer` (an address insert() returned) while sleep_on_bell is on.
  void set_peer_bell(uint64_t peer, Doorbell* bell);
  /// Lets poll() sleep on this endpoint's bell instead of yielding, once every peer that can send to it rings it
  /// (FabricComm::seal checks that they all can). Only while every operation in flight is one the provider
  /// delivers within its post (no larger than the inject size): a large message needs the peer's progress, which
  /// rings no bell.
  void sleep_on_bell(bool on) { bell_sleep_ = on && bell_ != nullptr; }
  bool sleeps_on_bell() const { return bell_sleep_; }

  /// Drives progress and returns up to `max` completions. With none available it waits up to
  /// `timeout_ms` on the completion queue's wait object (or yields the core where the provider has none):
  /// an idle rank sleeps, it does not spin.
  /// `yield_us`: before blocking, keep reading for this long, yielding the core between reads (peers that
  /// share it run; a reply a few microseconds away is not a sleep/wake-up).
  Result<size_t> poll(FabricCompletion* out, size_t max, int timeout_ms, int yield_us = 0);

 private:
  FabricEndpoint() = default;
  /// A completion of `ctx` arrived: it no longer counts as a large operation in flight.
  void settle(FabricOpContext* ctx);
  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_av* av_ = nullptr;
  fid_cq* cq_ = nullptr;
  fid_ep* ep_ = nullptr;
  bool cq_waits_ = false;     ///< the CQ has a wait object: fi_cq_sread blocks
  bool yield_reads_ = false;  ///< no usable wait object (shm): wait by reading and yielding, up to the timeout
  std::unique_ptr<FabricBell> bell_;  ///< shm: rung by peers that send here
  std::vector<Doorbell*> peer_bells_;  ///< by peer address: the bell to ring after a send (null: none)
  bool bell_sleep_ = false;            ///< sleep_on_bell
  size_t inject_size_ = 0;             ///< the provider's inject size: messages up to it arrive within the post
  uint32_t large_inflight_ = 0;        ///< posted operations longer than inject_size_, not completed yet
  std::string provider_;
  std::string domain_name_;
  std::vector<uint8_t> name_;
  std::string shm_file_;  ///< shm provider: the region's name in /dev/shm, removed at exit if still open
};

/// libfabric's provider names for a Genie provider name, in the order open() tries them: "tcp" -> "net" (libfabric
/// 1.17's native tagged-RDM provider over TCP), then "tcp;ofi_rxm"; "verbs" -> "verbs;ofi_rxm"; any other name as
/// given ("shm", "efa", "tcp;ofi_rxm", ...).
std::vector<std::string> libfabric_provider_names(const std::string& provider);

}  // namespace genie::shim
