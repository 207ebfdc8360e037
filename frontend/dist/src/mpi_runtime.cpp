#include <ampx/dist/dist_error.hpp>
#include <ampx/dist/mpi_runtime.hpp>

#include "mpi_call.hpp"
#include "mpi_runtime_state.hpp"

#include <cstdlib>
#include <mutex>

namespace ampx::dist {
namespace {

// The process's one MPI state. The count of live handles and the finalize
// at zero change under one mutex, so a handle made while the last one is
// being destroyed cannot see MPI initialised and then lose it.
struct Registry {
  std::mutex mutex;
  int handles = 0;
  bool initialised_here = false;
  int thread_level = MPI_THREAD_SINGLE;
  bool broken = false;  // mark_mpi_broken(): no MPI_Finalize
};

Registry& registry() {
  static Registry r;  // never destroyed before the handles of main()
  return r;
}

// MPI's constants need not be 0..3 (the standard only orders them).
int level_index(int level) {
  if (level >= MPI_THREAD_MULTIPLE) return 3;
  if (level >= MPI_THREAD_SERIALIZED) return 2;
  if (level >= MPI_THREAD_FUNNELED) return 1;
  return 0;
}

}  // namespace

MpiRuntime::MpiRuntime() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (r.handles == 0) {
    int finalized = 0;
    detail::check_mpi(MPI_Finalized(&finalized), "MPI_Finalized", -1, 0);
    if (finalized) {
      throw DistError(
          "MPI_Init_thread failed: MPI was finalized in this process and cannot be "
          "initialised again");
    }
    int initialized = 0;
    detail::check_mpi(MPI_Initialized(&initialized), "MPI_Initialized", -1, 0);
    if (initialized) {  // the host's: neither ours to set up nor to finalize
      detail::check_mpi(MPI_Query_thread(&r.thread_level), "MPI_Query_thread", -1, 0);
      r.initialised_here = false;
    } else {
      // Open MPI's non-blocking reduce to one rank (ZeRO-1's reduce of a
      // bucket to its owner) takes the segmented "chain" algorithm for
      // large buffers: one segment per progress call, and a rank advances
      // only inside MPI calls, so a 16 MB bucket took 0.3 s per step where
      // the binomial tree takes 20 ms (bench/data_parallel.py zero, MLP, 2
      // ranks). The binomial tree unless the user chose (setenv does not
      // overwrite); other MPI libraries ignore the variable.
      ::setenv("OMPI_MCA_coll_libnbc_ireduce_algorithm", "2", 0);
      detail::check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &r.thread_level),
                        "MPI_Init_thread", -1, 0);
      r.initialised_here = true;
    }
  }
  ++r.handles;
}

MpiRuntime::MpiRuntime(const MpiRuntime&) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  ++r.handles;
}

MpiRuntime& MpiRuntime::operator=(const MpiRuntime&) {
  return *this;  // both handles already count: nothing changes
}

MpiRuntime::~MpiRuntime() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (--r.handles > 0 || !r.initialised_here) return;
  if (r.broken) return;  // MPI_Finalize would wait for a lost rank
  r.initialised_here = false;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();  // its errors cannot be reported from here
}

namespace detail {

void mark_mpi_broken() {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.broken = true;
}

}  // namespace detail

bool MpiRuntime::initialised_here() const {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.initialised_here;
}

int MpiRuntime::thread_level() const {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return level_index(r.thread_level);
}

bool MpiRuntime::on_main_thread() const {
  int flag = 0;
  detail::check_mpi(MPI_Is_thread_main(&flag), "MPI_Is_thread_main", -1, 0);
  return flag != 0;
}

}  // namespace ampx::dist
