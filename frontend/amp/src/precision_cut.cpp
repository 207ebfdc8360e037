#include <ampx/amp/precision_cut.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <queue>
#include <stdexcept>

namespace ampx {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Dinic's maximum flow on a graph of doubles. Network sizes are a few times
// the node count; planning graphs are DAG-like and shallow in the cut, so
// few phases run.
class MaxFlow {
 public:
  // `edges`: how many add_edge calls to make room for.
  MaxFlow(int n, size_t edges)
      : head_(static_cast<size_t>(n), -1),
        level_(static_cast<size_t>(n)),
        it_(static_cast<size_t>(n)) {
    edges_.reserve(2 * edges);
  }

  void add_edge(int from, int to, double cap) {
    if (cap <= 0 || from == to) return;
    edges_.push_back({to, head_[static_cast<size_t>(from)], cap});
    head_[static_cast<size_t>(from)] = static_cast<int>(edges_.size() - 1);
    edges_.push_back({from, head_[static_cast<size_t>(to)], 0});
    head_[static_cast<size_t>(to)] = static_cast<int>(edges_.size() - 1);
  }

  double run(int s, int t) {
    double flow = 0;
    while (bfs(s, t)) {
      it_ = head_;
      while (true) {
        const double f = dfs(s, t);
        if (f <= 0) break;
        flow += f;
      }
    }
    return flow;
  }

  // After run(): nodes reachable from s in the residual graph.
  std::vector<bool> source_side(int s) const {
    std::vector<bool> seen(head_.size(), false);
    std::vector<int> stack{s};
    seen[static_cast<size_t>(s)] = true;
    while (!stack.empty()) {
      const int u = stack.back();
      stack.pop_back();
      for (int e = head_[static_cast<size_t>(u)]; e >= 0; e = edges_[static_cast<size_t>(e)].next) {
        const Edge& ed = edges_[static_cast<size_t>(e)];
        if (ed.cap > kEps && !seen[static_cast<size_t>(ed.to)]) {
          seen[static_cast<size_t>(ed.to)] = true;
          stack.push_back(ed.to);
        }
      }
    }
    return seen;
  }

 private:
  struct Edge {
    int to, next;
    double cap;
  };
  static constexpr double kEps = 1e-12;

  bool bfs(int s, int t) {
    std::fill(level_.begin(), level_.end(), -1);
    std::queue<int> q;
    level_[static_cast<size_t>(s)] = 0;
    q.push(s);
    while (!q.empty()) {
      const int u = q.front();
      q.pop();
      for (int e = head_[static_cast<size_t>(u)]; e >= 0; e = edges_[static_cast<size_t>(e)].next) {
        const Edge& ed = edges_[static_cast<size_t>(e)];
        if (ed.cap > kEps && level_[static_cast<size_t>(ed.to)] < 0) {
          level_[static_cast<size_t>(ed.to)] = level_[static_cast<size_t>(u)] + 1;
          q.push(ed.to);
        }
      }
    }
    return level_[static_cast<size_t>(t)] >= 0;
  }

  // One augmenting path in the level graph (iterative: graphs of 100k
  // nodes would overflow the stack recursively).
  double dfs(int s, int t) {
    std::vector<int>& path = path_;  // edge indices; reused: one path per call
    path.clear();
    int u = s;
    while (true) {
      if (u == t) {
        double f = kInf;
        for (int e : path) f = std::min(f, edges_[static_cast<size_t>(e)].cap);
        for (int e : path) {
          edges_[static_cast<size_t>(e)].cap -= f;
          edges_[static_cast<size_t>(e ^ 1)].cap += f;
        }
        return f;
      }
      int& e = it_[static_cast<size_t>(u)];
      while (e >= 0) {
        const Edge& ed = edges_[static_cast<size_t>(e)];
        if (ed.cap > kEps &&
            level_[static_cast<size_t>(ed.to)] == level_[static_cast<size_t>(u)] + 1)
          break;
        e = ed.next;
      }
      if (e >= 0) {
        path.push_back(e);
        u = edges_[static_cast<size_t>(e)].to;
        continue;
      }
      // Dead end: retreat and skip the edge that led here.
      if (path.empty()) return 0;
      level_[static_cast<size_t>(u)] = -1;
      const int back = path.back();
      path.pop_back();
      u = edges_[static_cast<size_t>(back ^ 1)].to;
      it_[static_cast<size_t>(u)] = edges_[static_cast<size_t>(it_[static_cast<size_t>(u)])].next;
    }
  }

