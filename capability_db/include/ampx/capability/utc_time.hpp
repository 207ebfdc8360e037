// The one clock reading ampx writes down: UTC to the second in ISO 8601
// ("2026-11-29T10:15:00Z"), for probes, tuned plans, calibrations and
// reports; the store's set-aside file names use it without '-' and ':'.
#pragma once

#include <string>

namespace ampx::capability {

std::string utc_now_iso8601();

}  // namespace ampx::capability
