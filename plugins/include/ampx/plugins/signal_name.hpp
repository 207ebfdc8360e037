// The name of a signal that ended a child process, for one-line reasons
// ("crashed (SIGSEGV) in ..."): the plugin pre-flight and the probe.
#pragma once

#include <string>

namespace ampx::plugins {

// "SIGSEGV", "SIGABRT", ...; "signal <n>" for one without a name here.
std::string signal_name(int sig);

}  // namespace ampx::plugins
