// run_session(): `ampx plugin-check`'s steps in child processes (the
// pre-flight's machinery, plugins::run_forked). One child loads the plugin
// and runs the steps in order, sending each result as it comes; when it
// crashes, exits or hangs, the step it was in gets that as its result and a
// fresh child goes on with the next step. A healthy plugin costs one child.
#include <ampx/plugins/forked_call.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "check_steps.hpp"

// LeakSanitizer's entry point, present only in a sanitizer build: the
// child checks for leaks after it unloaded the plugin (it leaves with
// _exit(), which runs no exit-time check).
extern "C" int __lsan_do_recoverable_leak_check() __attribute__((weak));

namespace ampx::check {
namespace {

using json = nlohmann::json;
using plugins::ChildPipe;
using plugins::ForkOptions;
using plugins::ForkOutcome;
using plugins::LoadedPlugin;

// After this many hangs the remaining steps are not run: a plugin whose
// every launch hangs would otherwise cost the timeout per case.
constexpr int kMaxHangs = 3;

void send(const ChildPipe& pipe, const json& j) {
  const std::vector<uint8_t> bytes = json::to_cbor(j);
  pipe.send(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

class PipeSink final : public Sink {
 public:
  PipeSink(const ChildPipe& pipe, size_t step) : pipe_(pipe), step_(step) {}
  void begin(const std::string& what) override {
    send(pipe_, {{"t", "begin"}, {"step", step_}, {"what", what}});
  }
  void add(AbiCheck c) override {
    send(pipe_, {{"t", "abi"},
                 {"step", step_},
                 {"what", c.what},
                 {"ok", c.ok},
                 {"detail", c.detail},
                 {"since", c.since_minor}});
  }
  void answered(ampx_support support, const std::string& note) override {
    send(
        pipe_,
        {{"t", "answer"}, {"step", step_}, {"support", static_cast<int>(support)}, {"note", note}});
  }

 private:
  const ChildPipe& pipe_;
  size_t step_;
};

json case_json(size_t step, const CaseRun& r) {
  json outputs = json::array();
  for (const auto& o : r.outputs)
    outputs.push_back(json::binary(std::vector<uint8_t>(o.begin(), o.end())));
  return {{"t", "case"},
          {"step", step},
          {"answer", static_cast<int>(r.answer)},
          {"note", r.note},
          {"outcome", static_cast<int>(r.outcome)},
          {"message", r.message},
          {"us", r.us},
          {"outputs", std::move(outputs)}};
}

CaseRun case_from_json(const json& j) {
  CaseRun r;
  r.answer = static_cast<ampx_support>(j.at("answer").get<int>());
  r.note = j.at("note").get<std::string>();
  r.outcome = static_cast<CaseRun::Outcome>(j.at("outcome").get<int>());
  r.message = j.at("message").get<std::string>();
  r.us = j.at("us").get<double>();
  for (const json& o : j.at("outputs")) {
    const auto& b = o.get_binary();
    r.outputs.emplace_back(b.begin(), b.end());
  }
  return r;
}

// The child: load, tell what was loaded, run the steps from `first` on.
void child(const std::filesystem::path& file, const CheckOptions& o, const StepList& steps,
           size_t first, const ChildPipe& pipe) {
  std::unique_ptr<LoadedPlugin> p;
  try {
    p = LoadedPlugin::open(file);
    plugins::PluginCreateOptions co;
    co.log_level = 4;  // errors only
    co.options = o.plugin_options;
    p->create(co);
  } catch (const std::exception& e) {
    send(pipe, {{"t", "load_error"}, {"what", e.what()}});
    return;
  }
  const auto devices = static_cast<int32_t>(p->device_props().size());
  send(pipe, {{"t", "info"},
              {"plugin", p->name()},
              {"version", p->version()},
              {"note", p->note()},
              {"abi_major", p->abi_major()},
              {"abi_minor", p->abi_minor()},
              {"table_size", p->table_size()},
              {"devices", devices},
              {"numerics", p->declares_numerics()},
              {"f16_accumulation", static_cast<int>(p->f16_accumulation())}});
  const std::vector<Step> list = steps(devices);
  for (size_t i = first; i < list.size(); ++i) {
    PipeSink sink(pipe, i);
    sink.begin(list[i].what);
    try {
      if (std::optional<CaseRun> r = list[i].run(*p, sink)) send(pipe, case_json(i, *r));
    } catch (const std::exception& e) {
      // A step that could not finish (a status where none was expected).
      if (list[i].is_case) {
        CaseRun r;
        r.message = e.what();
        send(pipe, case_json(i, r));
      } else {
        sink.add({list[i].what, false, e.what()});
      }
    }
    send(pipe, {{"t", "end"}, {"step", i}});
  }
  // Unload, then (in a sanitizer build) ask LeakSanitizer what the plugin
  // kept past plugin_destroy and dlclose.
  p.reset();
  if (__lsan_do_recoverable_leak_check != nullptr && __lsan_do_recoverable_leak_check() != 0)
    send(pipe, {{"t", "leaks"}});
}

}  // namespace

SessionResult run_session(const std::filesystem::path& file, const CheckOptions& o,
                          const StepList& steps) {
  SessionResult r;
  std::vector<Step> list;
  size_t next = 0;
  int hangs = 0;
  ForkOptions fo;
  fo.timeout_s = o.timeout_s;
  fo.deadline = ForkOptions::Deadline::kFromLastMessage;
  fo.output = ForkOptions::Output::kStderr;  // a sanitizer's report stays visible
  for (bool first_child = true; first_child || next < list.size(); first_child = false) {
    const ForkOutcome out =
        plugins::run_forked([&](const ChildPipe& pipe) { child(file, o, steps, next, pipe); }, fo);
    if (out.kind == ForkOutcome::Kind::kNotForked) {
      r.abi.push_back({"a child process for the checks", false, "fork failed"});
      return r;
    }
    size_t current = next;  // the step the child was in
    std::string begun;      // the call it was making
    bool ended = false, info = false;
    for (const std::string& m : out.messages) {
      const json j = json::from_cbor(m);
      const std::string t = j.at("t").get<std::string>();
      if (t == "load_error") {
        r.abi.push_back(
            {"loading the plugin in a child process", false, j.at("what").get<std::string>()});
        return r;
      }
      if (t == "info") {
        info = true;
        if (!r.loaded) {
          r.loaded = true;
          r.plugin = j.at("plugin").get<std::string>();
          r.version = j.at("version").get<std::string>();
          r.note = j.at("note").get<std::string>();
          r.abi_major = j.at("abi_major").get<uint32_t>();
          r.abi_minor = j.at("abi_minor").get<uint32_t>();
          r.table_size = j.at("table_size").get<size_t>();
          r.devices = j.at("devices").get<int32_t>();
          r.declares_numerics = j.at("numerics").get<bool>();
          r.f16_accumulation = static_cast<ampx_accumulation>(j.at("f16_accumulation").get<int>());
          list = steps(r.devices);
          r.cases.resize(list.size());
          r.case_failures.resize(list.size());
          r.answers.assign(list.size(), {AMPX_SUPPORT_UNSUPPORTED, ""});
        }
        continue;
      }
      const auto step = j.at("step").get<size_t>();
      if (t == "begin") {
        current = step;
        begun = j.at("what").get<std::string>();
        ended = false;
      } else if (t == "abi") {
        r.abi.push_back({j.at("what").get<std::string>(), j.at("ok").get<bool>(),
                         j.at("detail").get<std::string>(), j.at("since").get<uint32_t>()});
      } else if (t == "answer") {
        r.answers[step] = {static_cast<ampx_support>(j.at("support").get<int>()),
                           j.at("note").get<std::string>()};
      } else if (t == "case") {
        r.cases[step] = case_from_json(j);
      } else if (t == "end") {
        next = step + 1;
        ended = true;
      } else if (t == "leaks") {
        r.abi.push_back({"no memory kept after plugin_destroy and unloading", false,
                         "LeakSanitizer's report above"});
      }
    }
    if (!info) {
      r.abi.push_back({"loading the plugin in a child process", false,
                       out.returned() ? "no report" : out.describe()});
      return r;
    }
    if (out.returned()) {
      next = list.size();  // everything ran (a child that returns ran every step)
      break;
    }
    std::string how = out.describe();
    if (out.kind == ForkOutcome::Kind::kExited)
      how = "exited (status " + std::to_string(out.exit_status) +
            ": a sanitizer's report or the plugin's exit())";
    if (next >= list.size() && ended) {
      // Every step reported: it died unloading the plugin.
      r.abi.push_back({"plugin_destroy and unloading the library", false, how});
      break;
    }
    // It died in step `current`, making `begun`.
    const std::string where =
        begun.empty() || begun == list[current].what ? std::string() : " in " + begun;
    if (list[current].is_case)
      r.case_failures[current] = how + where;
    else
      r.abi.push_back({begun.empty() ? list[current].what : begun, false, how});
    next = current + 1;
    if (out.kind == ForkOutcome::Kind::kTimedOut && ++hangs >= kMaxHangs) {
      const std::string why = "not run: the plugin hung " + std::to_string(hangs) +
                              " times (the last in " + list[current].what + ")";
      for (size_t i = next; i < list.size(); ++i) {
        if (list[i].is_case)
          r.case_failures[i] = why;
        else
          r.abi.push_back({list[i].what, false, why});
      }
      break;
    }
  }
  return r;
}

}  // namespace ampx::check
