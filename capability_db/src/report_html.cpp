// The HTML report: one file that opens in a browser without network. Tables
// are rendered here; the two charts per model are drawn from the embedded
// JSON by an inline script as SVG, which sets data-charts-drawn on <body>
// when done (the test suite renders the file in headless Chromium and reads
// that back).
#include <ampx/capability/report.hpp>

#include "report_tables.hpp"

namespace ampx::capability {

namespace {

using namespace report_detail;

std::string html_table(const Table& t) {
  std::string out = "<table><thead><tr>";
  for (const auto& h : t[0]) out += "<th>" + html_escape(h) + "</th>";
  out += "</tr></thead><tbody>";
  for (size_t r = 1; r < t.size(); ++r) {
    out += "<tr>";
    for (const auto& c : t[r]) out += "<td>" + html_escape(c) + "</td>";
    out += "</tr>";
  }
  return out + "</tbody></table>\n";
}

// Draws, per model: 16-bit nodes (intended and effective) per level per
// device, and predicted vs measured time per level per device.
constexpr const char* kScript = R"(
(function(){
const data = JSON.parse(document.getElementById('report-data').textContent);
const NS = 'http://www.w3.org/2000/svg';
function el(name, attrs, parent){const e=document.createElementNS(NS,name);
  for(const k in attrs) e.setAttribute(k, attrs[k]); if(parent) parent.appendChild(e); return e;}
function chart(host, title, groups, series, colors, unit){
  // groups: [{label, values:[v per series]}]
  const W=Math.max(320, 40+groups.length*(series.length*14+16)), H=220, top=24, bottom=60, left=44;
  const svg=el('svg',{width:W,height:H,class:'chart','data-title':title},host);
  el('text',{x:left,y:14},svg).textContent=title;
  let max=0; for(const g of groups) for(const v of g.values) if(v!=null&&v>max) max=v;
  if(max<=0) max=1;
  const ph=H-top-bottom; let x=left+8; let bars=0;
  el('line',{x1:left,y1:top+ph,x2:W-4,y2:top+ph,stroke:'#888'},svg);
  el('text',{x:4,y:top+8},svg).textContent=(+max.toPrecision(3))+unit;
  for(const g of groups){
    g.values.forEach((v,i)=>{
      if(v!=null){const h=ph*v/max;
        const r=el('rect',{x:x,y:top+ph-h,width:12,height:Math.max(h,0.5),fill:colors[i],class:'bar'},svg);
        el('title',{},r).textContent=g.label+' '+series[i]+': '+(+v.toPrecision(4))+unit; bars++;}
      x+=14;});
    const t=el('text',{x:x-series.length*7-8,y:top+ph+12,transform:'rotate(45 '+(x-series.length*7-8)+' '+(top+ph+12)+')'},svg);
    t.textContent=g.label; x+=16;}
  const leg=document.createElement('div'); leg.className='legend';
  series.forEach((s,i)=>{const sw=document.createElement('span'); sw.style.background=colors[i];
    leg.appendChild(sw); leg.appendChild(document.createTextNode(s));});
  host.appendChild(leg);
  return bars;
}
let drawn=0, bars=0;
data.models.forEach((m, mi)=>{
  const host=document.getElementById('charts-'+mi); if(!host) return;
  const cov=[], time=[];
  for(const d of m.devices) for(const l of d.levels){
    const label=d.device+' '+l.level;
    cov.push({label, values:[l.intended_16bit, l.effective_16bit]});
    time.push({label, values:[l.predicted_ms, l.measured_ms]});}
  const a=document.createElement('div'), b=document.createElement('div');
  host.appendChild(a); host.appendChild(b);
  bars+=chart(a,'16-bit nodes per level and device',cov,['intended','effective'],['#9ecae1','#3182bd'],'');
  bars+=chart(b,'time per run: predicted vs measured',time,['predicted','measured'],['#fdae6b','#e6550d'],' ms');
  drawn+=2;});
document.body.dataset.chartsDrawn=String(drawn);
document.body.dataset.barsDrawn=String(bars);
})();
)";

}  // namespace

const char* html_report_style() {
  return R"(
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
td:first-child,th:first-child{text-align:left}
th{background:#f3f3f3}
.charts{display:flex;flex-wrap:wrap;gap:2em}
svg.chart text{font-size:11px}
.legend span{display:inline-block;width:10px;height:10px;margin:0 4px 0 12px}
)";
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string render_html(const Report& r) {
  std::string data = report_to_json(r).dump();
  // Inside <script>, "</" would end the element early.
  for (size_t i = 0; (i = data.find("</", i)) != std::string::npos; i += 3)
    data.replace(i, 2, "<\\/");
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  out += "<title>ampx coverage report</title>\n<style>";
  out += html_report_style();
  out += "</style></head><body>\n";
  out += "<h1>ampx coverage report</h1>\n<p>" + html_escape(r.host) + ", " +
         html_escape(r.generated_at) + (r.ran ? "" : " (not run: predictions only)") + "</p>\n";
  for (size_t i = 0; i < r.models.size(); ++i) {
    const ModelReport& m = r.models[i];
    out += "<h2>" + html_escape(m.model) + " (" + std::to_string(m.nodes) + " nodes)</h2>\n";
    out += "<div class=\"charts\" id=\"charts-" + std::to_string(i) + "\"></div>\n";
    for (const DeviceSection& d : m.devices) {
      out += "<h3>" + html_escape(d.device_id) + " — " + html_escape(d.device_name) +
             "</h3>\n<p>Source: " + html_escape(d.source) +
             ". Costs: " + html_escape(d.cost_source) + ".</p>\n";
      out += html_table(level_table(d, r.ran));
    }
    for (const auto& p : m.placements) {
      out += "<h3>Placement across " + html_escape(p.spec) + "</h3>\n<p>Planned, not run.</p>\n";
      out += html_table(placement_table(p));
    }
    out += "<h3>16-bit coverage by op</h3>\n";
    out += html_table(coverage_table(m));
  }
  out += "<script type=\"application/json\" id=\"report-data\">" + data + "</script>\n";
  out += "<script>";
  out += kScript;
  out += "</script>\n</body></html>\n";
  return out;
}

}  // namespace ampx::capability
