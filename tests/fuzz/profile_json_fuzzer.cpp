// libFuzzer target: the profile-JSON reader behind `ampx db import FILE`
// and `--profile FILE.json`, and the profile-derived capability view the
// planner reads from it.
#include <ampx/capability/profile_json.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ampx::fuzz::quiet_logs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path path = ampx::fuzz::write_input(data, size, "profile.json");
  ampx::fuzz::expect_clean_rejection([&] {
    const auto profiles = ampx::capability::load_profile_file(path);
    // What was accepted must write back and read again as the same profiles.
    const std::filesystem::path again = path.parent_path() / "again.json";
    ampx::capability::save_profile_file(again, profiles);
    const auto reread = ampx::capability::load_profile_file(again);
    if (ampx::capability::profile_document(reread) != ampx::capability::profile_document(profiles))
      ampx::fuzz::finding("profile", "a profile does not survive a write and a read");
  });
  return 0;
}
