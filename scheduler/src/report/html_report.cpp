// SPDX-License-Identifier: Apache-2.0
// `genie report`: genie-report.json -> one self-contained HTML page (inline SVG charts, no fetches).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "genie/sched/report.hpp"

namespace genie::sched {
namespace {

using nlohmann::json;

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '&': o += "&amp;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string num(double v, int prec = 3) {
  char b[64];
  std::snprintf(b, sizeof(b), "%.*f", prec, v);
  return b;
}

// A field that must be present with the right type; errors name the JSON path.
template <class T>
Result<T> field(const json& j, const std::string& path, const char* key) {
  if (!j.is_object() || !j.contains(key)) return invalid_argument(path + "." + key + ": missing");
  try {
    return j.at(key).get<T>();
  } catch (const std::exception&) {
    return invalid_argument(path + "." + key + ": wrong type");
  }
}

const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"};

std::string timeline_svg(const json& ranks, double span_us) {
  const int row = 18, left = 70, width = 900;
  const int height = static_cast<int>(ranks.size()) * row + 40;
  std::ostringstream s;
  s << "<svg class=\"chart\" id=\"timeline\" width=\"" << left + width + 20 << "\" height=\"" << height
    << "\" xmlns=\"http://www.w3.org/2000/svg\">";
  const double scale = span_us > 0 ? width / span_us : 0;
  int y = 10;
  for (const auto& r : ranks) {
    s << "<text x=\"4\" y=\"" << y + 12 << "\" font-size=\"11\">rank " << r.value("rank", 0) << "</text>";
    s << "<rect x=\"" << left << "\" y=\"" << y << "\" width=\"" << width << "\" height=\"" << row - 4
      << "\" fill=\"#f4f4f4\"/>";
    if (r.contains("timeline") && r["timeline"].is_array()) {
      for (const auto& sp : r["timeline"]) {
        if (!sp.is_array() || sp.size() != 3 || !sp[0].is_number() || !sp[1].is_number() || !sp[2].is_string()) continue;
        const double a = sp[0].get<double>() * scale, b = sp[1].get<double>() * scale;
        const bool comm = sp[2].get<std::string>() == "communication";
        s << "<rect class=\"mark\" x=\"" << num(left + a, 2) << "\" y=\"" << (comm ? y + 7 : y) << "\" width=\""
          << num(std::max(0.5, b - a), 2) << "\" height=\"" << (comm ? row - 11 : row - 4) << "\" fill=\""
          << (comm ? "#f28e2b" : "#4e79a7") << "\"><title>" << (comm ? "communication " : "compute ")
          << num(sp[0].get<double>()) << "-" << num(sp[1].get<double>()) << " us</title></rect>";
      }
    }
    y += row;
  }
  s << "<text x=\"" << left << "\" y=\"" << y + 14 << "\" font-size=\"11\">0</text><text x=\"" << left + width - 80
    << "\" y=\"" << y + 14 << "\" font-size=\"11\">" << num(span_us / 1e3) << " ms</text>";
  s << "<text x=\"" << left + 300 << "\" y=\"" << y + 14
    << "\" font-size=\"11\"><tspan fill=\"#4e79a7\">&#9632; compute</tspan> <tspan fill=\"#f28e2b\">&#9632; "
       "communication</tspan></text></svg>";
  return s.str();
}

std::string busbw_svg(const json& calls) {
  // Mean bus bandwidth per (op, size), x = log2(bytes).
  std::map<std::string, std::map<uint64_t, std::pair<double, int>>> pts;
  for (const auto& c : calls) {
    if (!c.is_object() || c.value("comm_rank", 0) != 0 || c.contains("error")) continue;
    const uint64_t b = c.value("bytes", uint64_t{0});
    if (b == 0) continue;
    auto& p = pts[c.value("op", std::string("?"))][b];
    p.first += c.value("busbw_gbps", 0.0);
    ++p.second;
  }
  const int left = 60, width = 600, height = 260, top = 10;
  double xmin = 1e300, xmax = -1e300, ymax = 0;
  for (const auto& [op, m] : pts)
    for (const auto& [b, v] : m) {
      xmin = std::min(xmin, std::log2(static_cast<double>(b)));
      xmax = std::max(xmax, std::log2(static_cast<double>(b)));
      ymax = std::max(ymax, v.first / v.second);
    }
  std::ostringstream s;
  s << "<svg class=\"chart\" id=\"busbw\" width=\"" << left + width + 160 << "\" height=\"" << height + 40
    << "\" xmlns=\"http://www.w3.org/2000/svg\">";
  s << "<line x1=\"" << left << "\" y1=\"" << top + height << "\" x2=\"" << left + width << "\" y2=\"" << top + height
    << "\" stroke=\"#888\"/><line x1=\"" << left << "\" y1=\"" << top << "\" x2=\"" << left << "\" y2=\""
    << top + height << "\" stroke=\"#888\"/>";
  if (pts.empty()) {
    s << "<text x=\"" << left + 10 << "\" y=\"" << top + 20 << "\" font-size=\"12\">no collectives</text></svg>";
    return s.str();
  }
  if (xmax <= xmin) xmax = xmin + 1;
  if (ymax <= 0) ymax = 1;
  int ci = 0, ly = top + 10;
  for (const auto& [op, m] : pts) {
    const char* col = kPalette[ci++ % 9];
    std::string path;
    for (const auto& [b, v] : m) {
      const double x = left + (std::log2(static_cast<double>(b)) - xmin) / (xmax - xmin) * width;
      const double y = top + height - (v.first / v.second) / ymax * height;
      path += (path.empty() ? "M" : " L") + num(x, 1) + " " + num(y, 1);
      s << "<circle class=\"mark\" cx=\"" << num(x, 1) << "\" cy=\"" << num(y, 1) << "\" r=\"3\" fill=\"" << col
        << "\"><title>" << esc(op) << " " << b << " B: " << num(v.first / v.second, 2) << " GB/s</title></circle>";
    }
    s << "<path d=\"" << path << "\" stroke=\"" << col << "\" fill=\"none\"/>";
    s << "<text x=\"" << left + width + 10 << "\" y=\"" << ly << "\" font-size=\"11\" fill=\"" << col << "\">"
      << esc(op) << "</text>";
    ly += 14;
  }
  s << "<text x=\"" << left << "\" y=\"" << top + height + 16 << "\" font-size=\"11\">" << num(std::exp2(xmin), 0)
    << " B</text><text x=\"" << left + width - 80 << "\" y=\"" << top + height + 16 << "\" font-size=\"11\">"
    << num(std::exp2(xmax), 0) << " B</text><text x=\"2\" y=\"" << top + 10 << "\" font-size=\"11\">"
    << num(ymax, 1) << " GB/s</text><text x=\"" << left + 200 << "\" y=\"" << top + height + 32
    << "\" font-size=\"11\">message size (log scale) vs bus bandwidth</text></svg>";
  return s.str();
}

std::string heatmap_svg(const json& links) {
  const json& ch = links.contains("channels") ? links["channels"] : json::array();
  const int row = 12, left = 260, cell = 6;
  size_t bins = 0;
  for (const auto& l : ch)
    if (l.contains("utilisation") && l["utilisation"].is_array()) bins = std::max(bins, l["utilisation"].size());
  std::ostringstream s;
  const int width = left + static_cast<int>(bins) * cell + 20;
  const int height = static_cast<int>(ch.size()) * row + 30;
  s << "<svg class=\"chart\" id=\"links\" width=\"" << std::max(width, 400) << "\" height=\"" << std::max(height, 40)
    << "\" xmlns=\"http://www.w3.org/2000/svg\">";
  if (ch.empty()) {
    s << "<text x=\"10\" y=\"20\" font-size=\"12\">no link samples (analytical engine, or no traffic)</text></svg>";
    return s.str();
  }
  int y = 4;
  for (const auto& l : ch) {
    s << "<text x=\"2\" y=\"" << y + 9 << "\" font-size=\"9\">" << esc(l.value("link", std::string("?"))) << "</text>";
    const json& u = l.contains("utilisation") ? l["utilisation"] : json::array();
    for (size_t i = 0; i < u.size(); ++i) {
      const double v = u[i].is_number() ? std::clamp(u[i].get<double>(), 0.0, 1.0) : 0.0;
      const int shade = static_cast<int>(255 - v * 200);
      s << "<rect class=\"mark\" x=\"" << left + static_cast<int>(i) * cell << "\" y=\"" << y << "\" width=\"" << cell
        << "\" height=\"" << row - 1 << "\" fill=\"rgb(" << shade << "," << shade << ",255)\"/>";
    }
    y += row;
  }
  s << "<text x=\"" << left << "\" y=\"" << y + 14 << "\" font-size=\"11\">time -> (darker = busier; bin "
    << num(links.value("bin_us", 0.0)) << " us)</text></svg>";
  return s.str();
}

std::string table(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows) {
  std::ostringstream s;
  s << "<table><tr>";
  for (const auto& h : head) s << "<th>" << esc(h) << "</th>";
  s << "</tr>";
  for (const auto& r : rows) {
    s << "<tr>";
    for (const auto& c : r) s << "<td>" << esc(c) << "</td>";
    s << "</tr>";
  }
  s << "</table>";
  return s.str();
}

}  // namespace

