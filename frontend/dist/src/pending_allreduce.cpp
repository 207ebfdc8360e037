#include <ampx/dist/pending_allreduce.hpp>

#include "impl.hpp"
#include "mpi_call.hpp"

#include <utility>

namespace ampx::dist {

PendingAllreduce::PendingAllreduce() = default;

PendingAllreduce::PendingAllreduce(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

PendingAllreduce::~PendingAllreduce() {
  // Never leak a request, and never let MPI write the buffer after its
  // owner is gone. An error here cannot be thrown (this may run while
  // another exception unwinds); wait() is where a caller sees it.
  if (impl_) {
    MPI_Waitall(static_cast<int>(impl_->requests.size()), impl_->requests.data(),
                MPI_STATUSES_IGNORE);
  }
}

PendingAllreduce::PendingAllreduce(PendingAllreduce&& other) noexcept = default;

PendingAllreduce& PendingAllreduce::operator=(PendingAllreduce&& other) noexcept {
  if (this != &other) {
    PendingAllreduce old(std::move(*this));  // waits when it goes out of scope
    impl_ = std::move(other.impl_);
  }
  return *this;
}

bool PendingAllreduce::test() {
  if (!impl_) return true;
  int done = 0;
  const int code = MPI_Testall(static_cast<int>(impl_->requests.size()), impl_->requests.data(),
                               &done, MPI_STATUSES_IGNORE);
  if (code != MPI_SUCCESS) {
    // After an error MPI says nothing of the requests' state: they are
    // dropped, as wait() drops them.
    const int rank = impl_->rank;
    const int size = impl_->size;
    impl_.reset();
    detail::throw_mpi_error(code, "MPI_Testall", rank, size);
  }
  if (done) impl_.reset();
  return done != 0;
}

void PendingAllreduce::wait() {
  if (!impl_) return;
  std::unique_ptr<Impl> impl = std::move(impl_);  // released whatever happens
  const int code = MPI_Waitall(static_cast<int>(impl->requests.size()), impl->requests.data(),
                               MPI_STATUSES_IGNORE);
  detail::check_mpi(code, "MPI_Waitall", impl->rank, impl->size);
}

bool PendingAllreduce::pending() const {
  return impl_ != nullptr;
}

}  // namespace ampx::dist
