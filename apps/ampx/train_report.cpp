#include "train_report.hpp"

#include "cli_common.hpp"

#include <ampx/capability/report.hpp>
#include <ampx/fileio/atomic_write.hpp>
#include <ampx/fileio/regular_file.hpp>

#include <algorithm>
#include <cmath>

namespace ampx::cli {

namespace {

constexpr const char* kSchema = "ampx.train-report/1";
constexpr const char* kDataOpen = "<script type=\"application/json\" id=\"train-data\">";

// Line charts from the embedded JSON, as SVG; sets data-charts-drawn,
// data-series-drawn (loss lines) and data-skips-drawn (skipped-step marks)
// on <body> when done, which the tests read back from headless Chromium.
constexpr const char* kScript = R"(
(function(){
const NS='http://www.w3.org/2000/svg';
const data=JSON.parse(document.getElementById('train-data').textContent);
const colors=['#1f77b4','#ff7f0e','#2ca02c','#d62728','#9467bd','#8c564b','#e377c2','#7f7f7f'];
function el(n,a,p){const e=document.createElementNS(NS,n);for(const k in a)e.setAttribute(k,a[k]);if(p)p.appendChild(e);return e;}
let charts=0,series=0,skips=0;
function chart(title,lines,opt){
  const W=760,H=300,L=60,T=24,B=30,pw=W-L-10,ph=H-T-B;
  const host=document.getElementById('charts');
  const svg=el('svg',{width:W,height:H,class:'chart','data-title':title},host);
  el('text',{x:L,y:14},svg).textContent=title;
  let xs=[],ys=[];
  lines.forEach(l=>l.points.forEach(p=>{if(p[1]!==null&&isFinite(p[1])&&(!opt.log||p[1]>0)){xs.push(p[0]);ys.push(p[1]);}}));
  if(!xs.length){charts++;return;}
  const f=v=>opt.log?Math.log10(v):v;
  const x0=Math.min(...xs),x1=Math.max(...xs,x0+1),y0=Math.min(...ys.map(f)),y1=Math.max(...ys.map(f),y0+1e-9);
  const X=x=>L+(x-x0)/(x1-x0)*pw,Y=y=>T+ph-(f(y)-y0)/(y1-y0)*ph;
  el('line',{x1:L,y1:T+ph,x2:L+pw,y2:T+ph,stroke:'#888'},svg);
  el('line',{x1:L,y1:T,x2:L,y2:T+ph,stroke:'#888'},svg);
  const lab=v=>opt.log?(+Math.pow(10,v).toPrecision(3)).toString():(+v.toPrecision(3)).toString();
  el('text',{x:4,y:T+8},svg).textContent=lab(y1);
  el('text',{x:4,y:T+ph},svg).textContent=lab(y0);
  el('text',{x:L,y:H-8},svg).textContent=opt.xlabel+' '+x0;
  el('text',{x:L+pw-60,y:H-8},svg).textContent=String(x1);
  lines.forEach((l,i)=>{
    let d='',pen=false;
    l.points.forEach(p=>{const ok=p[1]!==null&&isFinite(p[1])&&(!opt.log||p[1]>0);
      if(ok){d+=(pen?'L':'M')+X(p[0]).toFixed(1)+' '+Y(p[1]).toFixed(1);pen=true;}else pen=false;});
    const a={d:d,fill:'none',stroke:colors[(opt.pairs?i>>1:i)%colors.length],'stroke-width':1.2,class:'series'};
    if(opt.pairs&&i%2)a['stroke-dasharray']='4 3';
    el('path',a,svg);
    if(opt.count)series++;
    (l.marks||[]).forEach(s=>{el('line',{x1:X(s),y1:T+ph,x2:X(s),y2:T+ph-8,stroke:colors[i%colors.length],'stroke-width':1.5,class:'skip'},svg);skips++;});
  });
  charts++;
}
const runs=data.runs;
const legend=document.getElementById('legend');
runs.forEach((r,i)=>{const s=document.createElement('span');s.style.background=colors[i%colors.length];legend.appendChild(s);legend.appendChild(document.createTextNode(r.label));});
chart('loss per step (log scale; ticks at the bottom: skipped steps)',runs.map(r=>({points:r.loss.map((v,k)=>[r.step[k],v]),marks:r.skipped})),{log:true,xlabel:'step',count:true});
chart('loss scale (log scale)',runs.map(r=>({points:r.scale.map((v,k)=>[r.step[k],v])})),{log:true,xlabel:'step'});
// Data-parallel runs: each step's all-reduces, start to completion, and the
// part the step waited for.
const comm=runs.filter(r=>r.comm_ms);
if(comm.length)chart('all-reduce per step, ms (solid: start to completion; dashed: waited for)',comm.flatMap(r=>[{points:r.comm_ms.map((v,k)=>[r.step[k],v])},{points:r.exposed_comm_ms.map((v,k)=>[r.step[k],v])}]),{log:false,xlabel:'step',pairs:true});
chart('accuracy per epoch',runs.map(r=>({points:r.epochs.filter(e=>e.eval_accuracy!==undefined).map(e=>[e.epoch,e.eval_accuracy])})),{log:false,xlabel:'epoch'});
document.body.dataset.chartsDrawn=String(charts);
document.body.dataset.seriesDrawn=String(series);
document.body.dataset.skipsDrawn=String(skips);
})();
)";

nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

std::string fmt_number(const nlohmann::json& v, const char* format, double scale = 1.0) {
  if (!v.is_number()) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v.get<double>() * scale);
  return buf;
}

