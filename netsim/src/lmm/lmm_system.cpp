// SPDX-License-Identifier: Apache-2.0
// lmm::System implementation: component discovery from the modified set, then weighted progressive filling.
#include "lmm/lmm_system.hpp"

#include <algorithm>
#include <cmath>

#include "genie/common/status.hpp"

namespace genie::netsim::lmm {

namespace {
/// Relative tolerance when deciding that a constraint saturates at the current fill level. Rates are in
/// bytes/s (1e9..1e13), so 1e-9 relative is far below a byte per simulated second.
constexpr double kSaturationRelEps = 1e-9;
}  // namespace

Id System::add_constraint(double capacity) {
  GENIE_ASSERT(capacity >= 0, "negative capacity");
  Constraint c;
  c.capacity = capacity;
  constraints_.push_back(std::move(c));
  cons_seed_gen_.push_back(0);
  return static_cast<Id>(constraints_.size() - 1);
}

void System::set_capacity(Id cons, double capacity) {
  constraints_[cons].capacity = capacity;
  mark_cons(cons);
}

Id System::add_variable(double weight, double bound) {
  Id id;
  if (!free_vars_.empty()) {
    id = free_vars_.back();
    free_vars_.pop_back();
  } else {
    id = static_cast<Id>(variables_.size());
    variables_.emplace_back();
    var_seed_gen_.push_back(0);
  }
  Variable& v = variables_[id];
  v.weight = weight;
  v.bound = bound;
  v.rate = 0;
  v.alive = true;
  v.elements.clear();
  mark_var(id);
  return id;
}

void System::expand(Id var, Id cons, double consumption) {
  Variable& v = variables_[var];
  for (Id e : v.elements) {
    if (elements_[e].cons == cons) {
      elements_[e].consumption += consumption;
      mark_var(var);
      return;
    }
  }
  Id eid;
  if (!free_elements_.empty()) {
    eid = free_elements_.back();
    free_elements_.pop_back();
  } else {
    eid = static_cast<Id>(elements_.size());
    elements_.emplace_back();
  }
  Constraint& c = constraints_[cons];
  elements_[eid] = Element{var, cons, consumption, static_cast<uint32_t>(c.elements.size())};
  c.elements.push_back(eid);
  v.elements.push_back(eid);
  mark_var(var);
}

void System::set_weight(Id var, double weight) {
  GENIE_ASSERT(weight >= 0, "negative weight");
  variables_[var].weight = weight;
  mark_var(var);
}

void System::set_bound(Id var, double bound) {
  variables_[var].bound = bound;
  mark_var(var);
}

void System::remove_variable(Id var) {
  Variable& v = variables_[var];
  GENIE_ASSERT(v.alive, "removing a dead variable");
  for (Id eid : v.elements) {
    Element& e = elements_[eid];
    Constraint& c = constraints_[e.cons];
    // Swap-remove from the constraint's element list, fixing the moved element's back-index.
    const uint32_t pos = e.pos_in_cons;
    const Id last = c.elements.back();
    c.elements[pos] = last;
    elements_[last].pos_in_cons = pos;
    c.elements.pop_back();
    mark_cons(e.cons);
    e.var = kNoId;
    free_elements_.push_back(eid);
  }
  v.elements.clear();
  v.alive = false;
  v.rate = 0;
  free_vars_.push_back(var);
}

void System::mark_var(Id var) {
  if (var_seed_gen_[var] == seed_gen_) return;
  var_seed_gen_[var] = seed_gen_;
  seed_vars_.push_back(var);
}

void System::mark_cons(Id cons) {
  if (cons_seed_gen_[cons] == seed_gen_) return;
  cons_seed_gen_[cons] = seed_gen_;
  seed_cons_.push_back(cons);
}

double System::usage(Id cons) const {
  double u = 0;
  for (Id eid : constraints_[cons].elements) {
    const Element& e = elements_[eid];
    u += e.consumption * variables_[e.var].rate;
  }
  return u;
}

size_t System::solve() {
  changed_.clear();
  if (seed_vars_.empty() && seed_cons_.empty()) return 0;
  ++visit_gen_;
  size_t visited = 0;
  // Each connected component reachable from the seeds is collected and solved on its own.
  auto explore = [&](bool from_var, Id seed) {
    comp_vars_.clear();
    comp_cons_.clear();
    stack_.clear();
    if (from_var) {
      if (!variables_[seed].alive || variables_[seed].visited_gen == visit_gen_) return;
      variables_[seed].visited_gen = visit_gen_;
      comp_vars_.push_back(seed);
    } else {
      if (constraints_[seed].visited_gen == visit_gen_) return;
      constraints_[seed].visited_gen = visit_gen_;
      comp_cons_.push_back(seed);
      stack_.push_back(seed);
    }
    size_t vi = 0;
    while (true) {
      // Expand variables -> constraints.
      for (; vi < comp_vars_.size(); ++vi) {
        for (Id eid : variables_[comp_vars_[vi]].elements) {
          const Id c = elements_[eid].cons;
          if (constraints_[c].visited_gen != visit_gen_) {
            constraints_[c].visited_gen = visit_gen_;
            comp_cons_.push_back(c);
            stack_.push_back(c);
          }
        }
      }
      if (stack_.empty()) break;
      // Expand constraints -> enabled variables (a disabled variable couples nothing).
      const Id c = stack_.back();
      stack_.pop_back();
      for (Id eid : constraints_[c].elements) {
        const Id v = elements_[eid].var;
        Variable& var = variables_[v];
        if (var.visited_gen != visit_gen_ && var.weight > 0) {
          var.visited_gen = visit_gen_;
          comp_vars_.push_back(v);
        }
      }
    }
    visited += comp_vars_.size();
    solve_component(comp_vars_, comp_cons_);
  };
  for (Id v : seed_vars_) explore(true, v);
  for (Id c : seed_cons_) explore(false, c);
  seed_vars_.clear();
  seed_cons_.clear();
  ++seed_gen_;
  return visited;
}

void System::solve_component(const std::vector<Id>& vars, const std::vector<Id>& cons) {
  // Weighted progressive filling: raise a common level lambda; variable v runs at w_v * lambda until a
  // constraint it crosses saturates or its bound is hit; then it is fixed and the rest keep rising.
  std::vector<double> old_rates;
  old_rates.reserve(vars.size());
  size_t unfixed = 0;
  for (Id v : vars) {
    Variable& var = variables_[v];
    old_rates.push_back(var.rate);
    var.fixed = var.weight <= 0;
    var.rate = 0;
    if (!var.fixed) ++unfixed;
  }
  for (Id c : cons) {
    Constraint& k = constraints_[c];
    k.remaining = k.capacity;
    k.load = 0;
    for (Id eid : k.elements) {
      const Element& e = elements_[eid];
      const Variable& var = variables_[e.var];
      if (!var.fixed && var.visited_gen == visit_gen_) k.load += e.consumption * var.weight;
    }
  }
  while (unfixed > 0) {
    double level = kUnbounded;
    for (Id c : cons) {
      const Constraint& k = constraints_[c];
      if (k.load > 0) level = std::min(level, std::max(0.0, k.remaining) / k.load);
    }
    for (Id v : vars) {
      const Variable& var = variables_[v];
      if (!var.fixed && var.bound != kUnbounded) level = std::min(level, var.bound / var.weight);
    }
    GENIE_ASSERT(level != kUnbounded, "lmm: an enabled variable crosses no constraint and has no bound");
    const double threshold = level * (1 + kSaturationRelEps);
    // Fix every variable limited at this level: bounded ones, and all those on saturated constraints.
    auto fix = [&](Id v) {
      Variable& var = variables_[v];
      var.fixed = true;
      var.rate = var.weight * level;
      if (var.bound != kUnbounded) var.rate = std::min(var.rate, var.bound);
      --unfixed;
      for (Id eid : var.elements) {
        const Element& e = elements_[eid];
        Constraint& k = constraints_[e.cons];
        k.remaining -= e.consumption * var.rate;
        k.load -= e.consumption * var.weight;
        if (k.load < 0) k.load = 0;
      }
    };
    for (Id v : vars) {
      Variable& var = variables_[v];
      if (!var.fixed && var.bound != kUnbounded && var.bound / var.weight <= threshold) fix(v);
    }
    for (Id c : cons) {
      Constraint& k = constraints_[c];
      if (k.load <= 0 || std::max(0.0, k.remaining) / k.load > threshold) continue;
      // Copy: fix() edits loads but not the element list.
      for (size_t i = 0; i < k.elements.size(); ++i) {
        const Id v = elements_[k.elements[i]].var;
        Variable& var = variables_[v];
        if (!var.fixed && var.visited_gen == visit_gen_) fix(v);
      }
    }
  }
  for (size_t i = 0; i < vars.size(); ++i) {
    if (variables_[vars[i]].rate != old_rates[i]) changed_.push_back(vars[i]);
  }
}

}  // namespace genie::netsim::lmm
