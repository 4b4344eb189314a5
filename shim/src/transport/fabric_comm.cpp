// SPDX-License-Identifier: Apache-2.0
// FabricComm: endpoints, address exchange and the one completion-driving loop every exchange uses.
#include "transport/fabric_comm.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

#include "genie/common/config.hpp"
#include "genie/common/log.hpp"
#include "genie/common/shm_names.hpp"

namespace genie::shim {
namespace {

const config::Param<int64_t> kPollSliceMs{
    "shim.fabric_wait_ms", 50,
    "Real fabric: longest a rank blocks on its completion queue in one go before it drives progress again and "
    "checks for abort and timeouts (ms).",
    {}, 1.0, 1000.0};

const config::Param<int64_t> kYieldUs{
    "shim.fabric_yield_us", 200,
    "Real fabric: how long an idle rank keeps reading its completion queue, yielding the core between reads, "
    "before it blocks (us).",
    {}, 0.0, 100000.0};

const config::Param<bool> kBells{
    "shim.fabric_doorbells", true,
    "Real fabric, shm provider: an idle rank sleeps on a futex its peers ring when they send to it (off: it waits "
    "by yielding the core between completion reads, as libfabric shm's own wait does)."};

const config::Param<int64_t> kBellYieldUs{
    "shim.fabric_doorbell_yield_us", 1000,
    "Real fabric, shm provider with doorbells: how long an idle rank keeps reading its completion queue, yielding "
    "the core between reads, before it sleeps on its doorbell (us). Waking a sleeper costs the peer a system call "
    "and the sleeper a wake-up on its CPU, so waits within a collective are better spent yielding.",
    {}, 0.0, 100000.0};

int yield_us(const FabricEndpoint& ep) {
  static const int plain = static_cast<int>(config::global().get(kYieldUs));
  static const int bell = static_cast<int>(config::global().get(kBellYieldUs));
  return ep.sleeps_on_bell() ? bell : plain;
}

// Both endpoints' bells, as a rank publishes them in its address blob (absent when either has none).
struct BellPair {
  BellAddress data, ctrl;
};

// How often the checks (abort, dead peers) run while completions keep arriving.
constexpr int kCheckEveryMs = 50;

int poll_slice_ms() {
  static const int v = static_cast<int>(config::global().get(kPollSliceMs));
  return v;
}

void put_name(std::vector<uint8_t>& out, const std::vector<uint8_t>& name) {
  const auto len = static_cast<uint16_t>(name.size());
  out.push_back(static_cast<uint8_t>(len & 0xff));
  out.push_back(static_cast<uint8_t>(len >> 8));
  out.insert(out.end(), name.begin(), name.end());
}

Result<std::vector<uint8_t>> get_name(const std::vector<uint8_t>& blob, size_t* pos) {
  if (*pos + 2 > blob.size()) return Status(Errc::kRemote, "malformed fabric address from a peer");
  const size_t len = blob[*pos] | (static_cast<size_t>(blob[*pos + 1]) << 8);
  *pos += 2;
  if (*pos + len > blob.size()) return Status(Errc::kRemote, "malformed fabric address from a peer");
  std::vector<uint8_t> n(blob.begin() + static_cast<long>(*pos), blob.begin() + static_cast<long>(*pos + len));
  *pos += len;
  return n;
}

}  // namespace

Result<std::unique_ptr<FabricComm>> FabricComm::open(const std::string& provider, const std::string& src_addr,
                                                     int gpu) {
  auto fc = std::unique_ptr<FabricComm>(new FabricComm());
  GENIE_ASSIGN_OR_RETURN(fc->data_, FabricEndpoint::open(provider, src_addr, gpu));
  GENIE_ASSIGN_OR_RETURN(fc->ctrl_, FabricEndpoint::open(provider, src_addr, gpu));
  return fc;
}

std::vector<uint8_t> FabricComm::local_blob() const {
  std::vector<uint8_t> out;
  put_name(out, data_->name());
  put_name(out, ctrl_->name());
  std::vector<uint8_t> bells;
  if (data_->bell_address() && ctrl_->bell_address()) {
    const BellPair b{*data_->bell_address(), *ctrl_->bell_address()};
    bells.resize(sizeof(b));
    std::memcpy(bells.data(), &b, sizeof(b));
  }
  put_name(out, bells);
  return out;
}

Status FabricComm::connect(int rank, const std::vector<std::vector<uint8_t>>& blobs, std::vector<std::string> hosts) {
  rank_ = rank;
  hosts_ = std::move(hosts);
  data_addr_.clear();
  ctrl_addr_.clear();
  peer_names_.clear();
  // Bells: every peer must be able to ring both of this rank's endpoints, and this rank every peer's, before any
  // of them sleeps on one (seal() agrees on it).
  bells_ok_ = config::global().get(kBells) && data_->bell_address() != nullptr && ctrl_->bell_address() != nullptr;
  for (size_t r = 0; r < blobs.size(); ++r) {
    const auto& b = blobs[r];
    size_t pos = 0;
    GENIE_ASSIGN_OR_RETURN(auto dn, get_name(b, &pos));
    GENIE_ASSIGN_OR_RETURN(auto cn, get_name(b, &pos));
    std::vector<uint8_t> bn;
    if (pos < b.size()) {
      GENIE_ASSIGN_OR_RETURN(bn, get_name(b, &pos));
    }
    peer_names_.push_back({dn, cn});
    GENIE_ASSIGN_OR_RETURN(uint64_t da, data_->insert(dn));
    GENIE_ASSIGN_OR_RETURN(uint64_t ca, ctrl_->insert(cn));
    data_addr_.push_back(da);
    ctrl_addr_.push_back(ca);
    if (static_cast<int>(r) == rank || !bells_ok_) continue;
    const bool same_host = hosts_.size() != blobs.size() || hosts_[r] == hosts_[static_cast<size_t>(rank)];
    if (!same_host || bn.size() != sizeof(BellPair)) {
      bells_ok_ = false;
      continue;
    }
    BellPair pair;
    std::memcpy(&pair, bn.data(), sizeof(pair));
    Result<Doorbell*> db = resolve_bell(pair.data);
    Result<Doorbell*> cb = db.is_ok() ? resolve_bell(pair.ctrl) : db;
    if (!db.is_ok() || !cb.is_ok()) {
      GENIE_LOG_DEBUG("shim", "fabric: cannot ring {}'s doorbell ({}); ranks wait by yielding", peer_name(static_cast<int>(r)),
                      (db.is_ok() ? cb : db).status().message());
      bells_ok_ = false;
      continue;
    }
    data_->set_peer_bell(da, db.value());
    ctrl_->set_peer_bell(ca, cb.value());
  }
  return Status::ok();
}

Status FabricComm::seal(const std::function<bool(int)>& peer_dead, std::chrono::milliseconds stall) {
  if (provider() != "shm") return Status::ok();
  FabricWait w;
  w.what = "real-fabric set-up";
  w.stall = stall;
  w.check = [&](const std::vector<int>& waiting_for) -> Status {
    for (int r : waiting_for)
      if (peer_dead && peer_dead(r)) return Status(Errc::kRemote, "peer " + peer_name(r) + " exited during " + w.what);
    return Status::ok();
  };
  std::vector<int> all;
  for (int r = 0; r < nranks(); ++r) all.push_back(r);
  const uint8_t mine = bells_ok_ ? 1 : 0;
  // Sequence 0 on the control endpoint: the communicator's own gathers count from 1.
  GENIE_ASSIGN_OR_RETURN(auto ok, gather(all, &mine, sizeof(mine), 0, w));
  data_->unlink_shm_file();
  ctrl_->unlink_shm_file();
  bool bells = true;
  for (const auto& o : ok) bells = bells && o.size() == 1 && o[0] == 1;
  data_->sleep_on_bell(bells);
  ctrl_->sleep_on_bell(bells);
  GENIE_LOG_DEBUG("shim", "fabric: idle ranks {}", bells ? "yield, then sleep on their doorbells" : "yield (no doorbells)");
  return Status::ok();
}

int FabricComm::remove_dead_peer_files(const std::vector<bool>& dead) const {
  if (provider() != "shm") return 0;
  constexpr const char* kPrefix = "fi_shm://";
  int removed = 0;
  for (size_t r = 0; r < peer_names_.size() && r < dead.size(); ++r) {
    if (!dead[r] || static_cast<int>(r) == rank_) continue;
    for (const auto& raw : peer_names_[r]) {
      std::string n(raw.begin(), raw.end());
      while (!n.empty() && n.back() == '\0') n.pop_back();
      if (n.rfind(kPrefix, 0) == 0) n = n.substr(std::strlen(kPrefix));
      // Only our own naming scheme, one path component, a file of ours: a peer's name is not trusted further.
      if (n.rfind("genie-", 0) != 0 || n.find('/') != std::string::npos) continue;
      if (!shm_names::check_owner_only(n).is_ok()) continue;
      if (::shm_unlink(n.c_str()) == 0) ++removed;
    }
  }
  if (removed > 0)
    GENIE_LOG_INFO("shim", "fabric: removed {} shared-memory file(s) of peers that exited without closing them",
                   removed);
  return removed;
}

std::string FabricComm::peer_name(int r) const {
  std::string s = "rank " + std::to_string(r);
  if (r >= 0 && static_cast<size_t>(r) < hosts_.size() && !hosts_[static_cast<size_t>(r)].empty())
    s += " (host " + hosts_[static_cast<size_t>(r)] + ")";
  return s;
}

Status drive_completions(const FabricComm& fc, FabricEndpoint& ep, const FabricWait& w,
                         const std::function<bool()>& done,
                         const std::function<Status(uint64_t user, const FabricCompletion&)>& on_completion,
                         const std::function<Result<bool>()>& kick, const std::function<std::vector<int>()>& waiting) {
  auto missing = [&] {
    std::string s;
    for (int r : waiting()) s += (s.empty() ? "" : ", ") + fc.peer_name(r);
    return s.empty() ? std::string("no one") : s;
  };
  auto last_check = std::chrono::steady_clock::now();
  auto last_progress = std::chrono::steady_clock::now();
  FabricCompletion comps[16];
  for (;;) {
    GENIE_ASSIGN_OR_RETURN(bool backlog, kick());
    if (done()) return Status::ok();
    GENIE_ASSIGN_OR_RETURN(size_t n, ep.poll(comps, 16, backlog ? 0 : poll_slice_ms(), yield_us(ep)));
    const auto now = std::chrono::steady_clock::now();
    if (w.check && (n == 0 || now - last_check >= std::chrono::milliseconds(kCheckEveryMs))) {
      last_check = now;
      GENIE_TRY(w.check(waiting()));
    }
    if (n > 0) last_progress = now;
    for (size_t i = 0; i < n; ++i) {
      if (comps[i].ctx == nullptr) continue;
      GENIE_TRY(on_completion(comps[i].ctx->user, comps[i]));
    }
    if (n == 0 && w.stall.count() > 0 && now - last_progress >= w.stall) {
      const double s = std::chrono::duration<double>(now - last_progress).count();
      return Status(Errc::kRemote, w.what + ": no progress on the fabric for " + fmt::format("{:.1f}", s) +
                                       " s (GENIE_HANG_TIMEOUT) waiting for " + missing());
    }
  }
}

Status FabricComm::exchange(std::vector<FabricMsg>& msgs, const FabricWait& w, bool control) {
  FabricEndpoint& ep = control ? *ctrl_ : *data_;
  const auto& addr = control ? ctrl_addr_ : data_addr_;
  size_t left = 0;
  for (size_t i = 0; i < msgs.size(); ++i) {
    msgs[i].ctx.user = i;
    msgs[i].posted = msgs[i].done = false;
    ++left;
  }
  size_t next = 0;  // messages are posted in order; receives first keeps unexpected-message buffering low
  auto kick = [&]() -> Result<bool> {
    while (next < msgs.size()) {
      FabricMsg& m = msgs[next];
      const uint64_t a = addr[static_cast<size_t>(m.peer)];
      GENIE_ASSIGN_OR_RETURN(bool ok, m.is_send ? ep.send(a, m.buf, m.len, m.tag, &m.ctx)
                                                : ep.recv(a, m.buf, m.len, m.tag, &m.ctx));
      if (!ok) return true;
      m.posted = true;
      ++next;
    }
    return false;
  };
  auto on = [&](uint64_t user, const FabricCompletion& c) -> Status {
    if (user >= msgs.size()) return Status::ok();
    FabricMsg& m = msgs[user];
    if (!c.status.is_ok()) {
      if (c.status.code() == Errc::kInvalidUsage)
        return Status(Errc::kInvalidUsage, peer_name(m.peer) + " sent more bytes than " + w.what +
                                               " posted a receive for (" + c.status.message() + ")");
      return Status(Errc::kRemote, w.what + ": " + (m.is_send ? "sending to " : "receiving from ") +
                                       peer_name(m.peer) + " failed: " + c.status.message());
    }
    if (!m.done) {
      m.done = true;
      m.received = c.len;
      --left;
    }
    return Status::ok();
  };
  auto waiting = [&] {
    std::vector<int> seen;
    for (const auto& m : msgs)
      if (!m.done && std::find(seen.begin(), seen.end(), m.peer) == seen.end()) seen.push_back(m.peer);
    return seen;
  };
  Status st = drive_completions(*this, ep, w, [&] { return left == 0; }, on, kick, waiting);
  if (!st.is_ok()) {
    for (auto& m : msgs)
      if (m.posted && !m.done) ep.cancel(&m.ctx);
    retire(std::move(msgs));
  }
  return st;
}

Result<std::vector<std::vector<uint8_t>>> FabricComm::gather(const std::vector<int>& members, const void* mine,
                                                             size_t len, uint64_t seq, const FabricWait& w,
                                                             uint32_t set) {
  const auto low = [set](int r) { return (static_cast<uint64_t>(set & 0xfffff) << 20) | (static_cast<uint64_t>(r) & 0xfffff); };
  std::vector<std::vector<uint8_t>> out(members.size(), std::vector<uint8_t>(len));
  std::vector<FabricMsg> msgs;
  for (size_t i = 0; i < members.size(); ++i) {
    const int r = members[i];
    if (r == rank_) {
      std::memcpy(out[i].data(), mine, len);
      continue;
    }
    FabricMsg m;
    m.is_send = false;
    m.peer = r;
    m.buf = out[i].data();
    m.len = len;
    m.tag = make_tag(TagKind::kControl, seq, low(r));
    msgs.push_back(m);
  }
  for (int r : members) {
    if (r == rank_) continue;
    FabricMsg m;
    m.is_send = true;
    m.peer = r;
    m.buf = const_cast<void*>(mine);
    m.len = len;
    m.tag = make_tag(TagKind::kControl, seq, low(rank_));
    msgs.push_back(m);
  }
  GENIE_TRY(exchange(msgs, w, true));
  for (const auto& m : msgs)
    if (!m.is_send && m.received != len)
      return Status(Errc::kRemote, w.what + ": " + peer_name(m.peer) + " sent " + std::to_string(m.received) +
                                       " bytes where " + std::to_string(len) + " were expected");
  return out;
}

}  // namespace genie::shim
