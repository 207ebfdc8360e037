// libFuzzer target: the capability database's open path, with its checks
// and recovery (a corrupt, foreign or other-version file is moved aside and
// a fresh one made), then a read of everything stored and a write; and the
// read-only open of the commands that only read (plan, run, db list).
#include <ampx/capability/store.hpp>

#include <optional>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  ampx::fuzz::quiet_logs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path path = ampx::fuzz::write_input(data, size, "capabilities.db");
  ampx::fuzz::expect_clean_rejection([&] {
    if (auto store = ampx::capability::Store::open_read_only(path)) {
      for (const auto& summary : store->list()) (void)store->get(summary.fingerprint);
      (void)store->all();
    }
  });
  // The directory is writable: open() must always end with a usable
  // database, the given one or a fresh one after moving it aside.
  std::optional<ampx::capability::Store> store;
  try {
    store.emplace(ampx::capability::Store::open(path));
  } catch (const std::exception& e) {
    ampx::fuzz::finding("Store::open threw on a writable path", e.what());
  }
  ampx::fuzz::expect_clean_rejection([&] {
    for (const auto& summary : store->list()) (void)store->node_timings(summary.fingerprint);
    const auto profiles = store->all();
    if (!profiles.empty()) store->put(profiles.front());
  });
  if (store->quick_check() != "ok") ampx::fuzz::finding("store", "open() left a damaged database");
  return 0;
}
