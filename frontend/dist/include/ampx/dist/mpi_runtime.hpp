// MpiRuntime: the process-wide MPI initialisation, held as a shared handle.
//
// The first MpiRuntime of a process initialises MPI (MPI_Init_thread asking
// for MPI_THREAD_FUNNELED: the executor's kernels may run on worker threads,
// OpenMP's or a plugin's, but only the thread that runs the training step
// calls MPI). Every further MpiRuntime, and every copy, shares that state;
// the last one destroyed calls MPI_Finalize, and only if this library
// initialised MPI. A host that initialised MPI itself (an embedding
// application, mpi4py in the Python process) keeps it: the handles then
// neither initialise nor finalize. Communicators and pending reductions hold
// a copy, so MPI outlives them.
//
// MPI cannot be initialised twice in one process: an MpiRuntime made after
// MPI was finalized throws DistError.
#pragma once

namespace ampx::dist {

class MpiRuntime {
 public:
  // Initialises MPI, or shares the state of the live handles. Throws
  // DistError when MPI was finalized or its initialisation fails.
  MpiRuntime();
  ~MpiRuntime();
  // Copies (and moves, which copy) share the one state; thread-safe.
  MpiRuntime(const MpiRuntime&);
  MpiRuntime& operator=(const MpiRuntime&);

  // True when this library called MPI_Init_thread (and will finalize).
  bool initialised_here() const;
  // The thread support MPI gave, as MPI orders its levels: 0 single,
  // 1 funneled, 2 serialized, 3 multiple. A host that initialised MPI with
  // plain MPI_Init may have given single.
  int thread_level() const;
  // Whether this is the thread that initialised MPI (MPI_Is_thread_main):
  // under funneled, the only one that may call the communicator.
  bool on_main_thread() const;
};

}  // namespace ampx::dist
