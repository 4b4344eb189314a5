// SPDX-License-Identifier: Apache-2.0
// Nelder-Mead simplex minimisation.
#include "cost/fit/nelder_mead.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace genie::fakecuda::cost {
namespace {

MinimizeResult run(const std::function<double(const std::vector<double>&)>& f, const std::vector<double>& x0,
                   const std::vector<double>& step, double tol, int max_evals) {
  const size_t n = x0.size();
  std::vector<std::vector<double>> p(n + 1, x0);
  for (size_t i = 0; i < n; ++i) p[i + 1][i] += step[i];
  std::vector<double> y(n + 1);
  int evals = 0;
  for (size_t i = 0; i <= n; ++i, ++evals) y[i] = f(p[i]);
  std::vector<size_t> order(n + 1);
  auto point = [&](const std::vector<double>& centroid, size_t worst, double t) {
    std::vector<double> x(n);
    for (size_t j = 0; j < n; ++j) x[j] = centroid[j] + t * (p[worst][j] - centroid[j]);
    return x;
  };
  while (evals < max_evals) {
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return y[a] < y[b]; });
    const size_t best = order.front(), worst = order.back(), second = order[n - 1];
    if (2 * std::fabs(y[worst] - y[best]) <= tol * (std::fabs(y[worst]) + std::fabs(y[best])) + 1e-300) break;
    std::vector<double> c(n, 0.0);
    for (size_t i = 0; i <= n; ++i)
      if (i != worst)
        for (size_t j = 0; j < n; ++j) c[j] += p[i][j] / static_cast<double>(n);
    std::vector<double> xr = point(c, worst, -1.0);
    double yr = f(xr);
    ++evals;
    if (yr < y[best]) {
      std::vector<double> xe = point(c, worst, -2.0);
      double ye = f(xe);
      ++evals;
      if (ye < yr) {
        p[worst] = xe;
        y[worst] = ye;
      } else {
        p[worst] = xr;
        y[worst] = yr;
      }
    } else if (yr < y[second]) {
      p[worst] = xr;
      y[worst] = yr;
    } else {
      std::vector<double> xc = point(c, worst, yr < y[worst] ? -0.5 : 0.5);
      double yc = f(xc);
      ++evals;
      if (yc < std::min(yr, y[worst])) {
        p[worst] = xc;
        y[worst] = yc;
      } else {  // shrink towards the best point
        for (size_t i = 0; i <= n; ++i) {
          if (i == best) continue;
          for (size_t j = 0; j < n; ++j) p[i][j] = p[best][j] + 0.5 * (p[i][j] - p[best][j]);
          y[i] = f(p[i]);
          ++evals;
        }
      }
    }
  }
  size_t best = static_cast<size_t>(std::min_element(y.begin(), y.end()) - y.begin());
  return {p[best], y[best], evals};
}

}  // namespace

MinimizeResult nelder_mead(const std::function<double(const std::vector<double>&)>& f, std::vector<double> x0,
                           const std::vector<double>& step, double tolerance, int max_evaluations) {
  MinimizeResult r = run(f, x0, step, tolerance, max_evaluations);
  MinimizeResult again = run(f, r.x, step, tolerance, max_evaluations);
  again.evaluations += r.evaluations;
  return again.value <= r.value ? again : r;
}

}  // namespace genie::fakecuda::cost
