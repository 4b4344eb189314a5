// SPDX-License-Identifier: Apache-2.0
// FabricEndpoint over libfabric: getinfo with tagged RDM hints, fabric/domain/AV/CQ/EP set-up, tagged
// send/recv, completion reads that block on the CQ's wait object when the provider has one.
#include "transport/fabric_endpoint.hpp"

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include "genie/common/config.hpp"
#include "genie/common/log.hpp"
#include "genie/common/shm_names.hpp"
#include "genie/common/thread_util.hpp"
#include "transport/nic_locality.hpp"

namespace genie::shim {
namespace {

// Completion reads made before blocking on the wait object: a reply that arrives within a few
// microseconds is seen without a sleep/wake-up, and an idle rank stops using the core after this many.
constexpr int kSpinReads = 64;

std::string fi_text(const char* what, int rc) { return std::string(what) + ": " + fi_strerror(-rc); }

bool uses_ip(const std::string& prov) {
  return prov.rfind("tcp", 0) == 0 || prov == "net" || prov.rfind("verbs", 0) == 0 || prov.rfind("sockets", 0) == 0 ||
         prov.rfind("udp", 0) == 0;
}

fi_info* make_hints(const std::string& lf_prov) {
  fi_info* h = fi_allocinfo();
  h->ep_attr->type = FI_EP_RDM;
  h->caps = FI_TAGGED;
  h->mode = FI_CONTEXT | FI_CONTEXT2;
  h->domain_attr->mr_mode = 0;  // no memory registration: sends and receives of plain host memory
  h->domain_attr->threading = FI_THREAD_DOMAIN;
  h->tx_attr->msg_order = 0;
  if (!lf_prov.empty()) h->fabric_attr->prov_name = strdup(lf_prov.c_str());
  return h;
}

// libfabric's shm provider names each endpoint's region after the getinfo node ("fi_shm://<node>:<uid>:<n>"),
// by default the pid: predictable, so another user could create the file first (the provider reuses a file
// whose recorded pid is dead). Ours is genie-<job tag>-<64 random bits>, and genie run removes what a killed
// rank of its job left behind (docs/SECURITY.md).
constexpr const char* kShmAddrPrefix = "fi_shm://";

bool is_shm(const std::string& lf) { return lf == "shm"; }

// A domain as NicDesc: its name and, where the provider fills in the NIC's bus, its PCI address.
NicDesc nic_desc(const fi_info* i) {
  NicDesc d;
  d.domain = i->domain_attr->name ? i->domain_attr->name : "";
  if (i->nic && i->nic->bus_attr && i->nic->bus_attr->bus_type == FI_BUS_PCI) {
    const fi_pci_attr& p = i->nic->bus_attr->attr.pci;
    d.pci = std::array<unsigned, 4>{p.domain_id, p.bus_id, p.device_id, p.function_id};
  }
  return d;
}

// shm regions of endpoints still open. libfabric removes a region's file when the endpoint closes and on
// SIGINT/SIGTERM/SIGSEGV/SIGBUS, but not at a plain exit(): a program that never destroys its communicators
// (many do not) would leave them in /dev/shm. exit() runs this list's handler; _exit() and SIGKILL leave them
// to the communicator's survivors (FabricComm::remove_dead_peer_files) and to genie run.
struct OpenShmFiles {
  std::mutex mu;
  std::set<std::string> names;
};
OpenShmFiles& open_shm_files() {
  static auto* f = new OpenShmFiles();  // never destroyed: the exit handler uses it
  return *f;
}
void remember_shm_file(const std::string& name) {
  static std::once_flag once;
  std::call_once(once, [] {
    std::atexit([] {
      auto& f = open_shm_files();
      std::lock_guard lk(f.mu);
      for (const auto& n : f.names) ::shm_unlink(n.c_str());
      f.names.clear();
    });
  });
  auto& f = open_shm_files();
  std::lock_guard lk(f.mu);
  f.names.insert(name);
}
void forget_shm_file(const std::string& name) {
  auto& f = open_shm_files();
  std::lock_guard lk(f.mu);
  f.names.erase(name);
}

// "tcp;ofi_rxm" -> "tcp", "verbs;ofi_rxm" -> "verbs": the names users give.
std::string user_name(const std::string& lf) {
  auto semi = lf.find(';');
  return semi == std::string::npos ? lf : lf.substr(0, semi);
}

// Every getenv/setenv of libfabric's variables here holds this lock: ranks of one process open endpoints from
// several threads at once.
std::mutex& libfabric_env_mutex() {
  static std::mutex mu;
  return mu;
}

// Provider settings libfabric reads once, when it first initialises its providers: set before our first call
// into it, each only where the user has not set it.
// FI_NET_MAX_SAVED=0: libfabric 1.17's net provider keeps up to 4 small (<= 128-byte) messages that arrive before
// their receive is posted in a "saved" list, and a receive posted later matches them but its completion is lost
// (reproduced by EarlyMessage.ArrivingBeforeItsReceiveIsDelivered: an ungrouped ncclSend then ncclRecv around a
// ring of 3 ranks hung). With none saved, such a message waits in the socket until its receive is posted, which
// completes normally.
void set_libfabric_defaults() {
  std::lock_guard lk(libfabric_env_mutex());
  static bool done = false;
  if (done) return;
  ::setenv("FI_NET_MAX_SAVED", "0", 0);
  done = true;
}

}  // namespace

std::vector<std::string> libfabric_provider_names(const std::string& provider) {
  // "tcp": libfabric 1.17's native tagged-RDM provider over TCP ("net") first, then rxm over the tcp msg provider
  // (libfabric 1.18 renamed net to tcp; there "tcp" opens rxm, the path tested on libfabric 1.17 too). Measured on
  // a 4-host testbed at 1 Gbit/s (docs/fabric.md): over rxm a ring all-reduce of 1-4 MiB took 14-32% longer than
  // netsim's time for those links, over net within 2%.
  if (provider == "tcp") return {"net", "tcp;ofi_rxm"};
  if (provider == "verbs") return {"verbs;ofi_rxm"};
  return {provider};
}

const config::Param<std::string> kShmCma{
    "shim.fabric_shm_cma", "auto",
    "Real fabric, shm provider: how large messages move between processes of one host: auto (bounce buffers "
    "both sides copy while there is a CPU per rank on the host, else the receiver reads the sender's memory "
    "with CMA), on (always CMA), off (never). Ignored when FI_SHM_DISABLE_CMA is set.",
    {"auto", "on", "off"}};

std::string FabricEndpoint::shm_copy_rule(int ranks_on_host, int cpus, const std::string& mode, const char* user) {
  if (user != nullptr)
    return std::strcmp(user, "0") == 0 || std::strcmp(user, "false") == 0 || std::strcmp(user, "no") == 0 ? "cma"
                                                                                                          : "sar";
  if (mode == "on") return "cma";
  if (mode == "off") return "sar";
  // Measured (docs/BENCHMARKS.md): 2 ranks on 2 CPUs, bounce buffers 0.8-2.6 GB/s busbw against 0.7-1.2 with CMA
  // (the receiver holds its queue's lock through each process_vm_readv while the sender spins on it); 4 ranks on
  // 2 CPUs, bounce buffers 0.02-0.65 GB/s against 0.15-0.9 (each segment waits for the peer to be scheduled).
  return ranks_on_host > cpus ? "cma" : "sar";
}

std::string FabricEndpoint::choose_shm_copy(int ranks_on_host) {
  static std::string decided;
  std::lock_guard lk(libfabric_env_mutex());
  if (!decided.empty()) return decided;
  const int cpus = std::max(1, static_cast<int>(allowed_cpus().size()));
  const char* user = std::getenv("FI_SHM_DISABLE_CMA");
  decided = shm_copy_rule(ranks_on_host, cpus, config::global().get(kShmCma), user);
  if (user == nullptr) ::setenv("FI_SHM_DISABLE_CMA", decided == "cma" ? "0" : "1", 0);
  return decided;
}

std::vector<std::string> FabricEndpoint::available_providers() {
  set_libfabric_defaults();
  fi_info* hints = make_hints("");
  fi_info* info = nullptr;
  std::set<std::string> names;
  if (fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, hints, &info) == 0) {
    for (fi_info* i = info; i; i = i->next) names.insert(user_name(i->fabric_attr->prov_name));
    fi_freeinfo(info);
  }
  fi_freeinfo(hints);
  return {names.begin(), names.end()};
}

