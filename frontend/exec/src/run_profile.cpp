#include <ampx/exec/run_profile.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <stdexcept>

namespace ampx {

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double predicted_at(const std::vector<double>& predicted, size_t i) {
  return i < predicted.size() ? predicted[i] : -1;
}

}  // namespace

const char* timing_method_name(plugins::Kernel::TimingMethod m) {
  return m == plugins::Kernel::TimingMethod::kDevice ? "device" : "host";
}

ProfileSummary summarize_profiles(const std::vector<RunProfile>& runs,
                                  const std::vector<double>& predicted_per_step) {
  if (runs.empty()) throw std::invalid_argument("no profiled runs to summarise");
  const size_t n = runs.front().steps.size();
  for (const RunProfile& r : runs)
    if (r.steps.size() != n)
      throw std::invalid_argument("profiled runs of different executors cannot be summarised");
  ProfileSummary s;
  std::vector<double> totals;
  for (const RunProfile& r : runs) totals.push_back(r.total_us);
  s.median_total_us = median_of(totals);
  bool any_device = false, any_host = false;
  std::map<std::string, OpSummary> by_op;
  for (size_t i = 0; i < n; ++i) {
    std::vector<double> us;
    for (const RunProfile& r : runs) us.push_back(r.steps[i].us);
    StepSummary st;
    st.step = runs.front().steps[i];
    st.step.us = median_of(us);
    std::vector<double> reorder_us;
    for (const RunProfile& r : runs) reorder_us.push_back(r.steps[i].reorder_us);
    st.step.reorder_us = median_of(reorder_us);
    st.min_us = *std::min_element(us.begin(), us.end());
    st.max_us = *std::max_element(us.begin(), us.end());
    st.predicted_us = predicted_at(predicted_per_step, i);
    if (st.step.copy_from < 0) {
      any_device = any_device || st.step.method == plugins::Kernel::TimingMethod::kDevice;
      any_host = any_host || st.step.method == plugins::Kernel::TimingMethod::kHost;
    }
    OpSummary& op = by_op[st.step.op];
    op.op = st.step.op;
    ++op.steps;
    op.us += st.step.us;
    op.reorders += st.step.reorders;
    op.reorder_us += st.step.reorder_us;
    if (st.predicted_us >= 0) {
      op.predicted_us += st.predicted_us;
      ++op.predicted_steps;
    }
    s.steps.push_back(std::move(st));
  }
  for (auto& [name, op] : by_op) s.ops.push_back(op);
  std::sort(s.ops.begin(), s.ops.end(),
            [](const OpSummary& a, const OpSummary& b) { return a.us > b.us; });
  s.method = any_device && any_host ? "mixed" : any_device ? "device" : "host";
  return s;
}

std::string chrome_trace_json(const std::vector<RunProfile>& runs,
                              const std::vector<std::string>& device_ids,
                              const std::vector<double>& predicted_per_step) {
  nlohmann::json events = nlohmann::json::array();
  const auto device_name = [&](int d) {
    return d >= 0 && static_cast<size_t>(d) < device_ids.size() ? device_ids[static_cast<size_t>(d)]
                                                                : "device " + std::to_string(d);
  };
  // Track names: one thread per device, one for the copies.
  const int copies_tid = static_cast<int>(device_ids.size());
  for (size_t d = 0; d < device_ids.size(); ++d)
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 1},
                      {"tid", static_cast<int>(d)},
                      {"args", {{"name", device_ids[d]}}}});
  events.push_back({{"name", "thread_name"},
                    {"ph", "M"},
                    {"pid", 1},
                    {"tid", copies_tid},
                    {"args", {{"name", "copies"}}}});
  double offset = 0;
  for (size_t r = 0; r < runs.size(); ++r) {
    for (size_t i = 0; i < runs[r].steps.size(); ++i) {
      const StepTiming& s = runs[r].steps[i];
      const bool copy = s.copy_from >= 0;
      nlohmann::json args{{"node", s.name},
                          {"op", s.op},
                          {"device", device_name(s.device)},
                          {"dtype", s.dtype},
                          {"shapes", s.shapes},
                          {"measured_us", s.us},
                          {"timing", timing_method_name(s.method)},
                          {"run", r}};
      if (copy) args["from_device"] = device_name(s.copy_from);
      if (!s.implementation.empty()) {
        args["implementation"] = s.implementation;
        args["reorders"] = s.reorders;
        args["reorder_us"] = s.reorder_us;
        args["casts"] = s.casts;
      }
      const double predicted = predicted_at(predicted_per_step, i);
      if (predicted >= 0) args["predicted_us"] = predicted;
      events.push_back({{"name", copy ? "copy " + s.name : s.name},
                        {"cat", copy ? "copy" : (s.op == "Cast" ? "cast" : "kernel")},
                        {"ph", "X"},
                        {"pid", 1},
                        {"tid", copy ? copies_tid : s.device},
                        {"ts", offset + s.start_us},
                        {"dur", s.us},
                        {"args", std::move(args)}});
    }
    offset += runs[r].total_us;
  }
  nlohmann::json trace{{"traceEvents", std::move(events)},
                       {"displayTimeUnit", "ms"},
                       {"otherData", {{"producer", "ampx run --trace"}, {"runs", runs.size()}}}};
  return trace.dump(1) + "\n";
}

}  // namespace ampx
