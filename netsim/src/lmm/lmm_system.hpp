// SPDX-License-Identifier: Apache-2.0
// lmm::System: incremental weighted max-min fair solver over index vectors (SimGrid kernel/lmm, simplified).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace genie::netsim::lmm {

/// Index of a constraint, variable or element inside one System.
using Id = uint32_t;
inline constexpr Id kNoId = std::numeric_limits<Id>::max();
inline constexpr double kUnbounded = std::numeric_limits<double>::infinity();

/// A linear max-min system: constraints (capacity), variables (weight, bound, solved rate) and elements
/// (variable x constraint, consumption). Pure math: no time, bytes or topology.
///
/// Semantics: every enabled variable v gets rate r_v = w_v * lambda_v, where the lambdas are the weighted
/// max-min fair allocation subject to, for every constraint c, sum_v consumption(v,c) * r_v <= capacity(c),
/// and r_v <= bound_v. A variable with weight 0 is disabled: rate 0, consumes nothing (a flow still paying
/// its latency).
///
/// Incrementality: every change marks the touched variable (or constraint) as a seed of the *modified*
/// set. solve() walks the connected components of the seeds (variables <-> constraints) using a generation
/// counter for O(1) unmarking, re-solves only those components and lists the variables whose rate changed.
/// Invariant: outside solve(), rates of variables in untouched components are the max-min solution.
class System {
 public:
  Id add_constraint(double capacity);
  void set_capacity(Id cons, double capacity);
  double capacity(Id cons) const { return constraints_[cons].capacity; }

  /// New variable; weight 0 creates it disabled. `bound` caps its rate (kUnbounded: none).
  Id add_variable(double weight, double bound = kUnbounded);
  /// Adds `consumption` units of `cons` per unit of rate of `var` (twice the same pair adds up).
  void expand(Id var, Id cons, double consumption = 1.0);
  void set_weight(Id var, double weight);  ///< 0 disables, > 0 enables
  void set_bound(Id var, double bound);
  /// Removes the variable and its elements; its id may be reused by a later add_variable().
  void remove_variable(Id var);

  /// Re-solves the components touched since the last solve(). Returns the number of variables visited.
  size_t solve();
  /// Variables whose rate changed in the last solve().
  const std::vector<Id>& changed() const { return changed_; }

  double rate(Id var) const { return variables_[var].rate; }
  double weight(Id var) const { return variables_[var].weight; }
  size_t variable_count() const { return variables_.size() - free_vars_.size(); }
  /// Constraint load (sum of consumption * rate) from the last solve.
  double usage(Id cons) const;

 private:
  struct Element {
    Id var = kNoId;
    Id cons = kNoId;
    double consumption = 0;
    uint32_t pos_in_cons = 0;  // index of this element inside constraints_[cons].elements
  };
  struct Variable {
    double weight = 0;
    double bound = kUnbounded;
    double rate = 0;
    bool alive = false;
    bool fixed = false;  // solve scratch
    uint64_t visited_gen = 0;
    std::vector<Id> elements;
  };
  struct Constraint {
    double capacity = 0;
    uint64_t visited_gen = 0;
    std::vector<Id> elements;
    double remaining = 0;  // solve scratch
    double load = 0;       // solve scratch: sum consumption*weight over unfixed variables
  };

  void mark_var(Id var);
  void mark_cons(Id cons);
  void solve_component(const std::vector<Id>& vars, const std::vector<Id>& cons);

  std::vector<Variable> variables_;
  std::vector<Constraint> constraints_;
  std::vector<Element> elements_;
  std::vector<Id> free_vars_;
  std::vector<Id> free_elements_;
  // Modified set: seeds since the last solve. Membership uses seed_gen_ stamps (O(1) clear).
  std::vector<Id> seed_vars_;
  std::vector<Id> seed_cons_;
  std::vector<uint64_t> var_seed_gen_;
  std::vector<uint64_t> cons_seed_gen_;
  uint64_t seed_gen_ = 1;
  uint64_t visit_gen_ = 0;
  std::vector<Id> changed_;
  std::vector<Id> comp_vars_, comp_cons_, stack_;
};

}  // namespace genie::netsim::lmm