Result<std::unique_ptr<FabricEndpoint>> FabricEndpoint::open(const std::string& provider, const std::string& src_addr,
                                                             int gpu) {
  set_libfabric_defaults();
  // The first of the provider's libfabric names that libfabric offers. `all` owns getinfo's list until the end;
  // `entries` are the ones named exactly like the candidate (where there are none, every entry it gave: a name
  // such as "udp" is answered by the layered "udp;ofi_rxd").
  std::unique_ptr<fi_info, void (*)(fi_info*)> all(nullptr, fi_freeinfo);
  std::vector<fi_info*> entries;
  bool ip = false;
  int rc = -FI_ENODATA;
  for (const std::string& cand : libfabric_provider_names(provider)) {
    ip = uses_ip(cand) && !src_addr.empty();
    std::string node = ip ? src_addr : std::string();
    if (is_shm(cand)) {
      GENIE_ASSIGN_OR_RETURN(std::string tag, shm_names::job_tag());
      GENIE_ASSIGN_OR_RETURN(node, shm_names::unique_name(tag));
    }
    fi_info* hints = make_hints(cand);
    fi_info* got = nullptr;
    rc = fi_getinfo(FI_VERSION(1, 17), node.empty() ? nullptr : node.c_str(), nullptr, node.empty() ? 0 : FI_SOURCE,
                    hints, &got);
    fi_freeinfo(hints);
    all.reset(got);
    if (rc != 0 || got == nullptr) continue;
    for (fi_info* i = got; i; i = i->next)
      if (i->fabric_attr->prov_name != nullptr && cand == i->fabric_attr->prov_name) entries.push_back(i);
    if (entries.empty())
      for (fi_info* i = got; i; i = i->next) entries.push_back(i);
    break;
  }
  if (entries.empty()) {
    std::string avail;
    for (const auto& p : available_providers()) avail += (avail.empty() ? "" : ", ") + p;
    if (avail.empty()) avail = "none";
    return unsupported("libfabric provider '" + provider + "' is not available" +
                       (ip ? " on address " + src_addr : std::string()) + " (" + fi_strerror(-rc) +
                       "); providers present on this machine: " + avail);
  }
  const std::string lf = entries[0]->fabric_attr->prov_name ? entries[0]->fabric_attr->prov_name : provider;
  // One NIC per emulated GPU where there are several: the distinct domains, in libfabric's order, and among
  // them the nearest to this process's CPUs (hwloc).
  std::vector<fi_info*> domains;
  for (fi_info* i : entries) {
    bool seen = false;
    for (fi_info* d : domains) seen |= std::strcmp(d->domain_attr->name, i->domain_attr->name) == 0;
    if (!seen) domains.push_back(i);
  }
  std::vector<int> distances(domains.size(), -1);
  std::string cpus, placed;
  if (domains.size() > 1) {
    auto topo = HostTopology::this_machine();
    if (topo.is_ok()) {
      cpus = (*topo)->bound_cpus();
      for (size_t k = 0; k < domains.size(); ++k) {
        distances[k] = (*topo)->distance(nic_desc(domains[k]), cpus);
        placed += std::string(k ? ", " : "") + domains[k]->domain_attr->name + " " +
                  (distances[k] < 0 ? std::string("unknown") : std::to_string(distances[k]));
      }
    } else {
      GENIE_LOG_WARN("shim", "fabric: NIC locality unknown ({}); GPU k uses NIC k mod #NICs", topo.status().message());
    }
  }
  const size_t pick = choose_nic(distances, gpu);
  fi_info* info = fi_dupinfo(domains[pick]);  // owned by the endpoint (info_), freed by its destructor
  if (info == nullptr) return system_error("fi_dupinfo failed");
  auto ep = std::unique_ptr<FabricEndpoint>(new FabricEndpoint());
  ep->info_ = info;
  ep->domain_name_ = info->domain_attr->name ? info->domain_attr->name : "";
  if (domains.size() > 1)
    GENIE_LOG_INFO("shim", "fabric: GPU {} uses domain {} (NIC {} of {} {} domains; distance from CPUs {}: {})", gpu,
                   ep->domain_name_, pick, domains.size(), provider, cpus.empty() ? "?" : cpus,
                   placed.empty() ? "unknown" : placed);
  ep->provider_ = info->fabric_attr->prov_name;
  if ((rc = fi_fabric(info->fabric_attr, &ep->fabric_, nullptr)) != 0) return system_error(fi_text("fi_fabric", rc));
  if ((rc = fi_domain(ep->fabric_, info, &ep->domain_, nullptr)) != 0) return system_error(fi_text("fi_domain", rc));
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  if ((rc = fi_av_open(ep->domain_, &av_attr, &ep->av_, nullptr)) != 0) return system_error(fi_text("fi_av_open", rc));
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_TAGGED;
  cq_attr.size = 4096;
  // The shm provider's only wait object is FI_WAIT_YIELD, whose wait ignores the timeout in libfabric 1.17
  // (util_wait_yield_run spins on sched_yield until a completion arrives): fi_cq_sread would never return while a
  // peer is dead, so no abort, dead-peer or hang check would run. We do the same yielding reads ourselves, up to
  // the timeout.
  rc = -FI_ENOSYS;
  ep->yield_reads_ = is_shm(lf);
  if (!ep->yield_reads_) {
    cq_attr.wait_obj = FI_WAIT_UNSPEC;
    rc = fi_cq_open(ep->domain_, &cq_attr, &ep->cq_, nullptr);
  }
  ep->cq_waits_ = rc == 0;
  if (rc != 0) {  // a provider without wait objects: poll and yield
    cq_attr.wait_obj = FI_WAIT_NONE;
    if ((rc = fi_cq_open(ep->domain_, &cq_attr, &ep->cq_, nullptr)) != 0)
      return system_error(fi_text("fi_cq_open", rc));
  }
  if ((rc = fi_endpoint(ep->domain_, info, &ep->ep_, nullptr)) != 0) return system_error(fi_text("fi_endpoint", rc));
  if ((rc = fi_ep_bind(ep->ep_, &ep->av_->fid, 0)) != 0) return system_error(fi_text("fi_ep_bind(av)", rc));
  if ((rc = fi_ep_bind(ep->ep_, &ep->cq_->fid, FI_TRANSMIT | FI_RECV)) != 0)
    return system_error(fi_text("fi_ep_bind(cq)", rc));
  if ((rc = fi_enable(ep->ep_)) != 0) return system_error(fi_text("fi_enable", rc));
  size_t len = 0;
  rc = fi_getname(&ep->ep_->fid, nullptr, &len);
  ep->name_.resize(std::max<size_t>(len, 1));
  if ((rc = fi_getname(&ep->ep_->fid, ep->name_.data(), &len)) != 0) return system_error(fi_text("fi_getname", rc));
  ep->name_.resize(len);
  if (is_shm(lf)) {
    // The region must be ours alone: created by the provider with O_EXCL and mode 0600 under a fresh name.
    std::string file(ep->name_.begin(), ep->name_.end());
    while (!file.empty() && file.back() == '\0') file.pop_back();
    if (file.rfind(kShmAddrPrefix, 0) == 0) file = file.substr(std::strlen(kShmAddrPrefix));
    GENIE_TRY(shm_names::check_owner_only(file));
    ep->shm_file_ = file;
    remember_shm_file(file);
    ep->bell_ = FabricBell::acquire();
    ep->inject_size_ = info->tx_attr ? info->tx_attr->inject_size : 0;
  }
  GENIE_LOG_DEBUG("shim", "fabric endpoint open: provider {} ({} byte address, {})", ep->provider_, len,
                  ep->cq_waits_ ? "blocking completion reads" : "polled completions");
  return ep;
}

