// Capability answers from a stored profile instead of a live device, so a
// GPU's coverage can be planned and reported on a machine without it
// (`--profile FILE.json`). A profile holds answers for a few probed shapes
// per op and dtype; a node gets the answer of the probed instance of its op
// and compute dtype nearest in work, and its cost from the profile's cost
// model. Ops or dtypes the profile never probed are `unsupported`, with a
// note saying so: the profile cannot vouch for them.
#pragma once

#include <ampx/capability/capability_source.hpp>
#include <ampx/capability/cost_model.hpp>
#include <ampx/capability/profile.hpp>

#include <memory>

namespace ampx::capability {

class ProfileCapabilities final : public CapabilitySource {
 public:
  explicit ProfileCapabilities(DeviceProfile profile);
  std::string device_id() const override;
  Answer query(const ampx_node_desc& node) override;
  const DeviceProfile& profile() const { return profile_; }

 private:
  DeviceProfile profile_;
  std::unique_ptr<CostModel> cost_;
};

}  // namespace ampx::capability
