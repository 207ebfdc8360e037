// Reading structs a plugin has filled in, honouring their struct_size.
//
// The host zero-initialises an out-struct and sets struct_size to its own
// sizeof before the call; the plugin writes its own sizeof back (smaller when
// it is older). Afterwards the host reads only the members that lie entirely
// within min(reported, sizeof): everything else is cleared, so a member the
// plugin never wrote reads as zero rather than as a half-written value.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

namespace ampx::plugins::detail {

template <class T>
size_t readable_size(const T& s) noexcept {
  return std::min<size_t>(s.struct_size, sizeof(T));
}

template <class T, class M>
size_t member_end(const T& s, M T::*member) noexcept {
  const auto* base = reinterpret_cast<const unsigned char*>(&s);
  const auto* field = reinterpret_cast<const unsigned char*>(&(s.*member));
  return static_cast<size_t>(field - base) + sizeof(M);
}

// True when `member` lies entirely within the first `size` bytes of `s`.
template <class T, class M>
bool has_member(const T& s, size_t size, M T::*member) noexcept {
  return member_end(s, member) <= size;
}

// Zeroes each listed member that does not lie entirely within `size` bytes.
template <class T, class... M>
void clear_missing(T& s, size_t size, M T::*... members) noexcept {
  (
      [&] {
        if (!has_member(s, size, members)) std::memset(&(s.*members), 0, sizeof(s.*members));
      }(),
      ...);
}

// A fixed char array as a string, stopping at the first NUL or at the end.
template <size_t N>
std::string fixed_string(const char (&text)[N]) {
  return std::string(text, strnlen(text, N));
}

template <size_t N>
void terminate(char (&text)[N]) noexcept {
  text[N - 1] = '\0';
}

}  // namespace ampx::plugins::detail
