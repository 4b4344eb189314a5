// SPDX-License-Identifier: Apache-2.0
// `genie report`: genie-report.json -> one self-contained HTML page (inline SVG charts, no fetches).
#include <algorithm>
#include <cmath>
#include <cstdint>
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

// Typed reads of a report's fields. An absent (or null) optional field gives its default; a field of the
// wrong type, or an integer out of range, is an error naming its JSON path: the first one is kept and
// render_html_text returns it. (nlohmann's value() throws on a wrong type, and converts out-of-range
// numbers with undefined behaviour.)
class Fields {
 public:
  explicit Fields(std::string origin) : origin_(std::move(origin)) {}
  const Status& status() const { return status_; }
  void fail(const std::string& path, const std::string& what) {
    if (status_.is_ok()) status_ = invalid_argument(origin_ + ": " + path + ": " + what);
  }
  /// The member `key` of `o`, or null when `o` is no object or the member is absent or null.
  static const json* get(const json& o, const char* key) {
    if (!o.is_object()) return nullptr;
    auto it = o.find(key);
    return it == o.end() || it->is_null() ? nullptr : &*it;
  }
  std::string str(const json& o, const std::string& path, const char* key, const std::string& def = std::string()) {
    const json* v = get(o, key);
    if (v == nullptr) return def;
    if (!v->is_string()) {
      fail(path + "." + key, "expected a string");
      return def;
    }
    return v->get<std::string>();
  }
  int64_t integer(const json& o, const std::string& path, const char* key, int64_t def = 0) {
    const json* v = get(o, key);
    if (v == nullptr) return def;
    if (!v->is_number_integer() ||
        (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))) {
      fail(path + "." + key, "expected an integer");
      return def;
    }
    return v->get<int64_t>();
  }
  uint64_t count(const json& o, const std::string& path, const char* key) {
    const json* v = get(o, key);
    if (v == nullptr) return 0;
    if (!v->is_number_unsigned()) {
      fail(path + "." + key, "expected an integer >= 0");
      return 0;
    }
    return v->get<uint64_t>();
  }
  double number(const json& o, const std::string& path, const char* key, double def = 0) {
    const json* v = get(o, key);
    if (v == nullptr) return def;
    if (!v->is_number()) {
      fail(path + "." + key, "expected a number");
      return def;
    }
    return v->get<double>();
  }
  /// A number, or null for "-" (fields that are null when there is nothing to say).
  std::string number_or_dash(const json& o, const std::string& path, const char* key, int prec) {
    const json* v = get(o, key);
    if (v == nullptr) return "-";
    if (!v->is_number()) {
      fail(path + "." + key, "expected a number or null");
      return "-";
    }
    return num(v->get<double>(), prec);
  }

 private:
  std::string origin_;
  Status status_;
};

