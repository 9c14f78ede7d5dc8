// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// PosixSemaphoreStore: a registry of holders per resource, which counts the
// permits, plus a named semaphore on which its waiters sleep
// (stores/posix_semaphore_registry.h). See
// include/ipclock/posix_semaphore_store.h for the contract.

#include "stores/posix_semaphore_store.h"

#include <errno.h>
#include <semaphore.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "platform/errors.h"
#include "ipclock/store_interface.h"
#include "core/removeipc_guard.h"
#include "core/hashing.h"
#include "platform/process_id.h"
#include "stores/posix_semaphore_registry.h"
#include "stores/posix_semaphore_inspect.h"

namespace ipclock {

namespace {

constexpr absl::string_view kName = "posix-semaphore";

// How long a waiter sleeps at most before it looks at the registry again:
// the bound on how late a dead holder's permit, or one whose wake-up was
// lost, comes back while someone waits.
constexpr int64_t kReclaimSliceNanos = 200 * 1000 * 1000;

// Registries unlinked under a held permit before we give up.
constexpr int kMaxReattach = 64;

// A Key keeps its registry slot and the open semaphore from its first
// acquisition until it is destroyed, so that acquiring and releasing again
// costs no opening, mapping or /proc reading; the pair therefore lives as
// long as some Lock object for the resource does, held or not.
struct PosixKeyState final : KeyState {
  std::unique_ptr<SemaphoreRegistry> registry;
  bool held = false;
  // The process that took the slot. The slot names that process: after
  // fork() the child must neither use it nor free it.
  pid_t attach_pid = 0;

