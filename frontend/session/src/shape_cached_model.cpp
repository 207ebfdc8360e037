#include <ampx/onnx/onnx_import.hpp>
#include <ampx/session/session.hpp>
#include <ampx/session/shape_cached_model.hpp>

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace ampx {

struct ShapeCachedModel::Entry {
  std::vector<std::pair<std::string, Shape>> key;  // by input name, sorted
  onnx_io::CompositeInputs composites;             // sequence lengths, absent optionals
  // The inputs whose values the graph was built for (Graph::specialised_on)
  // and those values: a run with other values needs another entry.
  std::vector<std::pair<std::string, std::vector<std::byte>>> values;
  std::vector<std::string> order;    // the graph's inputs
  std::vector<std::string> outputs;  // the imported graph's output names
  AmpPlan plan;
  CompiledModel model;
};

ShapeCachedModel::ShapeCachedModel(Session& session, std::string model, ModelOptions base,
                                   PlanRequest request, ShapeCacheOptions options)
    : session_(&session),
      model_(std::move(model)),
      base_(std::move(base)),
      request_(std::move(request)),
      options_(std::move(options)) {
  if (options_.capacity < 1)
    throw std::invalid_argument("ShapeCacheOptions::capacity must be at least 1");
  request_.purpose = PlanPurpose::kRun;  // compile() needs the planned graph
  request_.logging = PlanLogging::kQuiet;
}

ShapeCachedModel::ShapeCachedModel(ShapeCachedModel&&) noexcept = default;
ShapeCachedModel& ShapeCachedModel::operator=(ShapeCachedModel&&) noexcept = default;
ShapeCachedModel::~ShapeCachedModel() = default;

ShapeCachedModel::Entry& ShapeCachedModel::entry_for(std::span<const HostTensorView> inputs,
                                                     const onnx_io::CompositeInputs& composites,
                                                     Values given) {
  std::vector<std::pair<std::string, Shape>> key;
  for (const HostTensorView& t : inputs) {
    if (t.name.empty()) throw std::invalid_argument(model_ + ": an input without a name");
    key.emplace_back(std::string(t.name), t.type.shape);
  }
  std::sort(key.begin(), key.end());
  for (size_t i = 1; i < key.size(); ++i)
    if (key[i].first == key[i - 1].first)
      throw std::invalid_argument(model_ + ": input '" + key[i].first + "' is given twice");
  auto same_values = [&](const Entry& e) {
    for (const auto& value : e.values) {  // (clang 14 cannot capture a structured binding)
      const auto t = std::find_if(inputs.begin(), inputs.end(),
                                  [&](const HostTensorView& h) { return h.name == value.first; });
      if (t == inputs.end() || !std::ranges::equal(t->data, value.second)) return false;
    }
    return true;
  };
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->key == key && it->composites == composites && same_values(*it)) {
      entries_.splice(entries_.begin(), entries_, it);  // most recently used
      return entries_.front();
    }

  // A new shape: the model imported with every input pinned to the shape
  // it is run with (a contradiction with a fixed dimension names the
  // input), planned and compiled.
  const auto t0 = std::chrono::steady_clock::now();
  ModelOptions mo = base_;
  mo.composite_inputs = composites;
  for (const auto& [name, shape] : key) {
    mo.input_shapes[name] = shape;
    mo.input_shape_origins[name] = "the run's input '" + name + "'";
  }
  // Values too: a shape or axes computed from an input at run time are
  // evaluated from it, and the entry remembers the values it was built for.
  for (const HostTensorView& t : inputs)
    if (given == Values::kGiven)
      mo.input_values[std::string(t.name)] =
          HostTensor{std::string(t.name), t.type, {t.data.begin(), t.data.end()}};
  const Graph graph = session_->load(model_, mo);
  std::vector<std::pair<std::string, std::vector<std::byte>>> values;
  for (const std::string& name : graph.specialised_on)
    for (const HostTensorView& t : inputs)
      if (t.name == name)
        values.emplace_back(name, std::vector<std::byte>(t.data.begin(), t.data.end()));
  std::vector<std::string> order;
  for (ValueId v : graph.inputs()) order.push_back(graph.value(v).name);
  std::vector<std::string> outputs;
  for (ValueId v : graph.outputs()) outputs.push_back(graph.value(v).name);
  for (const std::string& name : order)
    if (!std::binary_search(key.begin(), key.end(), std::pair<std::string, Shape>{name, {}},
                            [](const auto& a, const auto& b) { return a.first < b.first; }))
      throw std::invalid_argument(model_ + ": input '" + name + "' is not given");
  for (const auto& [name, shape] : key)
    if (std::find(order.begin(), order.end(), name) == order.end())
      throw std::invalid_argument(model_ + ": '" + name + "' is not an input of the model");
  PlannedModel planned = session_->plan(graph, request_);
  // Every later shape runs on the devices the first one was planned for.
  if (!request_.selection && !request_.has_profile()) request_.selection = planned.selection;
  CompiledModel compiled = session_->compile(planned, {.fusion = options_.fusion});
  AmpPlan plan = std::move(planned.plan);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ++stats_.plans;
  stats_.last_plan_ms = ms;
  stats_.total_plan_ms += ms;
  if (entries_.size() >= options_.capacity) {
    entries_.pop_back();
    ++stats_.evictions;
  }
  entries_.push_front(Entry{std::move(key), composites, std::move(values), std::move(order),
                            std::move(outputs), std::move(plan), std::move(compiled)});
  return entries_.front();
}

std::vector<HostTensor> ShapeCachedModel::run(std::span<const HostTensor> inputs,
                                              const onnx_io::CompositeInputs& composites) {
  return run(views_of(inputs), composites);
}

std::vector<HostTensor> ShapeCachedModel::run(std::span<const HostTensorView> inputs,
                                              const onnx_io::CompositeInputs& composites) {
  Entry& e = entry_for(inputs, composites);
  std::vector<HostTensor> outs = run_entry(e, inputs);
  // Named as imported (the planned graph may rename an output it computes
  // in 16-bit and casts back): a sequence's elements are found by name.
  for (size_t i = 0; i < outs.size() && i < e.outputs.size(); ++i) outs[i].name = e.outputs[i];
  return outs;
}

std::vector<HostTensor> ShapeCachedModel::run_entry(Entry& e,
                                                    std::span<const HostTensorView> inputs) {
  ++stats_.runs;
  // The executor takes the graph's inputs in order: given so, as they are;
  // else the views reordered (the data is never copied for a run).
  const bool in_order =
      inputs.size() == e.order.size() &&
      std::equal(e.order.begin(), e.order.end(), inputs.begin(),
                 [](const std::string& name, const HostTensorView& t) { return t.name == name; });
  if (in_order) return e.model.run(inputs);
  std::vector<HostTensorView> ordered;
  ordered.reserve(e.order.size());
  for (const std::string& name : e.order)
    for (const HostTensorView& t : inputs)
      if (t.name == name) ordered.push_back(t);
  return e.model.run(ordered);
}

bool ShapeCachedModel::prepare(std::span<const HostTensorView> inputs,
                               const onnx_io::CompositeInputs& composites) {
  try {
    (void)entry_for(inputs, composites, Values::kUnknown);
    return true;
  } catch (const onnx_io::ValueNeededError&) {
    return false;  // the first run plans it, from its values
  }
}

const AmpPlan& ShapeCachedModel::plan() const {
  if (entries_.empty()) throw std::logic_error(model_ + ": not run yet");
  return entries_.front().plan;
}

}  // namespace ampx
