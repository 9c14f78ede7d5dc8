// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "capi/diagnostic_handlers.h"

#include <iterator>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "capi/errors.h"

namespace ipclock {
namespace capi {
namespace {

// A struct ipclock_diagnostic over a Diagnostic, with the one string that
// needs a NUL-terminated copy (a Status message is a string_view).
class CDiagnostic {
 public:
  explicit CDiagnostic(const Diagnostic& d) : message_(d.status.message()) {
    // The C enums, by the C++ enums' values.
    static constexpr int kKinds[] = {IPCLOCK_DIAG_NOTICE,   IPCLOCK_DIAG_LEASE_OVERRUN,
                                     IPCLOCK_DIAG_LOCK_LOST, IPCLOCK_DIAG_WAITING,
                                     IPCLOCK_DIAG_ACQUIRED,  IPCLOCK_DIAG_OWNER_DIED};
    static_assert(std::size(kKinds) == static_cast<size_t>(DiagnosticKind::kOwnerDied) + 1);
    static constexpr int kSeverities[] = {IPCLOCK_DIAG_INFO, IPCLOCK_DIAG_WARNING,
                                          IPCLOCK_DIAG_ERROR};
    static_assert(std::size(kSeverities) ==
                  static_cast<size_t>(DiagnosticSeverity::kError) + 1);
    c_.kind = kKinds[static_cast<size_t>(d.kind)];
    c_.severity = kSeverities[static_cast<size_t>(d.severity)];
    if (d.kind == DiagnosticKind::kLeaseOverrun) {
      c_.ttl_ms = absl::ToInt64Milliseconds(d.ttl);
      c_.overrun_ms = absl::ToInt64Milliseconds(d.overrun);
    }
    c_.text = d.text.c_str();
    c_.store = d.store.c_str();
    c_.resource = d.resource.c_str();
    c_.resource_len = d.resource.size();
    c_.code = CodeFor(d.status.code());
    c_.message = message_.c_str();
  }
  CDiagnostic(const CDiagnostic&) = delete;
  CDiagnostic& operator=(const CDiagnostic&) = delete;

  const ipclock_diagnostic* get() const { return &c_; }

 private:
  std::string message_;
  ipclock_diagnostic c_ = {};
};

}  // namespace

DiagnosticSink SinkFor(ipclock_diagnostic_fn fn, void* arg) {
  if (fn == nullptr) return DiagnosticSink();
  return [fn, arg](const Diagnostic& d) {
    CDiagnostic c(d);
    fn(c.get(), arg);
  };
}

void CallLostHandler(ipclock_lost_fn fn, void* arg, ipclock_lock* lock,
                     const Diagnostic& diagnostic) {
  CDiagnostic c(diagnostic);
  fn(lock, c.get(), arg);
}

}  // namespace capi
}  // namespace ipclock

extern "C" void ipclock_set_diagnostic_handler(ipclock_diagnostic_fn fn, void* arg) {
  // NULL goes back to stderr rather than to silence, as the C++ default
  // starts: a C program that clears its handler should not lose warnings.
  ipclock::DiagnosticSink sink = ipclock::capi::SinkFor(fn, arg);
  if (!sink) sink = ipclock::WriteDiagnosticToStderr;
  ipclock::SetDefaultDiagnosticSink(std::move(sink));
}
