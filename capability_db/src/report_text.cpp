// Text and Markdown forms of the report: the same tables, aligned columns
// for a terminal or pipe tables for Markdown.
#include <ampx/capability/report.hpp>

#include "report_tables.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace ampx::capability {

namespace {

using namespace report_detail;

// Display width in code points (the tables hold a few multi-byte dashes).
size_t width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string aligned(const Table& t, const std::string& indent) {
  std::vector<size_t> w(t[0].size(), 0);
  for (const auto& row : t)
    for (size_t i = 0; i < row.size(); ++i) w[i] = std::max(w[i], width(row[i]));
  std::string out;
  for (const auto& row : t) {
    std::string line = indent;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(w[i] - width(row[i]) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string pipes(const Table& t) {
  std::string out;
  for (size_t r = 0; r < t.size(); ++r) {
    out += "|";
    for (const auto& c : t[r]) out += " " + c + " |";
    out += "\n";
    if (r == 0) {
      out += "|";
      for (size_t i = 0; i < t[0].size(); ++i) out += "---|";
      out += "\n";
    }
  }
  return out;
}

}  // namespace

std::string render_text(const Report& r) {
  std::string out = fmt::format("ampx coverage report — {} — {}\n", r.host, r.generated_at);
  for (const auto& m : r.models) {
    out += fmt::format("\n== {} ({} nodes) ==\n", m.model, m.nodes);
    for (const auto& d : m.devices) {
      out += fmt::format("\n{} — {} [{}]\n  costs: {}\n", d.device_id, d.device_name, d.source,
                         d.cost_source);
      out += aligned(level_table(d, r.ran), "  ");
    }
    for (const auto& p : m.placements) {
      out += fmt::format("\nplacement across {} (planned, not run)\n", p.spec);
      out += aligned(placement_table(p), "  ");
    }
    out += "\n  16-bit coverage by op (nodes of the model: native / emulated / unsupported)\n";
    out += aligned(coverage_table(m), "  ");
  }
  return out;
}

std::string render_markdown(const Report& r) {
  std::string out = fmt::format("# ampx coverage report\n\n{}, {}\n", r.host, r.generated_at);
  for (const auto& m : r.models) {
    out += fmt::format("\n## {} ({} nodes)\n", m.model, m.nodes);
    for (const auto& d : m.devices) {
      out += fmt::format("\n### {} — {}\n\nSource: {}. Costs: {}.\n\n", d.device_id, d.device_name,
                         d.source, d.cost_source);
      out += pipes(level_table(d, r.ran));
    }
    for (const auto& p : m.placements) {
      out += fmt::format(
          "\n### Placement across {}\n\nPlanned, not run: model nodes per "
          "device, fallbacks and copies per run.\n\n",
          p.spec);
      out += pipes(placement_table(p));
    }
    out += "\n### 16-bit coverage by op\n\nNodes of the model per answer.\n\n";
    out += pipes(coverage_table(m));
  }
  return out;
}

}  // namespace ampx::capability
