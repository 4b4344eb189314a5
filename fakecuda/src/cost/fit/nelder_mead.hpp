// SPDX-License-Identifier: Apache-2.0
// Nelder-Mead simplex minimisation (Nelder & Mead 1965; the standard coefficients reflection 1, expansion 2,
// contraction 0.5, shrink 0.5 as in Numerical Recipes 3rd ed., section 10.5), for the cost-model fit.
#pragma once

#include <functional>
#include <vector>

namespace genie::fakecuda::cost {

struct MinimizeResult {
  std::vector<double> x;
  double value = 0;
  int evaluations = 0;
};

/// Minimises f from x0 with initial steps `step` (one per coordinate), until the simplex's values agree to
/// `tolerance` (relative) or `max_evaluations` is reached; restarts once from the best point (a collapsed simplex
/// is a common false convergence).
MinimizeResult nelder_mead(const std::function<double(const std::vector<double>&)>& f, std::vector<double> x0,
                           const std::vector<double>& step, double tolerance = 1e-7, int max_evaluations = 20000);

}  // namespace genie::fakecuda::cost
