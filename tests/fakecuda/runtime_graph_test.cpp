// SPDX-License-Identifier: Apache-2.0
// Tests of graphs beyond plain capture (fakecuda/src/runtime_graph.cpp): capture into an existing graph, capture
// dependencies, nodes added one by one, child and conditional nodes, user objects.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "genie/fakecuda/graph.hpp"
#include "genie/fakecuda/runtime.hpp"

namespace genie::fakecuda {
namespace {

RuntimeOptions test_options() {
  RuntimeOptions o;
  o.spec = load_device_spec("h200").value();
  o.device_count = 1;
  // Host time advances only by modelled API costs and waits (runtime_test.cpp).
  o.clock = {sched::ClockMode::kVirtual, SimTime::ms(100000)};
  return o;
}

/// An op of a fixed duration that counts its runs.
GraphNode timed_node(SimTime d, int* runs) {
  GraphNode n;
  n.spec.label = "op";
  n.spec.duration = d;
  n.spec.action = [runs] { ++*runs; };
  return n;
}

/// Launches `g` (instantiated) on `s` and returns the modelled time the launch took, in ns. A backlog op first, so
/// the replay starts when it ends (the host's launch cost hidden), as in runtime_test.cpp.
int64_t replay_ns(Runtime& rt, Graph& g, Stream& s) {
  Graph* exec = rt.instantiate(g).value();
  Event* e0 = rt.create_event(0);
  Event* e1 = rt.create_event(0);
  sched::OpSpec backlog;
  backlog.label = "backlog";
  backlog.duration = SimTime::ms(1);
  EXPECT_TRUE(rt.submit(s, backlog).is_ok());
  EXPECT_TRUE(rt.record_event(*e0, s).is_ok());
  EXPECT_TRUE(rt.launch_graph(*exec, s).is_ok());
  EXPECT_TRUE(rt.record_event(*e1, s).is_ok());
  EXPECT_TRUE(rt.synchronize_event(*e1).is_ok());
  const double ms = rt.elapsed_ms(*e0, *e1).value();
  EXPECT_TRUE(rt.destroy_graph(exec).is_ok());
  return static_cast<int64_t>(ms * 1e6 + 0.5);
}

TEST(RuntimeGraphCapture, CaptureToGraphAppendsAfterTheGivenNodes) {
  Runtime rt(test_options());
  Stream* s = rt.create_stream(0, kStreamNonBlocking, 0);
  Graph* g = rt.create_graph();
  int runs = 0;
  int root = rt.add_graph_node(*g, {}, timed_node(SimTime::us(10), &runs)).value();
  ASSERT_TRUE(rt.begin_capture_to_graph(*s, *g, {root}, 0).is_ok());
  std::vector<int> frontier;
  EXPECT_EQ(rt.capture_graph(*s, &frontier), g);
  EXPECT_EQ(frontier, std::vector<int>{root});
  char* d = static_cast<char*>(rt.device_alloc(0, 64).value());
  ASSERT_TRUE(rt.memset_async(d, 7, 64, *s).is_ok());
  auto ended = rt.end_capture(*s);
  ASSERT_TRUE(ended.is_ok());
  EXPECT_EQ(ended.value(), g);  // the program's graph, not a new one
  ASSERT_EQ(g->nodes.size(), 2u);
  EXPECT_EQ(g->nodes[1].deps, std::vector<int>{root});
  EXPECT_EQ(d[0], 0);  // captured, not run
  replay_ns(rt, *g, *s);
  EXPECT_EQ(d[63], 7);
  EXPECT_EQ(runs, 1);
}

TEST(RuntimeGraphCapture, UpdateCaptureDependenciesReplacesOrExtendsTheFrontier) {
  // System: captured op A (10 us), then a node B (20 us) added to the capture graph beside A (no deps); then the
  // frontier is set to {B} (replace) and op C (5 us) captured. Expectation: C depends on B only; the replay takes
  // max(A, B + C) = 25 us. With "add" instead, C depends on A and B.
  for (bool replace : {true, false}) {
    Runtime rt(test_options());
    Stream* s = rt.create_stream(0, kStreamNonBlocking, 0);
    ASSERT_TRUE(rt.begin_capture(*s, 0).is_ok());
    int runs = 0;
    std::vector<int> frontier;
    Graph* g = rt.capture_graph(*s, &frontier);
    ASSERT_NE(g, nullptr);
    int a = rt.add_graph_node(*g, frontier, timed_node(SimTime::us(10), &runs)).value();
    ASSERT_TRUE(rt.update_capture_dependencies(*s, {a}, true).is_ok());
    int b = rt.add_graph_node(*g, {}, timed_node(SimTime::us(20), &runs)).value();
    ASSERT_TRUE(rt.update_capture_dependencies(*s, {b}, replace).is_ok());
    EXPECT_FALSE(rt.update_capture_dependencies(*s, {99}, true).is_ok());  // not a node of the graph
    sched::OpSpec c;
    c.label = "c";
    c.duration = SimTime::us(5);
    ASSERT_TRUE(rt.submit(*s, c).is_ok());
    ASSERT_TRUE(rt.end_capture(*s).is_ok());
    ASSERT_EQ(g->nodes.size(), 3u);
    EXPECT_EQ(g->nodes[2].deps, replace ? std::vector<int>{b} : (std::vector<int>{a, b}));
    EXPECT_EQ(replay_ns(rt, *g, *s), SimTime::us(25).count_ns());
    EXPECT_FALSE(rt.update_capture_dependencies(*s, {a}, true).is_ok());  // no longer capturing
  }
}

TEST(RuntimeGraphNodes, ConditionalIfRunsItsBodyOnlyForANonZeroValue) {
  // System: root (10 us) -> if(handle) { body: 30 us op }. Expectation: default value 1: 40 us and the body ran;
  // default 0: 10 us and it did not; with an else body (size 2) of 5 us: 15 us.
  for (unsigned value : {1u, 0u}) {
    for (unsigned size : {1u, 2u}) {
      Runtime rt(test_options());
      Stream* s = rt.create_stream(0, kStreamNonBlocking, 0);
      Graph* g = rt.create_graph();
      int runs = 0, body_runs = 0, else_runs = 0;
      int root = rt.add_graph_node(*g, {}, timed_node(SimTime::us(10), &runs)).value();
      GraphNode cond;
      cond.kind = GraphNodeKind::kConditional;
      cond.cond_type = kCondTypeIf;
      uint64_t h = rt.create_conditional_handle(*g, value, 0);
      cond.cond_value = rt.conditional_value(h, *g).value();
      int c = rt.add_graph_node(*g, {root}, cond, size).value();
      ASSERT_EQ(g->nodes[static_cast<size_t>(c)].bodies.size(), size);
      // Bodies are graphs the program fills by handle.
      Graph* body = rt.resolve_graph(g->nodes[static_cast<size_t>(c)].bodies[0].get());
      ASSERT_NE(body, nullptr);
      ASSERT_TRUE(rt.add_graph_node(*body, {}, timed_node(SimTime::us(30), &body_runs)).is_ok());
      if (size == 2) {
        Graph* other = rt.resolve_graph(g->nodes[static_cast<size_t>(c)].bodies[1].get());
        ASSERT_TRUE(rt.add_graph_node(*other, {}, timed_node(SimTime::us(5), &else_runs)).is_ok());
      }
      const int64_t expect_us = value != 0 ? 40 : (size == 2 ? 15 : 10);
      EXPECT_EQ(replay_ns(rt, *g, *s), SimTime::us(expect_us).count_ns()) << "value " << value << " size " << size;
      EXPECT_EQ(body_runs, value != 0 ? 1 : 0);
      EXPECT_EQ(else_runs, value == 0 && size == 2 ? 1 : 0);
      // Destroying the graph unregisters its bodies.
      ASSERT_TRUE(rt.destroy_graph(g).is_ok());
      EXPECT_EQ(rt.resolve_graph(body), nullptr);
    }
  }
}

TEST(RuntimeGraphNodes, SwitchRunsTheBodyTheValueNamesAndWhileRunsOnce) {
  Runtime rt(test_options());
  Stream* s = rt.create_stream(0, kStreamNonBlocking, 0);
  for (int type : {kCondTypeSwitch, kCondTypeWhile}) {
    Graph* g = rt.create_graph();
    GraphNode cond;
    cond.kind = GraphNodeKind::kConditional;
    cond.cond_type = type;
    cond.cond_value = type == kCondTypeSwitch ? 2 : 1;
    const unsigned size = type == kCondTypeSwitch ? 3 : 1;
    int c = rt.add_graph_node(*g, {}, cond, size).value();
    std::vector<int> runs(size, 0);
    for (unsigned i = 0; i < size; ++i) {
      Graph* body = g->nodes[static_cast<size_t>(c)].bodies[i].get();
      ASSERT_TRUE(rt.add_graph_node(*body, {}, timed_node(SimTime::us(10 * (i + 1)), &runs[i])).is_ok());
    }
    const int64_t ns = replay_ns(rt, *g, *s);
    if (type == kCondTypeSwitch) {
      EXPECT_EQ(runs, (std::vector<int>{0, 0, 1}));
      EXPECT_EQ(ns, SimTime::us(30).count_ns());
    } else {
      EXPECT_EQ(runs, std::vector<int>{1});  // once: the kernel that would end the loop does not run
      EXPECT_EQ(ns, SimTime::us(10).count_ns());
    }
  }
}

TEST(RuntimeGraphNodes, ChildGraphNodeRunsASnapshotOfTheChild) {
  Runtime rt(test_options());
  Stream* s = rt.create_stream(0, kStreamNonBlocking, 0);
  Graph* child = rt.create_graph();
  int child_runs = 0;
  ASSERT_TRUE(rt.add_graph_node(*child, {}, timed_node(SimTime::us(7), &child_runs)).is_ok());
  Graph* g = rt.create_graph();
  GraphNode node;
  node.kind = GraphNodeKind::kChild;
  node.bodies.push_back(child->snapshot());
  ASSERT_TRUE(rt.add_graph_node(*g, {}, node).is_ok());
  // Changing the child afterwards does not change the node (cudaGraphAddChildGraphNode clones).
  ASSERT_TRUE(rt.add_graph_node(*child, {0}, timed_node(SimTime::us(100), &child_runs)).is_ok());
  EXPECT_EQ(replay_ns(rt, *g, *s), SimTime::us(7).count_ns());
  EXPECT_EQ(child_runs, 1);
}

TEST(RuntimeGraphNodes, NodeAddedByCaptureIsTheKernelLaunchOfTheCostModel) {
  Runtime rt(test_options());
  Stream* s = rt.create_stream(0, kStreamNonBlocking, 0);
  Graph* g = rt.create_graph();
  Kernel k;
  k.name = "genie_test_kernel";
  KernelShape shape;
  shape.grid[0] = 1024;
  shape.block[0] = 256;
  auto added =
      rt.add_graph_node_by_capture(*g, {}, 0, [&](Stream& scratch) { return rt.launch_kernel(k, shape, scratch); });
  ASSERT_TRUE(added.is_ok()) << added.status().to_string();
  ASSERT_EQ(g->nodes.size(), 1u);
  EXPECT_EQ(g->nodes[0].spec.duration, rt.cost_model().kernel(k.name, shape));
  EXPECT_FALSE(rt.is_capturing(*s));
  // A call that submits nothing adds no node and fails; a call that fails leaves the graph as it was.
  EXPECT_FALSE(rt.add_graph_node_by_capture(*g, {}, 0, [](Stream&) { return Status::ok(); }).is_ok());
  KernelShape zero;
  zero.grid[0] = 0;
  EXPECT_FALSE(
      rt.add_graph_node_by_capture(*g, {}, 0, [&](Stream& sc) { return rt.launch_kernel(k, zero, sc); }).is_ok());
  EXPECT_EQ(g->nodes.size(), 1u);
}

TEST(RuntimeGraphNodes, AReplayRecordsEachNodeWithItsKindAndTimes) {
  // System: a graph of a 10 us kernel node, then (depending on it) a child graph holding a 7 us memset node,
  // launched with the trace on. Expectation: besides the launch's own "graph" record, one record per node, with
  // its label and kind, the child's node starting where the kernel ends; the lane's busy time counts them (a
  // graph of kernels is compute, as on a GPU). Without OpSpec::parts only the "graph" record (kind kOther) exists.
  RuntimeOptions o = test_options();
  o.record_trace = true;
  Runtime rt(o);
  Stream* s = rt.create_stream(0, kStreamNonBlocking, 0);
  int runs = 0;
  GraphNode kernel = timed_node(SimTime::us(10), &runs);
  kernel.spec.label = "genie_graph_kernel";
  kernel.spec.kind = sched::OpKind::kKernel;
  Graph* child = rt.create_graph();
  GraphNode memset = timed_node(SimTime::us(7), &runs);
  memset.spec.label = "genie_graph_memset";
  memset.spec.kind = sched::OpKind::kMemset;
  ASSERT_TRUE(rt.add_graph_node(*child, {}, memset).is_ok());
  Graph* g = rt.create_graph();
  int k = rt.add_graph_node(*g, {}, kernel).value();
  GraphNode node;
  node.kind = GraphNodeKind::kChild;
  node.bodies.push_back(child->snapshot());
  ASSERT_TRUE(rt.add_graph_node(*g, {k}, node).is_ok());
  EXPECT_EQ(replay_ns(rt, *g, *s), SimTime::us(17).count_ns());
  std::vector<sched::OpRecord> recs;
  rt.timeline().drain_records([&](int, uint32_t, const sched::OpRecord& r) { recs.push_back(r); });
  const sched::OpRecord* graph = nullptr;
  const sched::OpRecord* kr = nullptr;
  const sched::OpRecord* mr = nullptr;
  for (const auto& r : recs) {
    const std::string label = r.label;
    if (label == "graph") graph = &r;
    if (label == "genie_graph_kernel") kr = &r;
    if (label == "genie_graph_memset") mr = &r;
  }
  ASSERT_NE(graph, nullptr);
  ASSERT_NE(kr, nullptr);
  ASSERT_NE(mr, nullptr);
  EXPECT_EQ(kr->kind, sched::OpKind::kKernel);
  EXPECT_EQ(mr->kind, sched::OpKind::kMemset);
  EXPECT_EQ(kr->start, graph->start);
  EXPECT_EQ((kr->end - kr->start).count_ns(), SimTime::us(10).count_ns());
  EXPECT_EQ(mr->start, kr->end);
  EXPECT_EQ(mr->end, graph->end);
  EXPECT_EQ(runs, 2);
}

TEST(RuntimeUserObjects, DestructorRunsWhenTheLastReferenceGoes) {
  // System: an object with one reference, moved to a graph; the graph is instantiated (the executable takes its
  // own reference) and destroyed. Expectation: the destructor runs only when the executable is destroyed too.
  Runtime rt(test_options());
  int destroyed = 0;
  auto destroy = [](void* p) { ++*static_cast<int*>(p); };
  UserObject* o = rt.create_user_object(&destroyed, destroy, 1);
  EXPECT_EQ(rt.resolve_user_object(o), o);
  Graph* g = rt.create_graph();
  ASSERT_TRUE(rt.graph_retain_user_object(*g, *o, 1, /*move=*/true).is_ok());
  Graph* exec = rt.instantiate(*g).value();
  ASSERT_TRUE(rt.destroy_graph(g).is_ok());
  EXPECT_EQ(destroyed, 0);
  ASSERT_TRUE(rt.destroy_graph(exec).is_ok());
  EXPECT_EQ(destroyed, 1);
  EXPECT_EQ(rt.resolve_user_object(o), nullptr);
}

TEST(RuntimeUserObjects, ReferencesAreCountedAcrossProgramAndGraph) {
  Runtime rt(test_options());
  int destroyed = 0;
  UserObject* o = rt.create_user_object(
      &destroyed, [](void* p) { ++*static_cast<int*>(p); }, 2);
  Graph* g = rt.create_graph();
  ASSERT_TRUE(rt.graph_retain_user_object(*g, *o, 3, /*move=*/false).is_ok());  // 5 references
  EXPECT_FALSE(rt.graph_release_user_object(*g, *o, 4).is_ok());                // the graph holds 3
  ASSERT_TRUE(rt.graph_release_user_object(*g, *o, 3).is_ok());
  ASSERT_TRUE(rt.release_user_object(*o, 1).is_ok());
  EXPECT_EQ(destroyed, 0);
  EXPECT_FALSE(rt.release_user_object(*o, 2).is_ok());  // only one is left
  ASSERT_TRUE(rt.release_user_object(*o, 1).is_ok());
  EXPECT_EQ(destroyed, 1);
  ASSERT_TRUE(rt.destroy_graph(g).is_ok());
  EXPECT_EQ(destroyed, 1);
}

}  // namespace
}  // namespace genie::fakecuda