// "bn2 90.7 %, bn1 90.6 %" from a run's diagnostics; "-" without them.
std::string underflow_text(const nlohmann::json& run) {
  if (!run.contains("underflow") || !run["underflow"].is_array() || run["underflow"].empty())
    return "-";
  std::string out;
  for (const auto& l : run["underflow"]) {
    if (!l.is_object() || !l.contains("layer") || !l["layer"].is_string()) continue;
    out += (out.empty() ? "" : ", ") + l["layer"].get<std::string>() + " " +
           fmt_number(l.value("underflow_share", nlohmann::json()), "%.1f %%", 100);
  }
  return out.empty() ? "-" : out;
}

std::string render(const nlohmann::json& data) {
  using capability::html_escape;
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  out += "<title>ampx training curves</title>\n<style>";
  out += capability::html_report_style();
  out += "</style></head><body>\n<h1>ampx training curves</h1>\n";
  out +=
      "<table><thead><tr><th>run</th><th>model</th><th>devices</th><th>steps</th>"
      "<th>skipped</th><th>last train loss</th><th>last accuracy</th><th>last scale</th>"
      "<th>moved to f32</th><th>most underflow (gradients below the 16-bit normal "
      "range)</th></tr></thead><tbody>\n";
  for (const auto& r : data["runs"]) {
    const auto& epochs = r["epochs"];
    const nlohmann::json last = epochs.empty() ? nlohmann::json::object() : epochs.back();
    std::string fallbacks;
    for (const auto& f : r["fallbacks"])
      fallbacks += (fallbacks.empty() ? "" : ", ") + f["layer"].get<std::string>() + " (step " +
                   std::to_string(f["step"].get<int64_t>()) + ")";
    out += "<tr><td>" + html_escape(r["label"].get<std::string>()) + "</td><td>" +
           html_escape(r["model"].get<std::string>()) + "</td><td>" +
           html_escape(r["devices"].get<std::string>()) + "</td><td>" +
           std::to_string(r["step"].size()) + "</td><td>" + std::to_string(r["skipped"].size()) +
           "</td><td>" + fmt_number(last.value("train_loss", nlohmann::json()), "%.4f") +
           "</td><td>" + fmt_number(last.value("eval_accuracy", nlohmann::json()), "%.2f %%", 100) +
           "</td><td>" +
           fmt_number(r["scale"].empty() ? nlohmann::json() : r["scale"].back(), "%g") +
           "</td><td>" + html_escape(fallbacks.empty() ? "-" : fallbacks) + "</td><td>" +
           html_escape(underflow_text(r)) + "</td></tr>\n";
  }
  out += "</tbody></table>\n<p class=\"legend\" id=\"legend\"></p>\n<div id=\"charts\"></div>\n";
  std::string json = data.dump();
  // Inside <script>, "</" would end the element early; "<\/" is the same
  // JSON string.
  for (size_t i = 0; (i = json.find("</", i)) != std::string::npos; i += 3)
    json.replace(i, 2, "<\\/");
  out += kDataOpen + json + "</script>\n<script>" + kScript + "</script>\n</body></html>\n";
  return out;
}

// The runs already in `path`; an empty list when it does not exist.
nlohmann::json read_existing(const std::filesystem::path& path) {
  nlohmann::json data{{"schema", kSchema}, {"runs", nlohmann::json::array()}};
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return data;
  const std::string page = fileio::read_regular_file(path);
  const auto refuse = [&] {
    return std::runtime_error(path.string() +
                              ": not an ampx training report (refusing to overwrite it)");
  };
  const size_t open = page.find(kDataOpen);
  if (open == std::string::npos) throw refuse();
  const size_t begin = open + std::string_view(kDataOpen).size();
  const size_t end = page.find("</script>", begin);
  if (end == std::string::npos) throw refuse();
  try {
    nlohmann::json j = nlohmann::json::parse(page.substr(begin, end - begin));
    if (!j.is_object() || j.value("schema", "") != kSchema || !j.contains("runs") ||
        !j["runs"].is_array())
      throw refuse();
    for (const auto& r : j["runs"])
      if (!r.is_object() || !r.contains("label") || !r["label"].is_string()) throw refuse();
    return j;
  } catch (const nlohmann::json::exception&) {
    throw refuse();
  }
}

}  // namespace