Status render_html(const std::string& path, const std::string& out_path) {
  std::ifstream in(path);
  if (!in) return invalid_argument("cannot read " + path);
  json j;
  try {
    j = json::parse(in);
  } catch (const std::exception& e) {
    return invalid_argument(path + ": not valid JSON: " + e.what());
  }
  GENIE_ASSIGN_OR_RETURN(std::string schema, field<std::string>(j, path + ": $", "schema"));
  if (schema != "genie-report") return invalid_argument(path + ": $.schema is '" + schema + "', not genie-report");
  GENIE_ASSIGN_OR_RETURN(int version, field<int>(j, path + ": $", "version"));
  if (version != kReportSchemaVersion)
    return invalid_argument(path + ": $.version is " + std::to_string(version) + "; this genie reads version " +
                            std::to_string(kReportSchemaVersion));
  for (const char* k : {"job", "collectives", "ranks", "totals", "links"})
    if (!j.contains(k)) return invalid_argument(path + ": $." + k + ": missing");
  if (!j["job"].is_object()) return invalid_argument(path + ": $.job: not an object");
  if (!j["collectives"].is_array()) return invalid_argument(path + ": $.collectives: not an array");
  if (!j["ranks"].is_array()) return invalid_argument(path + ": $.ranks: not an array");
  if (!j["totals"].is_object()) return invalid_argument(path + ": $.totals: not an object");
  if (!j["links"].is_object()) return invalid_argument(path + ": $.links: not an object");
  const json& job = j["job"];
  const double span = job.value("virtual_span_us", 0.0);

  std::vector<std::vector<std::string>> op_rows, comm_rows, rank_rows;
  auto total_rows = [](const json& a, const char* key, std::vector<std::vector<std::string>>* rows) {
    if (!a.is_array()) return;
    for (const auto& t : a)
      if (t.is_object())
        rows->push_back({t.value(key, std::string("?")), std::to_string(t.value("calls", 0)),
                         std::to_string(t.value("bytes", uint64_t{0})), num(t.value("time_us", 0.0) / 1e3),
                         num(t.value("mean_busbw_gbps", 0.0), 2)});
  };
  total_rows(j["totals"].value("per_op", json::array()), "op", &op_rows);
  total_rows(j["totals"].value("per_communicator", json::array()), "comm", &comm_rows);
  for (const auto& r : j["ranks"])
    if (r.is_object())
      rank_rows.push_back({std::to_string(r.value("rank", 0)), r.value("node", std::string()),
                           num(r.value("compute_us", 0.0) / 1e3), num(r.value("communication_us", 0.0) / 1e3),
                           num(r.value("exposed_communication_us", 0.0) / 1e3), num(r.value("idle_us", 0.0) / 1e3)});

  std::ostringstream h;
  h << "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Genie report</title><style>"
       "body{font-family:sans-serif;margin:20px;color:#222}table{border-collapse:collapse;margin:8px 0 20px}"
       "td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:right}th{background:#eee}"
       "h2{margin-top:28px}.meta td{text-align:left}</style></head><body>";
  h << "<h1>Genie report</h1>";
  std::string cmd;
  if (job.contains("command") && job["command"].is_array())
    for (const auto& c : job["command"]) cmd += (cmd.empty() ? "" : " ") + (c.is_string() ? c.get<std::string>() : "?");
  h << "<table class=\"meta\"><tr><td>command</td><td>" << esc(cmd) << "</td></tr><tr><td>ranks</td><td>"
    << job.value("nranks", 0) << " on " << job.value("nodes", 0) << " node(s), device "
    << esc(job.value("device", std::string())) << "</td></tr><tr><td>topology</td><td>"
    << esc(job.value("topology", std::string())) << " (" << esc(job.value("engine", std::string()))
    << " engine, " << esc(job.value("clock", std::string())) << " clock)</td></tr><tr><td>exit code</td><td>"
    << job.value("exit_code", 0) << "</td></tr><tr><td>virtual span</td><td>" << num(span / 1e3)
    << " ms</td></tr><tr><td>wall time</td><td>" << num(job.value("wall_seconds", 0.0), 1) << " s</td></tr></table>";
  h << "<h2>Per-rank timeline</h2>" << timeline_svg(j["ranks"], span);
  h << "<h2>Bus bandwidth versus size</h2>" << busbw_svg(j["collectives"]);
  h << "<h2>Link utilisation</h2>" << heatmap_svg(j["links"]);
  h << "<h2>Collectives</h2>" << table({"op", "calls", "bytes", "time ms", "mean busbw GB/s"}, op_rows);
  h << "<h2>Communicators</h2>" << table({"comm", "calls", "bytes", "time ms", "mean busbw GB/s"}, comm_rows);
  if (j.contains("fabric") && j["fabric"].is_object() && j["fabric"].contains("summary")) {
    std::vector<std::vector<std::string>> fab_rows, call_rows;
    for (const auto& f : j["fabric"]["summary"])
      if (f.is_object())
        fab_rows.push_back({f.value("op", std::string("?")), std::to_string(f.value("bytes", uint64_t{0})),
                            std::to_string(f.value("calls", 0)), num(f.value("median_real_us", 0.0), 1),
                            f["median_sim_us"].is_number() ? num(f["median_sim_us"].get<double>(), 1) : "-",
                            f["sim_over_real"].is_number() ? num(f["sim_over_real"].get<double>(), 3) : "-"});
    if (j["fabric"].contains("calls") && j["fabric"]["calls"].is_array()) {
      size_t shown = 0;
      for (const auto& c : j["fabric"]["calls"]) {
        if (!c.is_object() || shown++ >= 200) break;
        call_rows.push_back({c.value("comm", std::string()), std::to_string(c.value("seq", 0)),
                             std::to_string(c.value("rank", 0)), c.value("op", std::string()),
                             std::to_string(c.value("bytes", uint64_t{0})), num(c.value("real_us", 0.0), 1),
                             c["sim_us"].is_number() ? num(c["sim_us"].get<double>(), 1) : "-",
                             c.contains("sim_over_real") && c["sim_over_real"].is_number()
                                 ? num(c["sim_over_real"].get<double>(), 3)
                                 : "-"});
      }
    }
    h << "<h2>Real fabric versus simulation</h2>"
      << table({"op", "bytes", "calls", "median real us", "median sim us", "sim / real"}, fab_rows)
      << "<details><summary>per call (first 200)</summary>"
      << table({"comm", "seq", "rank", "op", "bytes", "real us", "sim us", "sim / real"}, call_rows) << "</details>";
  }
  h << "<h2>Ranks</h2>"
    << table({"rank", "node", "compute ms", "communication ms", "exposed comm ms", "idle ms"}, rank_rows);
  // NVTX ranges (training steps): the means per name, then every range of the first ranks.
  if (j.contains("range_totals") && j["range_totals"].is_array() && !j["range_totals"].empty()) {
    std::vector<std::vector<std::string>> total_rows, range_rows;
    for (const auto& t : j["range_totals"])
      if (t.is_object())
        total_rows.push_back({t.value("name", std::string("?")), std::to_string(t.value("ranks", 0)),
                              std::to_string(t.value("count", 0)), num(t.value("mean_time_us", 0.0) / 1e3),
                              num(t.value("mean_compute_us", 0.0) / 1e3),
                              num(t.value("mean_exposed_communication_us", 0.0) / 1e3),
                              num(t.value("mean_idle_us", 0.0) / 1e3)});
    if (j.contains("ranges") && j["ranges"].is_array()) {
      size_t shown = 0;
      for (const auto& r : j["ranges"]) {
        if (!r.is_object() || shown++ >= 500) break;
        range_rows.push_back({std::to_string(r.value("rank", 0)), r.value("name", std::string("?")),
                              std::to_string(r.value("index", 0)), num(r.value("start_us", 0.0) / 1e3),
                              num(r.value("time_us", 0.0) / 1e3), num(r.value("compute_us", 0.0) / 1e3),
                              num(r.value("exposed_communication_us", 0.0) / 1e3), num(r.value("idle_us", 0.0) / 1e3)});
      }
    }
    h << "<h2>Ranges (NVTX): per-step breakdown</h2>"
      << table({"range", "ranks", "count", "mean ms", "compute ms", "exposed comm ms", "idle ms"}, total_rows)
      << "<details><summary>every range (first 500)</summary>"
      << table({"rank", "range", "index", "start ms", "time ms", "compute ms", "exposed comm ms", "idle ms"},
               range_rows)
      << "</details>";
  }
  // Self-check for headless browsers: every chart must have laid out, with marks where there is data.
  h << "<p id=\"render-status\">not checked</p><script>"
       "(function(){var c=document.querySelectorAll('svg.chart'),ok=0,msg=[];"
       "c.forEach(function(s){var b=s.getBBox(),m=s.querySelectorAll('.mark').length;"
       "if(b.width>0&&b.height>0){ok++;}msg.push(s.id+':'+Math.round(b.width)+'x'+Math.round(b.height)+':'+m);});"
       "var st=(ok===c.length&&c.length>0)?'ok':'fail';document.body.setAttribute('data-rendered',st+' '+ok+'/'+c.length);"
       "document.getElementById('render-status').textContent='charts rendered: '+st+' ('+msg.join(', ')+')';})();"
       "</script></body></html>\n";
  std::ofstream out(out_path, std::ios::trunc);
  if (!out) return system_error("cannot write " + out_path);
  out << h.str();
  out.flush();
  if (!out) return system_error("cannot write " + out_path + " (disk full?)");
  return Status::ok();
}

}  // namespace genie::sched
