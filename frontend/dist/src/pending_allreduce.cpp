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
  // another exception unwinds); wait() is where a caller sees it. The wait
  // is bounded as wait()'s: after a lost rank or a timeout the request is
  // abandoned (MPI cannot free it) and nothing more comes to the buffer
  // from the lost rank.
  if (impl_) detail::wait_all_quietly(impl_->requests, *impl_->live);
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
  if (impl_->live->failure) {
    std::unique_ptr<Impl> impl = std::move(impl_);  // abandoned: see the destructor
    impl->live->check_usable();
  }
  int done = 0;
  const int code = MPI_Testall(static_cast<int>(impl_->requests.size()), impl_->requests.data(),
                               &done, MPI_STATUSES_IGNORE);
  if (code != MPI_SUCCESS) {
    // After an error MPI says nothing of the requests' state: they are
    // dropped, as wait() drops them.
    const int rank = impl_->live->rank;
    const int size = impl_->live->size;
    impl_.reset();
    detail::throw_mpi_error(code, "MPI_Testall", rank, size);
  }
  if (done) impl_.reset();
  return done != 0;
}

void PendingAllreduce::wait() {
  if (!impl_) return;
  std::unique_ptr<Impl> impl = std::move(impl_);  // released whatever happens
  detail::wait_all(impl->requests, *impl->live, impl->call);
}

bool PendingAllreduce::pending() const {
  return impl_ != nullptr;
}

}  // namespace ampx::dist