  // Leaves the registry and removes the pair if we were its last user.
  // Errors go unreported: there is nobody to tell, and what a failed Detach
  // leaves (a taken slot) is reclaimed once this process is gone.
  //
  // A Key destroyed while it holds a permit (a lock kept past its Lock
  // object) keeps its slot, which keeps the permit held until this process
  // dies; the registry's destructor only unmaps.
  ~PosixKeyState() override {
    if (registry != nullptr && !held && attach_pid == CurrentPid()) {
      registry->Detach().IgnoreError();
    }
  }
};

bool ValidPrefix(absl::string_view prefix) {
  if (prefix.empty() || prefix.size() > 64) return false;
  for (char c : prefix) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

class PosixSemaphoreStore final : public StoreWithState<PosixKeyState> {
 public:
  explicit PosixSemaphoreStore(const PosixSemaphoreStoreOptions& options)
      : options_(options) {
    describe_ = absl::StrFormat("posix-semaphore (prefix=%s, mode=%04o)",
                                options_.prefix,
                                static_cast<unsigned>(options_.mode));
  }

  absl::string_view name() const override { return kName; }
  std::string Describe() const override { return describe_; }

  Capabilities capabilities() const override {
    Capabilities c;
    c.blocking = true;
    c.counting = true;
    c.owner_death = true;
    c.scope = Scope::kLocal;
    return c;
  }

  absl::StatusOr<bool> Save(Key& key, LockMode mode, Deadline deadline) override;
  absl::Status PutOffExpiration(Key&, absl::Duration) override {
    return absl::OkStatus();  // no lease
  }
  absl::Status Delete(Key& key) override;
  absl::StatusOr<bool> Exists(Key& key) override;

 private:
  SemaphoreRegistry::Names NamesOf(const Key& key) const {
    SemaphoreRegistry::Names names;
    names.semaphore = PosixSemaphoreName(key.resource(), options_.prefix);
    names.registry = absl::StrCat(names.semaphore, ".reg");
    return names;
  }
  // True once a permit is taken, false when `deadline` passed first.
  absl::StatusOr<bool> TakePermit(const Key& key, SemaphoreRegistry* registry,
                                  Deadline deadline, bool* previous_owner_died);

  const PosixSemaphoreStoreOptions options_;
  std::string describe_;
};

absl::StatusOr<bool> PosixSemaphoreStore::TakePermit(const Key& key,
                                                     SemaphoreRegistry* registry,
                                                     Deadline deadline,
                                                     bool* previous_owner_died) {
  sem_t* sem = registry->semaphore();
  bool woken = false;
  for (;;) {
    // The registry decides; a post only says that it is worth looking. It
    // also reclaims dead holders' permits when none is free, so every try
    // and every slice of a wait looks for them.
    absl::StatusOr<bool> got = registry->TryAcquire(woken, previous_owner_died);
    if (!got.ok() || *got) return got;
    if (deadline.has_passed()) return false;
    // Slices bound how late a dead holder's permit, or a permit whose post
    // was lost with a killed process, reaches a waiter.
    const int64_t slice_end =
        std::min(deadline.monotonic_nanos(), Deadline::NowNanos() + kReclaimSliceNanos);
    struct timespec ts;
    ts.tv_sec = static_cast<time_t>(slice_end / 1000000000);
    ts.tv_nsec = static_cast<long>(slice_end % 1000000000);
    woken = sem_clockwait(sem, CLOCK_MONOTONIC, &ts) == 0;
    if (!woken && errno != ETIMEDOUT && errno != EINTR) {
      return ErrnoError(errno, describe_, key.resource(), "sem_clockwait");
    }
  }
}

absl::StatusOr<bool> PosixSemaphoreStore::Save(Key& key, LockMode mode,
                                               Deadline deadline) {
  if (mode != LockMode::kExclusive) {
    return StoreError(absl::StatusCode::kFailedPrecondition, describe_,
                      key.resource(), "POSIX semaphores have no shared locks");
  }
  // The registry names this process as the holder.
  key.MarkUnserializable();
  PosixKeyState* st = &EnsureState(key);
  if (st->held) return true;
  if (key.permits() == 0 || key.permits() > kRegistrySlots) {
    return StoreError(absl::StatusCode::kInvalidArgument, describe_, key.resource(),
                      absl::StrCat("permits=", key.permits(), ": expected 1 to ",
                                   kRegistrySlots, " (one registry slot per holder)"));
  }
  if (st->registry != nullptr && st->attach_pid != CurrentPid()) {
    // Forked since the attachment: the slot is the parent's. Unmap our copy
    // and take a slot of our own.
    st->registry.reset();
  }
  for (int attempt = 0; attempt < kMaxReattach; ++attempt) {
    if (st->registry == nullptr) {
      absl::StatusOr<std::unique_ptr<SemaphoreRegistry>> attached =
          SemaphoreRegistry::Attach(NamesOf(key), options_.mode, key.permits(),
                                    describe_, key.resource());
      if (!attached.ok()) return attached.status();
      st->registry = *std::move(attached);
      st->attach_pid = CurrentPid();
    }
    bool died = false;
    absl::StatusOr<bool> got = TakePermit(key, st->registry.get(), deadline, &died);
    // Busy or failed, the slot stays for the next try and ends with the Key.
    if (!got.ok()) return got.status();
    if (!*got) return false;
    if (!st->registry->StillLinked()) {
      // Someone deleted the pair while we waited or since our last
      // acquisition (a cleaner, RemoveIPC): only our own slot keeps ipclock
      // peers from removing it, so this one fstat per acquisition is what
      // a kept attachment costs.
      // The permit we took excludes nobody who attaches from now on: give
      // it up and start over on the objects the names lead to now.
      st->registry->Detach().IgnoreError();
      st->registry.reset();
      continue;
    }
    key.set_previous_owner_died(died);
    st->held = true;
    return true;
  }
  return StoreError(absl::StatusCode::kUnavailable, describe_, key.resource(),
                    absl::StrCat("the semaphore's registry was deleted ",
                                 kMaxReattach, " times while we waited"));
}

absl::Status PosixSemaphoreStore::Delete(Key& key) {
  auto* st = state(key);
  if (st == nullptr || !st->held) return absl::OkStatus();
  st->held = false;
  // The slot stays until the Key is destroyed.
  return st->registry->ReleasePermit();
}

absl::StatusOr<bool> PosixSemaphoreStore::Exists(Key& key) {
  auto* st = state(key);
  if (st == nullptr || !st->held) return false;
  return st->registry->StillLinked();
}

}  // namespace

std::string PosixSemaphoreName(absl::string_view resource, absl::string_view prefix) {
  Sha256Digest d = Sha256(resource);
  std::array<uint8_t, 16> head;
  std::copy(d.begin(), d.begin() + 16, head.begin());
  return absl::StrCat("/", prefix, ".", ToHex(head));
}

absl::StatusOr<std::shared_ptr<Store>> NewPosixSemaphoreStore(
    const PosixSemaphoreStoreOptions& options) {
  if ((options.mode & ~0777u) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "posix-semaphore: mode %o is not a permission mode", options.mode));
  }
  if (!ValidPrefix(options.prefix)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "posix-semaphore: prefix \"", absl::CHexEscape(options.prefix),
        "\": expected 1 to 64 of [A-Za-z0-9._-] (no '/': a name has one, "
        "at its start)"));
  }
  if (absl::Status s = GuardRemoveIpc(IpcKind::kPosixShm, "", options.remove_ipc,
                                      "posix-semaphore");
      !s.ok()) {
    return s;
  }
  return std::shared_ptr<Store>(std::make_shared<PosixSemaphoreStore>(options));
}

absl::StatusOr<std::shared_ptr<Store>> PosixSemaphoreStoreFromDsn(Dsn& dsn,
    const StoreOptions& store_options) {
  if (dsn.has_authority() || !dsn.path().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ipclock: bad DSN \"", dsn.redacted(),
        "\": posix-semaphore takes no address, only options "
        "(posix-semaphore:?prefix=myapp&mode=0666)"));
  }
  PosixSemaphoreStoreOptions options;
  if (std::optional<std::string> prefix = dsn.TakeOption("prefix")) {
    options.prefix = *prefix;
  }
  absl::StatusOr<unsigned> mode = dsn.TakeMode("mode", options.mode);
  if (!mode.ok()) return mode.status();
  options.mode = *mode;
  absl::StatusOr<RemoveIpcPolicy> remove_ipc =
      TakeRemoveIpcPolicy(dsn, store_options.remove_ipc);
  if (!remove_ipc.ok()) return remove_ipc.status();
  options.remove_ipc = *remove_ipc;
  if (absl::Status s = dsn.CheckAllOptionsUsed(); !s.ok()) return s;
  return NewPosixSemaphoreStore(options);
}

const StoreDriver kPosixSemaphoreDriver = {&PosixSemaphoreStoreFromDsn, &ListPosixSemaphoreLocks};

}  // namespace ipclock