FabricEndpoint::~FabricEndpoint() {
  if (ep_) fi_close(&ep_->fid);  // the shm provider removes its region's file here
  if (!shm_file_.empty()) forget_shm_file(shm_file_);
  if (cq_) fi_close(&cq_->fid);
  if (av_) fi_close(&av_->fid);
  if (domain_) fi_close(&domain_->fid);
  if (fabric_) fi_close(&fabric_->fid);
  if (info_) fi_freeinfo(info_);
}

void FabricEndpoint::unlink_shm_file() {
  if (shm_file_.empty()) return;
  (void)::shm_unlink(shm_file_.c_str());
  forget_shm_file(shm_file_);
  shm_file_.clear();
}

Result<uint64_t> FabricEndpoint::insert(const std::vector<uint8_t>& peer_name) {
  fi_addr_t a = FI_ADDR_UNSPEC;
  int rc = fi_av_insert(av_, peer_name.data(), 1, &a, 0, nullptr);
  if (rc != 1) return system_error("fi_av_insert: could not add a peer's address (" + std::to_string(rc) + ")");
  return static_cast<uint64_t>(a);
}

void FabricEndpoint::set_peer_bell(uint64_t peer, Doorbell* bell) {
  if (peer >= peer_bells_.size()) peer_bells_.resize(peer + 1, nullptr);
  peer_bells_[peer] = bell;
}

