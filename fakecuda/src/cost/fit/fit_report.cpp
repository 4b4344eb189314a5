// SPDX-License-Identifier: Apache-2.0
// The fit's outputs for people: markdown error tables and a predicted-versus-measured SVG (hand-written: no
// plotting dependency, viewable anywhere).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <vector>

#include "genie/fakecuda/calibration.hpp"

namespace genie::fakecuda {
namespace {

std::string pct(double v) {
  char b[32];
  std::snprintf(b, sizeof(b), "%.1f%%", v * 100);
  return b;
}

void table(std::ostringstream& o, const std::string& title, const std::vector<FamilyError>& rows) {
  o << "\n" << title << "\n\n| family | points | median abs. error | p90 | max |\n|---|---:|---:|---:|---:|\n";
  for (const FamilyError& e : rows) {
    o << "| " << e.family << " | " << e.points << " | " << (e.points ? pct(e.median_abs) : "-") << " | "
      << (e.points ? pct(e.p90_abs) : "-") << " | " << (e.points ? pct(e.max_abs) : "-") << " |\n";
  }
}

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else o += c;
  }
  return o;
}

}  // namespace

std::string fit_report_markdown(const FitResult& r) {
  std::ostringstream o;
  char b[160];
  std::snprintf(b, sizeof(b),
                "Fitted host issue intervals of the calibration harness: torch.mm %.2f us, torch.add/copy_ %.2f us.\n",
                r.gemm_host_floor_us, r.membound_host_floor_us);
  o << b;
  table(o, "All points, shipped parameters (prediction = max(GPU time, host issue interval)):", r.in_sample);
  table(o, "Points that are not launch-bound (measured > 1.25 x the host interval), shipped parameters:", r.gpu_bound);
  table(o, "Held-out points (GEMMs with M = 4096 tokens, 2^27-element bandwidth points, 256 MiB copies), "
           "parameters fitted without them:",
        r.held_out);
  o << "\nModel form, chosen on the held-out GEMMs (median abs. error):\n\n| GEMM model form | held-out median |\n"
       "|---|---:|\n";
  for (const auto& [name, err] : r.form_comparison) o << "| " << name << " | " << pct(err) << " |\n";
  return o.str();
}

std::string fit_plot_svg(const FitResult& r, const std::string& title) {
  // Log-log axes from 5 us to the largest value; y = x and +-10% guides; one colour per family group.
  const double w = 760, h = 640, left = 70, right = 200, top = 40, bottom = 60;
  double lo = 5, hi = 10;
  for (const FitPoint& p : r.points) hi = std::max({hi, p.measured_us, p.predicted_us});
  hi = std::pow(10, std::ceil(std::log10(hi)));
  const double lx0 = std::log10(lo), lx1 = std::log10(hi);
  auto X = [&](double v) { return left + (std::log10(std::max(v, lo)) - lx0) / (lx1 - lx0) * (w - left - right); };
  auto Y = [&](double v) { return h - bottom - (std::log10(std::max(v, lo)) - lx0) / (lx1 - lx0) * (h - top - bottom); };
  static const char* kColours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                                   "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939"};
  std::map<std::string, std::string> colour;
  for (const FitPoint& p : r.points)
    if (!colour.count(p.family)) colour[p.family] = kColours[colour.size() % std::size(kColours)];

  std::ostringstream o;
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h << "\" font-family=\"sans-serif\""
    << " font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  o << "<text x=\"" << left << "\" y=\"24\" font-size=\"15\">" << esc(title) << "</text>\n";
  // grid and ticks: the lower bound, then every power of ten
  std::vector<double> ticks = {lo};
  for (double t = 10; t <= hi * 1.001; t *= 10) ticks.push_back(t);
  for (double t : ticks) {
    o << "<line x1=\"" << X(t) << "\" y1=\"" << Y(lo) << "\" x2=\"" << X(t) << "\" y2=\"" << Y(hi)
      << "\" stroke=\"#eee\"/>\n";
    o << "<line x1=\"" << X(lo) << "\" y1=\"" << Y(t) << "\" x2=\"" << X(hi) << "\" y2=\"" << Y(t)
      << "\" stroke=\"#eee\"/>\n";
    o << "<text x=\"" << X(t) << "\" y=\"" << h - bottom + 16 << "\" text-anchor=\"middle\">" << t << "</text>\n";
    o << "<text x=\"" << left - 6 << "\" y=\"" << Y(t) + 4 << "\" text-anchor=\"end\">" << t << "</text>\n";
  }
  o << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << w - left - right << "\" height=\"" << h - top - bottom
    << "\" fill=\"none\" stroke=\"#333\"/>\n";
  o << "<line x1=\"" << X(lo) << "\" y1=\"" << Y(lo) << "\" x2=\"" << X(hi) << "\" y2=\"" << Y(hi)
    << "\" stroke=\"#333\"/>\n";
  for (double f : {1.1, 1 / 1.1})
    o << "<line x1=\"" << X(lo) << "\" y1=\"" << Y(lo * f) << "\" x2=\"" << X(hi / f) << "\" y2=\"" << Y(hi)
      << "\" stroke=\"#999\" stroke-dasharray=\"4 3\"/>\n";
  o << "<text x=\"" << (left + w - right) / 2 << "\" y=\"" << h - 20 << "\" text-anchor=\"middle\">measured (us)</text>\n";
  o << "<text transform=\"translate(18," << (top + h - bottom) / 2
    << ") rotate(-90)\" text-anchor=\"middle\">predicted (us)</text>\n";
  for (const FitPoint& p : r.points) {
    const std::string& c = colour[p.family];
    o << "<circle cx=\"" << X(p.measured_us) << "\" cy=\"" << Y(p.predicted_us) << "\" r=\"3.2\" "
      << (p.held_out ? "fill=\"white\" stroke=\"" + c + "\" stroke-width=\"1.4\"" : "fill=\"" + c + "\" fill-opacity=\"0.8\"")
      << "><title>" << esc(p.family + " " + p.label) << "</title></circle>\n";
  }
  double ly = top + 10;
  for (const auto& [fam, c] : colour) {
    o << "<circle cx=\"" << w - right + 16 << "\" cy=\"" << ly << "\" r=\"4\" fill=\"" << c << "\"/>"
      << "<text x=\"" << w - right + 26 << "\" y=\"" << ly + 4 << "\">" << esc(fam) << "</text>\n";
    ly += 18;
  }
  o << "<circle cx=\"" << w - right + 16 << "\" cy=\"" << ly + 8 << "\" r=\"4\" fill=\"white\" stroke=\"#333\"/>"
    << "<text x=\"" << w - right + 26 << "\" y=\"" << ly + 12 << "\">held out</text>\n";
  o << "<text x=\"" << w - right + 6 << "\" y=\"" << ly + 34 << "\">dashed: +-10%</text>\n";
  o << "</svg>\n";
  return o.str();
}

}  // namespace genie::fakecuda