std::string at(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"};

std::string timeline_svg(Fields& f, const json& ranks, double span_us) {
  const int row = 18, left = 70, width = 900;
  const int height = static_cast<int>(ranks.size()) * row + 40;
  std::ostringstream s;
  s << "<svg class=\"chart\" id=\"timeline\" width=\"" << left + width + 20 << "\" height=\"" << height
    << "\" xmlns=\"http://www.w3.org/2000/svg\">";
  const double scale = span_us > 0 ? width / span_us : 0;
  int y = 10;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const json& r = ranks[i];
    s << "<text x=\"4\" y=\"" << y + 12 << "\" font-size=\"11\">rank " << f.integer(r, at("$.ranks", i), "rank")
      << "</text>";
    s << "<rect x=\"" << left << "\" y=\"" << y << "\" width=\"" << width << "\" height=\"" << row - 4
      << "\" fill=\"#f4f4f4\"/>";
    if (const json* tl = Fields::get(r, "timeline"); tl != nullptr && tl->is_array()) {
      for (const auto& sp : *tl) {
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

std::string busbw_svg(Fields& f, const json& calls) {
  // Mean bus bandwidth per (op, size), x = log2(bytes).
  std::map<std::string, std::map<uint64_t, std::pair<double, int>>> pts;
  for (size_t i = 0; i < calls.size(); ++i) {
    const json& c = calls[i];
    const std::string path = at("$.collectives", i);
    if (!c.is_object() || f.integer(c, path, "comm_rank") != 0 || c.contains("error")) continue;
    const uint64_t b = f.count(c, path, "bytes");
    if (b == 0) continue;
    auto& p = pts[f.str(c, path, "op", "?")][b];
    p.first += f.number(c, path, "busbw_gbps");
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

std::string heatmap_svg(Fields& f, const json& links) {
  const json* chp = Fields::get(links, "channels");
  const json& ch = chp != nullptr && chp->is_array() ? *chp : json::array();
  const int row = 12, left = 260, cell = 6;
  size_t bins = 0;
  for (const auto& l : ch)
    if (const json* u = Fields::get(l, "utilisation"); u != nullptr && u->is_array()) bins = std::max(bins, u->size());
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
  for (size_t k = 0; k < ch.size(); ++k) {
    const json& l = ch[k];
    s << "<text x=\"2\" y=\"" << y + 9 << "\" font-size=\"9\">" << esc(f.str(l, at("$.links.channels", k), "link", "?"))
      << "</text>";
    const json* up = Fields::get(l, "utilisation");
    const json& u = up != nullptr && up->is_array() ? *up : json::array();
    for (size_t i = 0; i < u.size(); ++i) {
      const double v = u[i].is_number() ? std::clamp(u[i].get<double>(), 0.0, 1.0) : 0.0;
      const int shade = static_cast<int>(255 - v * 200);
      s << "<rect class=\"mark\" x=\"" << left + static_cast<int>(i) * cell << "\" y=\"" << y << "\" width=\"" << cell
        << "\" height=\"" << row - 1 << "\" fill=\"rgb(" << shade << "," << shade << ",255)\"/>";
    }
    y += row;
  }
  s << "<text x=\"" << left << "\" y=\"" << y + 14 << "\" font-size=\"11\">time -> (darker = busier; bin "
    << num(f.number(links, "$.links", "bin_us")) << " us)</text></svg>";
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

Result<std::string> render_html_text(const std::string& report_json, const std::string& path) {
  json j;
  try {
    j = json::parse(report_json);
  } catch (const std::exception& e) {
    return invalid_argument(path + ": not valid JSON: " + e.what());
  }
  if (!j.is_object() || !j.contains("schema")) return invalid_argument(path + ": $.schema: missing");
  if (!j["schema"].is_string()) return invalid_argument(path + ": $.schema: wrong type");
  const std::string schema = j["schema"].get<std::string>();
  if (schema != "genie-report") return invalid_argument(path + ": $.schema is '" + schema + "', not genie-report");
  if (!j.contains("version")) return invalid_argument(path + ": $.version: missing");
  Fields f(path);
  const int64_t version = f.integer(j, "$", "version", -1);
  GENIE_TRY(f.status());
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
  const double span = f.number(job, "$.job", "virtual_span_us");

  std::vector<std::vector<std::string>> op_rows, comm_rows, rank_rows;
  auto total_rows = [&f](const json& totals, const char* list, const char* key,
                         std::vector<std::vector<std::string>>* rows) {
    const json* a = Fields::get(totals, list);
    if (a == nullptr || !a->is_array()) return;
    const std::string base = std::string("$.totals.") + list;
    for (size_t i = 0; i < a->size(); ++i) {
      const json& t = (*a)[i];
      const std::string p = at(base, i);
      if (t.is_object())
        rows->push_back({f.str(t, p, key, "?"), std::to_string(f.integer(t, p, "calls")),
                         std::to_string(f.count(t, p, "bytes")), num(f.number(t, p, "time_us") / 1e3),
                         num(f.number(t, p, "mean_busbw_gbps"), 2)});
    }
  };
  total_rows(j["totals"], "per_op", "op", &op_rows);
  total_rows(j["totals"], "per_communicator", "comm", &comm_rows);
  for (size_t i = 0; i < j["ranks"].size(); ++i) {
    const json& r = j["ranks"][i];
    const std::string p = at("$.ranks", i);
    if (r.is_object())
      rank_rows.push_back({std::to_string(f.integer(r, p, "rank")), f.str(r, p, "node"),
                           num(f.number(r, p, "compute_us") / 1e3), num(f.number(r, p, "communication_us") / 1e3),
                           num(f.number(r, p, "exposed_communication_us") / 1e3),
                           num(f.number(r, p, "idle_us") / 1e3)});
  }

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
    << f.integer(job, "$.job", "nranks") << " on " << f.integer(job, "$.job", "nodes") << " node(s), device "
    << esc(f.str(job, "$.job", "device")) << "</td></tr><tr><td>topology</td><td>"
    << esc(f.str(job, "$.job", "topology")) << " (" << esc(f.str(job, "$.job", "engine")) << " engine, "
    << esc(f.str(job, "$.job", "clock")) << " clock)</td></tr><tr><td>exit code</td><td>"
    << f.integer(job, "$.job", "exit_code") << "</td></tr><tr><td>virtual span</td><td>" << num(span / 1e3)
    << " ms</td></tr><tr><td>wall time</td><td>" << num(f.number(job, "$.job", "wall_seconds"), 1)
    << " s</td></tr></table>";
  h << "<h2>Per-rank timeline</h2>" << timeline_svg(f, j["ranks"], span);
  h << "<h2>Bus bandwidth versus size</h2>" << busbw_svg(f, j["collectives"]);
  h << "<h2>Link utilisation</h2>" << heatmap_svg(f, j["links"]);
  h << "<h2>Collectives</h2>" << table({"op", "calls", "bytes", "time ms", "mean busbw GB/s"}, op_rows);
  h << "<h2>Communicators</h2>" << table({"comm", "calls", "bytes", "time ms", "mean busbw GB/s"}, comm_rows);
  if (const json* fab = Fields::get(j, "fabric"); fab != nullptr && fab->is_object() && fab->contains("summary")) {
    std::vector<std::vector<std::string>> fab_rows, call_rows;
    if (const json* sum = Fields::get(*fab, "summary"); sum != nullptr && sum->is_array()) {
      for (size_t i = 0; i < sum->size(); ++i) {
        const json& e = (*sum)[i];
        const std::string p = at("$.fabric.summary", i);
        if (e.is_object())
          fab_rows.push_back({f.str(e, p, "op", "?"), std::to_string(f.count(e, p, "bytes")),
                              std::to_string(f.integer(e, p, "calls")), num(f.number(e, p, "median_real_us"), 1),
                              f.number_or_dash(e, p, "median_sim_us", 1), f.number_or_dash(e, p, "sim_over_real", 3)});
      }
    }
    if (const json* calls = Fields::get(*fab, "calls"); calls != nullptr && calls->is_array()) {
      for (size_t i = 0; i < calls->size() && i < 200; ++i) {
        const json& c = (*calls)[i];
        const std::string p = at("$.fabric.calls", i);
        if (!c.is_object()) break;
        call_rows.push_back({f.str(c, p, "comm"), std::to_string(f.count(c, p, "seq")),
                             std::to_string(f.integer(c, p, "rank")), f.str(c, p, "op"),
                             std::to_string(f.count(c, p, "bytes")), num(f.number(c, p, "real_us"), 1),
                             f.number_or_dash(c, p, "sim_us", 1), f.number_or_dash(c, p, "sim_over_real", 3)});
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
    // The program's ranges first; the libraries' own (CCCL, cuBLAS, ... : "library" in the JSON) in a folded table.
    std::vector<std::vector<std::string>> total_rows, library_rows, range_rows;
    for (const auto& t : j["range_totals"])
      if (t.is_object())
        (t.value("library", false) ? library_rows : total_rows)
            .push_back({t.value("name", std::string("?")), std::to_string(t.value("ranks", 0)),
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
      << table({"range", "ranks", "count", "mean ms", "compute ms", "exposed comm ms", "idle ms"}, total_rows);
    if (!library_rows.empty())
      h << "<details><summary>libraries' own ranges (" << library_rows.size() << " names)</summary>"
        << table({"range", "ranks", "count", "mean ms", "compute ms", "exposed comm ms", "idle ms"}, library_rows)
        << "</details>";
    h << "<details><summary>every range (first 500)</summary>"
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
  GENIE_TRY(f.status());
  return h.str();
}

Status render_html(const std::string& path, const std::string& out_path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return invalid_argument("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return system_error("cannot read " + path);
  GENIE_ASSIGN_OR_RETURN(std::string html, render_html_text(text.str(), path));
  std::ofstream out(out_path, std::ios::trunc);
  if (!out) return system_error("cannot write " + out_path);
  out << html;
  out.flush();
  if (!out) return system_error("cannot write " + out_path + " (disk full?)");
  return Status::ok();
}

}  // namespace genie::sched