Result<bool> FabricEndpoint::send(uint64_t peer, const void* buf, size_t len, uint64_t tag, FabricOpContext* ctx) {
  ctx->large = len > inject_size_;
  ssize_t rc = fi_tsend(ep_, buf, len, nullptr, peer, tag, ctx);
  // Posted: the message (or, when large, its announcement) is in the peer's queue now. Not posted for now: the
  // peer has to make progress first (accept our connection request, empty its queue), so it must not sleep either.
  // Only where the communicator agreed to use bells (its ranks all sleep on theirs): no peer's line is written per
  // message otherwise.
  if (bell_sleep_ && (rc == 0 || rc == -FI_EAGAIN) && peer < peer_bells_.size() && peer_bells_[peer] != nullptr)
    peer_bells_[peer]->ring();
  if (rc == 0) {
    large_inflight_ += ctx->large ? 1 : 0;
    return true;
  }
  if (rc == -FI_EAGAIN) return false;
  return Status(Errc::kSystem, fi_text("fi_tsend", static_cast<int>(rc)));
}

Result<bool> FabricEndpoint::recv(uint64_t peer, void* buf, size_t len, uint64_t tag, FabricOpContext* ctx) {
  ctx->large = len > inject_size_;
  ssize_t rc = fi_trecv(ep_, buf, len, nullptr, peer, tag, 0, ctx);
  if (rc == 0) {
    large_inflight_ += ctx->large ? 1 : 0;
    return true;
  }
  if (rc == -FI_EAGAIN) return false;
  return Status(Errc::kSystem, fi_text("fi_trecv", static_cast<int>(rc)));
}