  std::vector<Edge> edges_;
  std::vector<int> head_, level_, it_, path_;
};

}  // namespace

double precision_cut_cost(const PrecisionCutProblem& p, const std::vector<bool>& use16) {
  auto label16 = [&](int x) {
    if (x == PrecisionCutProblem::kFixed16) return true;
    if (x == PrecisionCutProblem::kFixedF32) return false;
    return static_cast<bool>(use16.at(static_cast<size_t>(x)));
  };
  double total = 0;
  for (size_t i = 0; i < p.time_f32.size(); ++i) total += use16[i] ? p.time_16[i] : p.time_f32[i];
  for (const auto& v : p.values) {
    const bool prod16 = label16(v.producer);
    bool any16 = false, any32 = false;
    for (int c : v.consumers) (label16(c) ? any16 : any32) = true;
    if (!prod16 && any16) total += v.cast_to_16;
    if (prod16 && any32) total += v.cast_to_f32;
  }
  return total;
}

PrecisionCutResult solve_precision_cut(const PrecisionCutProblem& p) {
  const size_t n = p.time_f32.size();
  if (p.time_16.size() != n) throw std::invalid_argument("precision cut: time vectors differ");
  // Vertices: 0 = source (f32 side), 1 = sink (16-bit side), 2.. candidates,
  // then per value an auxiliary "needed in 16-bit" and "needed in f32".
  constexpr int s = 0, t = 1;
  const int base_aux = 2 + static_cast<int>(n);
  size_t edges = 2 * n;
  for (const auto& v : p.values) edges += 2 + 2 * v.consumers.size();
  MaxFlow g(base_aux + 2 * static_cast<int>(p.values.size()), edges);
  auto vertex = [&](int x) {
    if (x == PrecisionCutProblem::kFixedF32) return s;
    if (x == PrecisionCutProblem::kFixed16) return t;
    if (x < 0 || static_cast<size_t>(x) >= n)
      throw std::invalid_argument("precision cut: bad index");
    return 2 + x;
  };
  for (size_t i = 0; i < n; ++i) {
    // Label 16-bit = sink side: cutting s->i pays time_16; f32 pays i->t.
    const double a = std::max(0.0, p.time_16[i]), b = std::max(0.0, p.time_f32[i]);
    const double m = std::min(a, b);  // a constant shift keeps capacities small
    g.add_edge(s, 2 + static_cast<int>(i), a - m);
    g.add_edge(2 + static_cast<int>(i), t, b - m);
  }
  for (size_t k = 0; k < p.values.size(); ++k) {
    const auto& v = p.values[k];
    const int prod = vertex(v.producer);
    const int need16 = base_aux + 2 * static_cast<int>(k), need32 = need16 + 1;
    // [producer f32 and need16]: edge producer -> need16 (cut when producer
    // is on the source side and need16 on the sink side).
    g.add_edge(prod, need16, std::max(0.0, v.cast_to_16));
    // [producer 16-bit and not need32]: edge need32 -> producer.
    g.add_edge(need32, prod, std::max(0.0, v.cast_to_f32));
    for (int c : v.consumers) {
      const int cv = vertex(c);
      g.add_edge(need16, cv, kInf);  // consumer 16-bit => needed in 16-bit
      g.add_edge(cv, need32, kInf);  // consumer f32 => needed in f32
    }
  }
  g.run(s, t);
  // The smallest source side: every tie resolved toward 16-bit.
  const std::vector<bool> f32_side = g.source_side(s);
  PrecisionCutResult r;
  r.use_16bit.resize(n);
  for (size_t i = 0; i < n; ++i) r.use_16bit[i] = !f32_side[2 + i];
  r.total = precision_cut_cost(p, r.use_16bit);
  return r;
}

}  // namespace ampx