TrainCurves::TrainCurves(std::string label, std::string model, std::string devices) {
  run_ = {{"label", std::move(label)},           {"model", std::move(model)},
          {"devices", std::move(devices)},       {"step", nlohmann::json::array()},
          {"loss", nlohmann::json::array()},     {"scale", nlohmann::json::array()},
          {"skipped", nlohmann::json::array()},  {"epochs", nlohmann::json::array()},
          {"fallbacks", nlohmann::json::array()}};
}

void TrainCurves::add_epoch(const train::EpochResult& r,
                            const std::optional<train::Evaluation>& ev) {
  for (const train::StepRecord& s : r.records) {
    run_["step"].push_back(s.step);
    run_["loss"].push_back(number_or_null(s.loss));
    run_["scale"].push_back(s.scale);
    if (!s.finite) run_["skipped"].push_back(s.step);
    if (r.data_parallel) {
      run_["comm_ms"].push_back(number_or_null(s.comm_ms));
      run_["exposed_comm_ms"].push_back(number_or_null(s.exposed_comm_ms));
    }
  }
  nlohmann::json e{{"epoch", r.epoch}, {"train_loss", number_or_null(r.loss)}};
  if (ev) {
    e["eval_loss"] = number_or_null(ev->loss);
    e["eval_accuracy"] = ev->accuracy;
  }
  run_["epochs"].push_back(e);
  for (const train::FallbackRecord& f : r.fallbacks)
    run_["fallbacks"].push_back({{"layer", f.layer}, {"step", f.step}, {"cause", f.cause}});
}

void TrainCurves::set_diagnostics(const train::OverflowDiagnostics& d) {
  auto layers = d.summary();
  std::stable_sort(layers.begin(), layers.end(), [](const auto& a, const auto& b) {
    return a.underflow_share > b.underflow_share;
  });
  nlohmann::json worst = nlohmann::json::array();
  for (size_t i = 0; i < layers.size() && i < 3; ++i)
    worst.push_back({{"layer", layers[i].layer}, {"underflow_share", layers[i].underflow_share}});
  run_["underflow"] = std::move(worst);
}

nlohmann::json TrainCurves::to_json() const {
  return run_;
}

void write_train_report(const std::filesystem::path& path, const nlohmann::json& run) {
  nlohmann::json data = read_existing(path);
  nlohmann::json runs = nlohmann::json::array();
  nlohmann::json merged = run;
  for (const auto& r : data["runs"]) {
    if (r["label"] != run["label"]) {
      runs.push_back(r);
      continue;
    }
    // The same run resumed: its earlier steps and epochs stay.
    const int64_t first = run["step"].empty() ? INT64_MAX : run["step"][0].get<int64_t>();
    const int64_t first_epoch =
        run["epochs"].empty() ? INT64_MAX : run["epochs"][0]["epoch"].get<int64_t>();
    nlohmann::json m = run;
    for (const char* k : {"step", "loss", "scale", "skipped", "epochs"})
      m[k] = nlohmann::json::array();
    // A data-parallel run's per-step communication, step by step as well.
    std::vector<const char*> per_step{"loss", "scale"};
    for (const char* k : {"comm_ms", "exposed_comm_ms"})
      if (run.contains(k)) per_step.push_back(k), m[k] = nlohmann::json::array();
    try {
      for (size_t i = 0; i < r["step"].size(); ++i)
        if (r["step"][i].get<int64_t>() < first) {
          m["step"].push_back(r["step"][i]);
          for (const char* k : per_step)
            m[k].push_back(r.contains(k) ? r[k][i] : nlohmann::json(nullptr));
        }
      for (const auto& s : r["skipped"])
        if (s.get<int64_t>() < first) m["skipped"].push_back(s);
      for (const auto& e : r["epochs"])
        if (e["epoch"].get<int64_t>() < first_epoch) m["epochs"].push_back(e);
    } catch (const nlohmann::json::exception&) {
      throw std::runtime_error(path.string() + ": the run '" + run["label"].get<std::string>() +
                               "' in it is malformed");
    }
    for (const char* k : {"step", "skipped", "epochs"})
      for (const auto& v : run[k]) m[k].push_back(v);
    for (const char* k : per_step)
      for (const auto& v : run[k]) m[k].push_back(v);

    merged = std::move(m);
  }
  runs.push_back(merged);
  data["runs"] = std::move(runs);
  fileio::write_file_atomically(path, render(data));
}

void check_report_path(const std::string& path) {
  const std::filesystem::path p(path);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : ".";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw UsageError("--report: directory '" + dir.string() + "' does not exist");
  if (std::filesystem::is_directory(p, ec))
    throw UsageError("--report: '" + path + "' is a directory");
}

}  // namespace ampx::cli