void FabricEndpoint::cancel(FabricOpContext* ctx) { (void)fi_cancel(&ep_->fid, ctx); }

Result<size_t> FabricEndpoint::poll(FabricCompletion* out, size_t max, int timeout_ms, int yield_us) {
  fi_cq_tagged_entry entries[32];
  max = std::min<size_t>(max, 32);
  ssize_t n = -FI_EAGAIN;
  auto read = [&] {
    n = fi_cq_read(cq_, entries, max);
    return n != -FI_EAGAIN;
  };
  for (int i = 0; i < kSpinReads && !read(); ++i) {
  }
  if (n == -FI_EAGAIN && timeout_ms > 0 && yield_us > 0) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(yield_us);
    while (n == -FI_EAGAIN && std::chrono::steady_clock::now() < until) {
      sched_yield();
      read();
    }
  }
  if (n == -FI_EAGAIN && timeout_ms > 0) {
    if (cq_waits_) {
      n = fi_cq_sread(cq_, entries, max, nullptr, timeout_ms);
    } else {
      // No wait object: sleep on the bell where every peer rings it and nothing in flight needs a peer's progress,
      // else give the core away between reads (a yield where the provider's own wait would yield, a short sleep
      // otherwise), up to the timeout.
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
      for (auto now = std::chrono::steady_clock::now(); n == -FI_EAGAIN && now < until;
           now = std::chrono::steady_clock::now()) {
        if (bell_sleep_ && large_inflight_ == 0) {
          bell_->bell().sleep_unless(read, std::chrono::duration_cast<std::chrono::nanoseconds>(until - now).count());
          continue;
        }
        if (yield_reads_)
          sched_yield();
        else
          std::this_thread::sleep_for(std::chrono::microseconds(20));
        read();
      }
      if (n == -FI_EAGAIN) read();  // a ring that woke the sleep at the deadline
    }
  }
  if (n == -FI_EAGAIN || n == -FI_ETIMEDOUT || n == -FI_EINTR) return size_t{0};
  if (n == -FI_EAVAIL) {
    fi_cq_err_entry err{};
    if (fi_cq_readerr(cq_, &err, 0) != 1) return size_t{0};
    char buf[256] = {};
    const char* prov = fi_cq_strerror(cq_, err.prov_errno, err.err_data, buf, sizeof(buf));
    out[0].ctx = static_cast<FabricOpContext*>(err.op_context);
    out[0].len = err.len;
    const Errc code = err.err == FI_ETRUNC ? Errc::kInvalidUsage : Errc::kRemote;
    out[0].status = Status(code, std::string(fi_strerror(err.err)) + (prov && *prov ? std::string(" (") + prov + ")" : "") +
                                     (err.err == FI_ETRUNC ? ", " + std::to_string(err.olen) + " bytes more than posted" : ""));
    settle(out[0].ctx);
    return size_t{1};
  }
  if (n < 0) return Status(Errc::kSystem, fi_text("fi_cq_read", static_cast<int>(n)));
  for (ssize_t i = 0; i < n; ++i) {
    out[i].ctx = static_cast<FabricOpContext*>(entries[i].op_context);
    out[i].len = entries[i].len;
    out[i].status = Status::ok();
    settle(out[i].ctx);
  }
  return static_cast<size_t>(n);
}

void FabricEndpoint::settle(FabricOpContext* ctx) {
  if (ctx != nullptr && ctx->large && large_inflight_ > 0) {
    ctx->large = false;
    --large_inflight_;
  }
}

}  // namespace genie::shim
