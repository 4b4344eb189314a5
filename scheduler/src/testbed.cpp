// SPDX-License-Identifier: Apache-2.0
// Testbed: namespaces, veth pairs, bridge and TBF through ip(8)/tc(8); state file; link measurements with
// sockets created inside the namespaces (a socket's namespace is fixed when it is created).
#include "genie/sched/testbed.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

namespace genie::sched {
namespace {

using json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

// TBF queue: packets wait at most this long before TBF drops them (a deep enough queue for TCP at these
// rates; DESIGN.md measured 0.956 x rate goodput with it).
constexpr const char* kTbfLatency = "50ms";
// Ports of the measurement sockets inside the testbed.
constexpr uint16_t kPingPort = 47001;
constexpr uint16_t kStreamPort = 47002;
constexpr int kPingRounds = 400;
// GPUs per host in the testbed's topology: as many ranks as a server has GPUs can share one host.
constexpr int kGpusPerHost = 8;
constexpr auto kStreamWarmup = std::chrono::milliseconds(200);
constexpr auto kStreamMeasure = std::chrono::milliseconds(600);

// Runs argv, returns stdout; on failure the message has the command and its stderr.
Result<std::string> run(const std::vector<std::string>& argv) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) return system_error("pipe failed");
  pid_t pid = fork();
  if (pid < 0) return system_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    std::vector<char*> a;
    for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
    a.push_back(nullptr);
    execvp(a[0], a.data());
    _exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  std::string o, e;
  pollfd p[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    if (::poll(p, 2, -1) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[4096];
      ssize_t n = ::read(p[i].fd, buf, sizeof(buf));
      if (n > 0) {
        (i == 0 ? o : e).append(buf, static_cast<size_t>(n));
      } else {
        ::close(p[i].fd);
        p[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string cmd;
    for (const auto& s : argv) cmd += (cmd.empty() ? "" : " ") + s;
    while (!e.empty() && (e.back() == '\n' || e.back() == ' ')) e.pop_back();
    return system_error("'" + cmd + "' failed" + (WIFEXITED(status) && WEXITSTATUS(status) == 127 ? " (not found)" : "") +
                        (e.empty() ? "" : ": " + e));
  }
  return o;
}

std::string state_path(const std::string& name) { return testbed_state_dir() + "/testbed-" + name + ".json"; }

json to_json(const Testbed& t) {
  return json{{"name", t.name},
              {"hosts", t.hosts},
              {"link_bits_per_s", t.link_bits_per_s},
              {"burst_bytes", t.burst_bytes},
              {"bridge", t.bridge},
              {"namespaces", t.namespaces},
              {"addresses", t.addresses},
              {"bridge_ports", t.bridge_ports},
              {"latency_note", t.latency_note},
              {"measured_latency_us", t.measured_latency_us},
              {"measured_goodput_bits_per_s", t.measured_goodput_bits_per_s},
              {"measured_ring_goodput_bits_per_s", t.measured_ring_goodput_bits_per_s},
              {"topology_file", t.topology_file}};
}

Status write_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    if (!f) return system_error("cannot write " + tmp + ": " + std::strerror(errno));
    f << text;
    if (!f) return system_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return system_error("cannot rename " + tmp + ": " + std::strerror(errno));
  return Status::ok();
}

Status save(const Testbed& t) {
  ::mkdir(testbed_state_dir().c_str(), 0755);
  return write_file(state_path(t.name), to_json(t).dump(2) + "\n");
}

// Removes what `t` lists (ignoring parts already gone): namespaces take their veth end with them, which
// also deletes the peer on the bridge.
void teardown(const Testbed& t) {
  for (const auto& p : t.bridge_ports) (void)run({"ip", "link", "del", p});
  for (const auto& ns : t.namespaces) (void)run({"ip", "netns", "del", ns});
  if (!t.bridge.empty()) (void)run({"ip", "link", "del", t.bridge});
}

// Runs `fn` on a thread inside the network namespace `ns`.
template <class Fn>
std::thread in_netns(const std::string& ns, Fn fn) {
  return std::thread([ns, fn]() mutable {
    int fd = ::open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
      if (fd >= 0) ::close(fd);
      return;
    }
    ::close(fd);
    fn();
  });
}

sockaddr_in addr_of(const std::string& ip, uint16_t port) {
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  inet_pton(AF_INET, ip.c_str(), &sa.sin_addr);
  return sa;
}

// One-way latency h0 -> h1: median UDP round trip / 2 with 64-byte datagrams.
double measure_latency_us(const Testbed& t) {
  std::atomic<bool> ready{false}, stop{false};
  std::thread server = in_netns(t.namespaces[1], [&] {
    int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa = addr_of(t.addresses[1], kPingPort);
    if (s < 0 || ::bind(s, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0) {
      ready = true;
      if (s >= 0) ::close(s);
      return;
    }
    ready = true;
    char buf[64];
    while (!stop) {
      pollfd p{s, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      sockaddr_in from{};
      socklen_t fl = sizeof(from);
      ssize_t n = ::recvfrom(s, buf, sizeof(buf), 0, reinterpret_cast<sockaddr*>(&from), &fl);
      if (n > 0) ::sendto(s, buf, static_cast<size_t>(n), 0, reinterpret_cast<sockaddr*>(&from), fl);
    }
    ::close(s);
  });
  while (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::vector<double> rtt;
  std::thread client = in_netns(t.namespaces[0], [&] {
    int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) return;
    sockaddr_in to = addr_of(t.addresses[1], kPingPort);
    char buf[64] = {};
    for (int i = 0; i < kPingRounds; ++i) {
      auto t0 = SteadyClock::now();
      if (::sendto(s, buf, sizeof(buf), 0, reinterpret_cast<sockaddr*>(&to), sizeof(to)) < 0) break;
      pollfd p{s, POLLIN, 0};
      if (::poll(&p, 1, 200) <= 0) continue;
      if (::recv(s, buf, sizeof(buf), 0) <= 0) continue;
      rtt.push_back(std::chrono::duration<double, std::micro>(SteadyClock::now() - t0).count());
    }
    ::close(s);
  });
  client.join();
  stop = true;
  server.join();
  if (rtt.empty()) return 0;
  std::sort(rtt.begin(), rtt.end());
  return rtt[rtt.size() / 2] / 2;
}

// TCP payload rate of each flow (source host, destination host), all streaming at once, over kStreamMeasure
// after a warm-up (slow start, TBF bucket drained). Flow k listens on kStreamPort + k in its destination host.
std::vector<double> measure_goodput_bps(const Testbed& t, const std::vector<std::pair<int, int>>& flows) {
  const size_t n = flows.size();
  std::vector<double> rate(n, 0);
  std::atomic<size_t> ready{0};
  std::vector<std::thread> servers, clients;
  for (size_t k = 0; k < n; ++k) {
    const int dst = flows[k].second;
    const uint16_t port = static_cast<uint16_t>(kStreamPort + k);
    servers.push_back(in_netns(t.namespaces[static_cast<size_t>(dst)], [&, k, dst, port] {
      int l = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      int one = 1;
      setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
      sockaddr_in sa = addr_of(t.addresses[static_cast<size_t>(dst)], port);
      if (l < 0 || ::bind(l, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0 || ::listen(l, 1) != 0) {
        ++ready;
        if (l >= 0) ::close(l);
        return;
      }
      ++ready;
      pollfd p{l, POLLIN, 0};
      if (::poll(&p, 1, 3000) <= 0) {
        ::close(l);
        return;
      }
      int c = ::accept4(l, nullptr, nullptr, SOCK_CLOEXEC);
      ::close(l);
      if (c < 0) return;
      std::vector<char> buf(1 << 20);
      const auto t0 = SteadyClock::now();
      uint64_t bytes = 0;
      SteadyClock::time_point m0{}, m1{};
      for (;;) {
        ssize_t got = ::recv(c, buf.data(), buf.size(), 0);
        if (got <= 0) break;
        const auto now = SteadyClock::now();
        if (now - t0 >= kStreamWarmup) {
          if (m0 == SteadyClock::time_point{}) m0 = now;
          else bytes += static_cast<uint64_t>(got);
          m1 = now;
        }
      }
      ::close(c);
      const double secs = std::chrono::duration<double>(m1 - m0).count();
      if (secs > 0) rate[k] = static_cast<double>(bytes) * 8 / secs;
    }));
  }
  while (ready < n) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  for (size_t k = 0; k < n; ++k) {
    const int src = flows[k].first, dst = flows[k].second;
    const uint16_t port = static_cast<uint16_t>(kStreamPort + k);
    clients.push_back(in_netns(t.namespaces[static_cast<size_t>(src)], [&, dst, port] {
      int sock = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in to = addr_of(t.addresses[static_cast<size_t>(dst)], port);
      if (sock < 0 || ::connect(sock, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
        if (sock >= 0) ::close(sock);
        return;
      }
      std::vector<char> buf(1 << 20, 'g');
      const auto until = SteadyClock::now() + kStreamWarmup + kStreamMeasure;
      while (SteadyClock::now() < until)
        if (::send(sock, buf.data(), buf.size(), MSG_NOSIGNAL) <= 0) break;
      ::close(sock);
    }));
  }
  for (auto& c : clients) c.join();
  for (auto& sv : servers) sv.join();
  return rate;
}

// The ring pattern of ring collectives: host i streams to host i+1, every host at once (two hosts: both ways).
// The slowest flow's rate, since a ring step waits for its slowest link.
double measure_ring_goodput_bps(const Testbed& t) {
  std::vector<std::pair<int, int>> flows;
  for (int i = 0; i < t.hosts; ++i) flows.emplace_back(i, (i + 1) % t.hosts);
  const auto r = measure_goodput_bps(t, flows);
  return r.empty() ? 0 : *std::min_element(r.begin(), r.end());
}

std::string num_text(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

std::string rate_text(double bps) {
  std::ostringstream o;
  o << static_cast<uint64_t>(bps) << "bit";
  return o.str();
}

}  // namespace

uint64_t tbf_burst_bytes(double link_bits_per_s) {
  const double per_ms = link_bits_per_s / 8 / 1000;
  return std::max<uint64_t>(64 * 1024, static_cast<uint64_t>(std::ceil(per_ms)));
}

Result<double> parse_rate(const std::string& text) {
  std::string s = text;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  std::string unit = end ? std::string(end) : "";
  double mult = 1;
  if (unit == "" || unit == "bit" || unit == "bps") mult = 1;
  else if (unit == "k" || unit == "kbit") mult = 1e3;
  else if (unit == "m" || unit == "mbit") mult = 1e6;
  else if (unit == "g" || unit == "gbit") mult = 1e9;
  else mult = -1;
  if (end == s.c_str() || mult < 0 || !(v > 0))
    return invalid_argument("--link '" + text + "' is not a rate (examples: 1gbit, 500mbit, 2.5g, 1e9)");
  const double bps = v * mult;
  if (bps < 1e6 || bps > 100e9) return invalid_argument("--link '" + text + "' is outside 1 Mbit/s .. 100 Gbit/s");
  return bps;
}

std::string testbed_state_dir() { return "/run/genie"; }

Result<Testbed> testbed_load(const std::string& name) {
  std::ifstream f(state_path(name));
  if (!f) return not_found("no testbed '" + name + "' is up (no " + state_path(name) + ")");
  try {
    json j = json::parse(f);
    Testbed t;
    t.name = j.at("name").get<std::string>();
    t.hosts = j.at("hosts").get<int>();
    t.link_bits_per_s = j.at("link_bits_per_s").get<double>();
    t.burst_bytes = j.at("burst_bytes").get<uint64_t>();
    t.bridge = j.at("bridge").get<std::string>();
    t.namespaces = j.at("namespaces").get<std::vector<std::string>>();
    t.addresses = j.at("addresses").get<std::vector<std::string>>();
    t.bridge_ports = j.at("bridge_ports").get<std::vector<std::string>>();
    t.latency_note = j.at("latency_note").get<std::string>();
    t.measured_latency_us = j.at("measured_latency_us").get<double>();
    t.measured_goodput_bits_per_s = j.at("measured_goodput_bits_per_s").get<double>();
    // Absent in state files of testbeds brought up before it was measured.
    t.measured_ring_goodput_bits_per_s = j.value("measured_ring_goodput_bits_per_s", 0.0);
    t.topology_file = j.at("topology_file").get<std::string>();
    if (static_cast<int>(t.namespaces.size()) != t.hosts || t.addresses.size() != t.namespaces.size() ||
        t.bridge_ports.size() != t.namespaces.size())
      return invalid_argument(state_path(name) + ": inconsistent host lists");
    // Down removes what the file lists: only names this testbed would have created, so a stale or forged file
    // cannot make it delete anything else.
    auto expect = [&](const std::string& got, const std::string& want) -> Status {
      if (got == want) return Status::ok();
      return invalid_argument(state_path(name) + ": '" + got + "' is not a name testbed " + name + " creates (" + want +
                              "): refusing to touch it");
    };
    GENIE_TRY(expect(t.name, name));
    GENIE_TRY(expect(t.bridge, name + "-br"));
    for (int i = 0; i < t.hosts; ++i) {
      GENIE_TRY(expect(t.namespaces[static_cast<size_t>(i)], name + "-h" + std::to_string(i)));
      GENIE_TRY(expect(t.bridge_ports[static_cast<size_t>(i)], name + "-p" + std::to_string(i)));
    }
    GENIE_TRY(expect(t.topology_file, testbed_state_dir() + "/testbed-" + name + ".topology.json"));
    return t;
  } catch (const std::exception& e) {
    return invalid_argument(state_path(name) + ": " + e.what());
  }
}

std::string testbed_topology_json(const Testbed& tb) {
  // One GPU and one NIC per host, every NIC on the bridge. The link is what TCP streams measured (payload
  // rate, so TCP/IP headers are accounted for) with the measured one-way latency: the slowest stream of a ring
  // of every host streaming at once (the traffic of ring collectives, so the hosts' shared CPUs count), else
  // the one stream h0 -> h1, else TBF's rate.
  const double rate = tb.measured_ring_goodput_bits_per_s > 0 ? tb.measured_ring_goodput_bits_per_s
                      : tb.measured_goodput_bits_per_s > 0    ? tb.measured_goodput_bits_per_s
                                                              : tb.link_bits_per_s;
  json nodes = json::array(), links = json::array();
  nodes.push_back({{"name", tb.name + "-bridge"}, {"kind", "switch"}});
  for (int i = 0; i < tb.hosts; ++i) {
    const std::string h = tb.name + "-h" + std::to_string(i);
    for (int g = 0; g < kGpusPerHost; ++g)
      nodes.push_back({{"name", h + ".gpu" + std::to_string(g)}, {"kind", "gpu"}, {"server", i}});
    nodes.push_back({{"name", h + ".nic"}, {"kind", "nic"}, {"server", i}});
  }
  for (int i = 0; i < tb.hosts; ++i) {
    const std::string h = tb.name + "-h" + std::to_string(i);
    // Inside a host the bytes cross the namespace's loopback: far faster than the link, no latency of note.
    for (int g = 0; g < kGpusPerHost; ++g)
      links.push_back({{"a", h + ".gpu" + std::to_string(g)}, {"b", h + ".nic"}, {"bw_gbytes_per_s", 100.0},
                       {"latency_ns", 0}, {"class", "pcie"}});
    links.push_back({{"a", h + ".nic"},
                     {"b", tb.name + "-bridge"},
                     {"bw_gbytes_per_s", rate / 8 / 1e9},
                     {"latency_ns", std::round(tb.measured_latency_us * 1000 / 2)},
                     {"class", "net"}});
  }
  json j{{"nodes", nodes}, {"links", links}};
  return j.dump(2) + "\n";
}

Result<Testbed> testbed_up(const TestbedSpec& spec, bool* already) {
  *already = false;
  if (geteuid() != 0)
    return invalid_usage("genie testbed needs root: it creates network namespaces, veth pairs, a bridge and tc "
                         "qdiscs (run it as root or with sudo)");
  if (spec.hosts < 1 || spec.hosts > 250) return invalid_argument("--hosts must be 1..250");
  if (spec.name.empty() || spec.name.size() > 8)
    return invalid_argument("testbed name '" + spec.name + "' must be 1..8 characters (interface names)");
  if (auto t = testbed_load(spec.name); t.is_ok()) {
    *already = true;
    return t;
  }
  Testbed t;
  t.name = spec.name;
  t.hosts = spec.hosts;
  t.link_bits_per_s = spec.link_bits_per_s;
  t.burst_bytes = tbf_burst_bytes(spec.link_bits_per_s);
  auto fail = [&](const Status& s) -> Status {
    teardown(t);
    ::unlink(state_path(t.name).c_str());
    return s;
  };
#define GENIE_TB_RUN(...)                                  \
  do {                                                     \
    auto r_ = run({__VA_ARGS__});                          \
    if (!r_.is_ok()) return fail(r_.status());             \
  } while (0)
  // Each name is recorded only once its `add` succeeded: a failed up removes what it created, never a bridge or
  // namespace of that name that existed before (docs/SECURITY.md).
  GENIE_TB_RUN("ip", "link", "add", spec.name + "-br", "type", "bridge");
  t.bridge = spec.name + "-br";
  GENIE_TB_RUN("ip", "link", "set", t.bridge, "up");
  const std::string rate = rate_text(spec.link_bits_per_s);
  const std::string burst = std::to_string(t.burst_bytes);
  bool netem = spec.latency_us >= 0;
  for (int i = 0; i < spec.hosts; ++i) {
    const std::string ns = spec.name + "-h" + std::to_string(i);
    const std::string port = spec.name + "-p" + std::to_string(i);
    const std::string inner = spec.name + "-v" + std::to_string(i);
    const std::string ip = spec.subnet + "." + std::to_string(i + 1);
    GENIE_TB_RUN("ip", "netns", "add", ns);
    t.namespaces.push_back(ns);
    GENIE_TB_RUN("ip", "link", "add", port, "type", "veth", "peer", "name", inner);
    t.bridge_ports.push_back(port);
    t.addresses.push_back(ip);
    GENIE_TB_RUN("ip", "link", "set", inner, "netns", ns);
    GENIE_TB_RUN("ip", "-n", ns, "link", "set", inner, "name", "eth0");
    GENIE_TB_RUN("ip", "-n", ns, "addr", "add", ip + "/24", "dev", "eth0");
    GENIE_TB_RUN("ip", "-n", ns, "link", "set", "lo", "up");
    GENIE_TB_RUN("ip", "-n", ns, "link", "set", "eth0", "up");
    GENIE_TB_RUN("ip", "link", "set", port, "master", t.bridge);
    GENIE_TB_RUN("ip", "link", "set", port, "up");
    // TBF on both ends: the host's egress and the bridge port toward the host (so incast shares the
    // receiver's link). With a latency request, netem (where the kernel has it) sits above TBF.
    for (int side = 0; side < 2; ++side) {
      std::vector<std::string> pre = side == 0 ? std::vector<std::string>{"tc", "-n", ns}
                                               : std::vector<std::string>{"tc"};
      const std::string dev = side == 0 ? "eth0" : port;
      std::vector<std::string> tbf = pre;
      if (netem) {
        auto n = pre;
        for (const char* a : {"qdisc", "add", "dev"}) n.push_back(a);
        n.push_back(dev);
        for (const char* a : {"root", "handle", "1:", "netem", "delay"}) n.push_back(a);
        n.push_back(std::to_string(spec.latency_us / 2) + "us");  // half the one-way latency on each end
        if (!run(n).is_ok()) {
          netem = false;
          t.latency_note = "--latency-us " + num_text(spec.latency_us) +
                           " cannot be honoured: this kernel has no netem qdisc, so the links' latency is what the "
                           "bridge path gives (measured below)";
        }
      }
      for (const char* a : {"qdisc", "add", "dev"}) tbf.push_back(a);
      tbf.push_back(dev);
      if (netem) {
        for (const char* a : {"parent", "1:1", "handle", "10:"}) tbf.push_back(a);
      } else {
        tbf.push_back("root");
      }
      for (const auto& a : {std::string("tbf"), std::string("rate"), rate, std::string("burst"), burst,
                            std::string("latency"), std::string(kTbfLatency)})
        tbf.push_back(a);
      auto r = run(tbf);
      if (!r.is_ok()) return fail(r.status());
    }
  }
  if (spec.latency_us >= 0 && netem) t.latency_note = "netem adds " + num_text(spec.latency_us) + " us one-way";
#undef GENIE_TB_RUN
  if (spec.hosts >= 2) {
    t.measured_latency_us = measure_latency_us(t);
    t.measured_goodput_bits_per_s = measure_goodput_bps(t, {{0, 1}})[0];
    t.measured_ring_goodput_bits_per_s = measure_ring_goodput_bps(t);
  }
  ::mkdir(testbed_state_dir().c_str(), 0755);
  t.topology_file = testbed_state_dir() + "/testbed-" + t.name + ".topology.json";
  const std::string topo = testbed_topology_json(t);
  if (Status s = write_file(t.topology_file, topo); !s.is_ok()) return fail(s);
  if (!spec.topology_out.empty())
    if (Status s = write_file(spec.topology_out, topo); !s.is_ok()) return fail(s);
  if (Status s = save(t); !s.is_ok()) return fail(s);
  return t;
}

Status testbed_down(const std::string& name, bool* was_up) {
  *was_up = false;
  if (geteuid() != 0) return invalid_usage("genie testbed needs root to remove network namespaces and links");
  auto t = testbed_load(name);
  if (!t.is_ok()) {
    if (t.status().code() == Errc::kNotFound) return Status::ok();
    return t.status();
  }
  *was_up = true;
  teardown(*t);
  ::unlink(t->topology_file.c_str());
  ::unlink(state_path(name).c_str());
  return Status::ok();
}

std::vector<std::string> testbed_link_states(const Testbed& tb) {
  std::vector<std::string> out;
  for (int i = 0; i < tb.hosts; ++i) {
    auto inner = run({"ip", "-n", tb.namespaces[static_cast<size_t>(i)], "-o", "link", "show", "dev", "eth0"});
    auto outer = run({"ip", "-o", "link", "show", "dev", tb.bridge_ports[static_cast<size_t>(i)]});
    const bool up = inner.is_ok() && outer.is_ok() && inner->find("LOWER_UP") != std::string::npos &&
                    outer->find("LOWER_UP") != std::string::npos;
    out.push_back(up ? "up" : "down");
  }
  return out;
}

int testbed_enter_host(const char* netns_path, const char* hostname) {
  int fd = ::open(netns_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  if (setns(fd, CLONE_NEWNET) != 0) {
    int e = errno;
    ::close(fd);
    return e;
  }
  ::close(fd);
  if (unshare(CLONE_NEWUTS) != 0) return errno;
  if (sethostname(hostname, std::strlen(hostname)) != 0) return errno;
  return 0;
}

}  // namespace genie::sched
