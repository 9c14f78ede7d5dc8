// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/shm/shm_segment.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include <new>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "core/store_errors.h"
#include "ipclock/spi/deadline.h"
#include "platform/errors.h"
#include "platform/process_id.h"
#include "platform/robust_mutex.h"
#include "platform/sleep.h"

namespace ipclock {

namespace {

// How long a store waits for another process to finish initializing a new
// segment before it calls the segment abandoned.
constexpr int64_t kInitWaitNanos = 5'000'000'000;
// First acquisitions check the segment's identity at most this often (in
// practice once per kernel tick, the resolution of the coarse clock).
constexpr int64_t kTickCheckNanos = 1'000'000;
// Opens that find the segment removed or replaced under them start over at
// most this many times.
constexpr int kOpenAttempts = 64;

static_assert(std::atomic<uint64_t>::is_always_lock_free,
              "the segment needs address-free 64-bit atomics");
static_assert(std::atomic<uint32_t>::is_always_lock_free,
              "the segment needs address-free 32-bit atomics");
static_assert(sizeof(std::atomic<uint64_t>) == 8 && sizeof(std::atomic<uint32_t>) == 4,
              "atomics in the segment have the size of their values");
static_assert(sizeof(ShmSlot) % 64 == 0, "slots are cache-line multiples");
#if defined(__x86_64__)
// The listing's fields took padding: layout 2's slot size is unchanged, so
// processes of older builds share segments with this one.
static_assert(sizeof(ShmSlot) == 320, "the slot of layout 2 on x86-64");
#endif
// Where pthread_mutex_t is 40 bytes (x86_64) or less (armhf: 24). On
// aarch64 glibc's is 48, and the slot's hot fields spill into a second line.
static_assert(sizeof(pthread_mutex_t) > 40 ||
                  offsetof(ShmSlot, generation) + sizeof(uint64_t) <= 64,
              "what an acquisition touches fits one cache line");
static_assert(ShmSegmentSize(kShmMaxCapacity) < (uint64_t{1} << 40),
              "segment sizes cannot overflow");

absl::Status Mismatch(const ShmNames& names, absl::string_view what, uint64_t theirs,
                      uint64_t ours) {
  return MisuseError(
      names.describe, "",
      absl::StrCat("segment ", names.path, " has ", what, " ", theirs,
                   " where this build has ", ours,
                   ": it was made by another version or build of ipclock (or "
                   "with other options). Remove it (rm ",
                   names.path, ") once no process uses it"));
}

template <typename T>
T LoadOnce(const T& field) {
  return __atomic_load_n(&field, __ATOMIC_RELAXED);
}

// Writes a fresh segment of `capacity` slots into `base`. Nothing else may
// read it yet: the magic stays 0 until the caller publishes it.
absl::Status WriteEmptySegment(void* base, const ShmStoreOptions& options,
                               const ShmNames& names) {
  auto* h = new (base) ShmHeader();
  h->magic.store(0, std::memory_order_relaxed);
  h->version = kShmLayoutVersion;
  h->word_size = sizeof(void*);
  h->header_size = sizeof(ShmHeader);
  h->slot_size = sizeof(ShmSlot);
  h->mutex_size = sizeof(pthread_mutex_t);
  h->capacity = options.capacity;
  h->flags = options.priority_inheritance ? kShmFlagPriorityInheritance : 0;
  h->creator_pid = CurrentPid();
  RobustMutexOptions mutex_options;
  mutex_options.priority_inheritance = options.priority_inheritance;
  if (int err = RobustMutexInit(&h->table_mu, mutex_options); err != 0) {
    return ErrnoError(err, names.describe, "",
                      absl::StrCat("pthread_mutex_init (slot table of ", names.path, ")"));
  }
  // ReserveSize() left zeros: every index position is empty already.
  char* slots = static_cast<char*>(base) + ShmSlotsOffset(options.capacity);
  for (uint32_t i = 0; i < options.capacity; ++i) {
    ShmSlot* slot = new (slots + static_cast<uint64_t>(i) * sizeof(ShmSlot)) ShmSlot();
    if (int err = RobustMutexInit(&slot->mu, mutex_options); err != 0) {
      return ErrnoError(err, names.describe, "",
                        absl::StrCat("pthread_mutex_init (slot ", i, " of ", names.path, ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status InitializeSegment(int fd, const ShmStoreOptions& options,
                               const ShmNames& names) {
  const uint64_t size = ShmSegmentSize(options.capacity);
  if (int err = ReserveSize(fd, size); err != 0) {
    return ErrnoError(err, names.describe, "",
                      absl::StrCat("ftruncate and fallocate ", names.path, " to ", size,
                                   " bytes (capacity ", options.capacity, ")"));
  }
  SharedMapping mapping;
  if (int err = SharedMapping::Map(fd, size, /*writable=*/true, &mapping); err != 0) {
    return ErrnoError(err, names.describe, "", absl::StrCat("mmap ", names.path));
  }
  absl::Status s = WriteEmptySegment(mapping.data(), options, names);
  if (s.ok()) {
    static_cast<ShmHeader*>(mapping.data())->magic.store(kShmMagic, std::memory_order_release);
  }
  return s;
}

// Removes the object at `names.path` if it is still the one open as `fd`,
// after this process created it and could not initialize it: nobody can
// have used it, and the next opener should make a fresh one rather than
// finish a half-made file. Returns `failure`, with what went wrong in the
// removal (the segment is then left uninitialized, which the next opener
// initializes).
absl::Status RemoveIfStillOurs(int fd, const ShmNames& names, absl::Status failure) {
  ObjectStat ours, there;
  int err = IdentifyFd(fd, &ours);
  if (err == 0) err = IdentifyPath(names.path, &there);
  if (err == 0 && !ours.SameObject(there)) return failure;
  if (err == 0) err = ShmUnlink(names.shm_name);
  if (err == 0 || err == ENOENT) return failure;
  return Restated(failure, absl::StrCat(failure.message(), "; removing the half-made ",
                                   names.path, " failed too: ", strerror(err)));
}

// Opens the object, creating it (with exactly options.mode) if there is
// none. `*created` says which.
absl::Status OpenOrCreate(const ShmStoreOptions& options, const ShmNames& names,
                          ScopedFd* fd, bool* created) {
  for (int attempt = 0; attempt < kOpenAttempts; ++attempt) {
    *created = false;
    int err = ShmOpen(names.shm_name, O_RDWR, 0, fd);
    if (err == ENOENT) {
      err = ShmOpen(names.shm_name, O_RDWR | O_CREAT | O_EXCL, options.mode, fd);
      if (err == EEXIST) continue;  // another process won the race
      if (err == 0) {
        *created = true;
        // O_CREAT's mode is cut by the umask; the mode is a promise to the
        // other users of the segment, so set it exactly.
        if (int chmod_err = SetMode(fd->get(), options.mode); chmod_err != 0) {
          absl::Status s = RemoveIfStillOurs(
              fd->get(), names,
              ErrnoError(chmod_err, names.describe, "", absl::StrCat("fchmod ", names.path)));
          fd->reset();
          return s;
        }
      }
    }
    if (err == ENOENT) continue;  // unlinked between the two opens
    if (err == ELOOP) {
      return ConfigurationError(names.describe, "",
                                absl::StrCat("refusing ", names.path, ": it is a symbolic link"));
    }
    if (err != 0) return ErrnoError(err, names.describe, "", absl::StrCat("shm_open ", names.path));
    return absl::OkStatus();
  }
  return TransientError(names.describe, "",
                        absl::StrCat(names.path, " kept vanishing while being opened"));
}

// Waits until the object open as `fd` is initialized, initializing it under
// its flock if nobody else is.
absl::Status AwaitInitialized(int fd, const ShmStoreOptions& options, const ShmNames& names,
                              bool created) {
  const int64_t give_up = Deadline::NowNanos() + kInitWaitNanos;
  for (;;) {
    ObjectStat id;
    if (int err = IdentifyFd(fd, &id); err != 0) {
      return ErrnoError(err, names.describe, "", absl::StrCat("fstat ", names.path));
    }
    absl::StatusOr<uint64_t> magic = PublishedShmMagic(fd, id.size, names);
    if (!magic.ok()) return magic.status();
    if (*magic == kShmMagic) return absl::OkStatus();
    if (*magic != 0) {
      return MisuseError(names.describe, "",
                         absl::StrCat(names.path, " is not an ipclock segment (magic ",
                                      absl::Hex(*magic), "); remove it or pick another name"));
    }
    const int lock_err = TryLockFile(fd);
    if (lock_err == 0) {
      absl::Status s;
      if (int err = IdentifyFd(fd, &id); err != 0) {
        s = ErrnoError(err, names.describe, "", absl::StrCat("fstat ", names.path));
      } else {
        absl::StatusOr<uint64_t> again = PublishedShmMagic(fd, id.size, names);
        if (!again.ok()) {
          s = again.status();
        } else if (*again == 0) {
          s = InitializeSegment(fd, options, names);
          if (!s.ok() && created) s = RemoveIfStillOurs(fd, names, s);
        }
      }
      const int unlock_err = UnlockFile(fd);
      if (!s.ok()) return s;
      // Closing the descriptor would drop the flock anyway; an error here
      // only delays other openers until then.
      if (unlock_err != 0) {
        return ErrnoError(unlock_err, names.describe, "", absl::StrCat("flock ", names.path));
      }
      continue;
    }
    if (lock_err != EWOULDBLOCK) {
      return ErrnoError(lock_err, names.describe, "", absl::StrCat("flock ", names.path));
    }
    if (Deadline::NowNanos() > give_up) {
      return MisuseError(names.describe, "",
                         absl::StrCat("another process has been initializing ", names.path,
                                      " for ", kInitWaitNanos / 1'000'000'000,
                                      " s; if it is stuck, remove the segment (rm ",
                                      names.path, ")"));
    }
    MonotonicSleepFor(absl::Milliseconds(1));
  }
}

}  // namespace

ShmNames::ShmNames(absl::string_view n)
    : name(n),
      describe(absl::StrCat("shm://", n)),
      path(absl::StrCat("/dev/shm/ipclock.", n)),
      shm_name(absl::StrCat("/ipclock.", n)) {}

bool ValidShmSegmentName(absl::string_view name) {
  if (name.empty() || name.size() > 200) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

absl::Status BadShmSegmentName(absl::string_view name) {
  return ConfigurationError(absl::StrCat(
      "ipclock: shm: bad segment name \"", absl::CEscape(name.substr(0, 96)),
      "\": expected 1 to 200 bytes of [A-Za-z0-9._-]"));
}

ShmHeaderCopy CopyShmHeader(const ShmHeader& h) {
  ShmHeaderCopy c;
  c.version = LoadOnce(h.version);
  c.word_size = LoadOnce(h.word_size);
  c.header_size = LoadOnce(h.header_size);
  c.slot_size = LoadOnce(h.slot_size);
  c.mutex_size = LoadOnce(h.mutex_size);
  c.capacity = LoadOnce(h.capacity);
  c.flags = LoadOnce(h.flags);
  return c;
}

absl::Status ValidateShmHeader(const ShmHeaderCopy& h, uint64_t file_size,
                               std::optional<bool> pi, const ShmNames& names) {
  if (h.version != kShmLayoutVersion) {
    return Mismatch(names, "layout version", h.version, kShmLayoutVersion);
  }
  if (h.word_size != sizeof(void*)) {
    return Mismatch(names, "word size", h.word_size, sizeof(void*));
  }
  if (h.header_size != sizeof(ShmHeader)) {
    return Mismatch(names, "header size", h.header_size, sizeof(ShmHeader));
  }
  if (h.slot_size != sizeof(ShmSlot)) {
    return Mismatch(names, "slot size", h.slot_size, sizeof(ShmSlot));
  }
  if (h.mutex_size != sizeof(pthread_mutex_t)) {
    return Mismatch(names, "mutex size", h.mutex_size, sizeof(pthread_mutex_t));
  }
  if (h.capacity == 0 || h.capacity > kShmMaxCapacity ||
      file_size < ShmSegmentSize(h.capacity)) {
    return MisuseError(names.describe, "",
                       absl::StrCat("segment ", names.path, " is ", file_size,
                                    " bytes, too small for its capacity of ", h.capacity,
                                    " slots; remove it (rm ", names.path,
                                    ") once no process uses it"));
  }
  if (pi.has_value() && h.pi() != *pi) {
    const char* const kinds[] = {"plain mutexes (neither pi=true nor fair=true)",
                                 "priority-inheritance mutexes (pi=true or fair=true)"};
    return MisuseError(
        names.describe, "",
        absl::StrCat("segment ", names.path, " was created with ", kinds[h.pi() ? 1 : 0],
                     " but this store asks for ", kinds[*pi ? 1 : 0],
                     "; every user of a segment must agree on pi and fair"));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> PublishedShmMagic(int fd, uint64_t size, const ShmNames& names) {
  if (size < sizeof(ShmHeader)) return 0;
  SharedMapping head;
  if (int err = SharedMapping::Map(fd, sizeof(ShmHeader), /*writable=*/false, &head); err != 0) {
    return ErrnoError(err, names.describe, "", absl::StrCat("mmap ", names.path));
  }
  return static_cast<const ShmHeader*>(head.data())->magic.load(std::memory_order_acquire);
}

absl::StatusOr<ShmHeaderCopy> ReadShmHeader(int fd, const ShmNames& names,
                                            ObjectStat* identity) {
  if (int err = IdentifyFd(fd, identity); err != 0) {
    return ErrnoError(err, names.describe, "", absl::StrCat("fstat ", names.path));
  }
  if (identity->size < sizeof(ShmHeader)) {
    return MisuseError(names.describe, "",
                       absl::StrCat(names.path, " is not an initialized ipclock segment"));
  }
  SharedMapping head;
  if (int err = SharedMapping::Map(fd, sizeof(ShmHeader), /*writable=*/false, &head); err != 0) {
    return ErrnoError(err, names.describe, "", absl::StrCat("mmap ", names.path));
  }
  const auto& h = *static_cast<const ShmHeader*>(head.data());
  if (h.magic.load(std::memory_order_acquire) != kShmMagic) {
    return MisuseError(names.describe, "",
                       absl::StrCat(names.path, " is not an initialized ipclock segment"));
  }
  return CopyShmHeader(h);
}

absl::StatusOr<std::shared_ptr<ShmSegment>> ShmSegment::Open(const ShmStoreOptions& options) {
  const ShmNames names(options.name);
  for (int attempt = 0; attempt < kOpenAttempts; ++attempt) {
    ScopedFd fd;
    bool created = false;
    if (absl::Status s = OpenOrCreate(options, names, &fd, &created); !s.ok()) return s;
    if (absl::Status s = AwaitInitialized(fd.get(), options, names, created); !s.ok()) return s;

    ObjectStat identity;
    absl::StatusOr<ShmHeaderCopy> header = ReadShmHeader(fd.get(), names, &identity);
    if (!header.ok()) return header.status();
    if (absl::Status s = ValidateShmHeader(*header, identity.size,
                                           options.priority_inheritance, names);
        !s.ok()) {
      return s;
    }
    // From here on only the copy counts: its capacity, this build's offsets,
    // and a mapping no larger than the object was when it was checked.
    SharedMapping mapping;
    if (int err = SharedMapping::Map(fd.get(), ShmSegmentSize(header->capacity),
                                     /*writable=*/true, &mapping);
        err != 0) {
      return ErrnoError(err, names.describe, "", absl::StrCat("mmap ", names.path));
    }
    std::shared_ptr<ShmSegment> segment(
        new ShmSegment(names, std::move(fd), identity, std::move(mapping), *header));
    // Removed or replaced while we opened it (or by a failed creator): the
    // path is what other processes open, so start over with it.
    absl::StatusOr<Loss> loss = segment->CheckIdentity("");
    if (!loss.ok()) return loss.status();
    if (*loss == Loss::kNone) return segment;
  }
  return TransientError(names.describe, "",
                        absl::StrCat(names.path, " kept being replaced while being opened"));
}

ShmSegment::ShmSegment(const ShmNames& names, ScopedFd fd, ObjectStat identity,
                       SharedMapping mapping, const ShmHeaderCopy& header)
    : names_(names),
      fd_(std::move(fd)),
      identity_(identity),
      mapping_(std::move(mapping)),
      header_(static_cast<ShmHeader*>(mapping_.data())),
      index_(reinterpret_cast<std::atomic<uint64_t>*>(static_cast<char*>(mapping_.data()) +
                                                       kShmIndexOffset)),
      slots_(reinterpret_cast<ShmSlot*>(static_cast<char*>(mapping_.data()) +
                                        ShmSlotsOffset(header.capacity))),
      capacity_(header.capacity),
      pi_(header.pi()) {}

absl::StatusOr<ShmSegment::Loss> ShmSegment::CheckIdentity(absl::string_view resource) {
  const Loss known = loss();
  if (known != Loss::kNone) return known;
  ObjectStat there;
  const int path_err = IdentifyPath(names_.path, &there);
  if (path_err == 0 && there.SameObject(identity_)) return Loss::kNone;
  if (path_err != 0 && path_err != ENOENT) {
    return ErrnoError(path_err, names_.describe, resource, absl::StrCat("stat ", names_.path));
  }
  ObjectStat ours;
  if (int err = IdentifyFd(fd_.get(), &ours); err != 0) {
    return ErrnoError(err, names_.describe, resource, absl::StrCat("fstat ", names_.path));
  }
  Loss found = Loss::kMoved;
  if (ours.links == 0) found = path_err == 0 ? Loss::kReplaced : Loss::kRemoved;
  loss_.store(static_cast<int>(found), std::memory_order_relaxed);
  return found;
}

absl::StatusOr<ShmSegment::Loss> ShmSegment::CheckIdentityEachTick(absl::string_view resource) {
  const int64_t now = CoarseMonotonicNanos();
  if (now < next_tick_check_.load(std::memory_order_relaxed)) return loss();
  next_tick_check_.store(now + kTickCheckNanos, std::memory_order_relaxed);
  last_second_.store(WallClockSeconds(), std::memory_order_relaxed);
  return CheckIdentity(resource);
}

absl::StatusOr<ShmSegment::Loss> ShmSegment::CheckIdentityEachSecond(
    absl::string_view resource) {
  const int64_t second = WallClockSeconds();
  if (second == last_second_.load(std::memory_order_relaxed)) return loss();
  last_second_.store(second, std::memory_order_relaxed);
  return CheckIdentity(resource);
}

std::string ShmSegment::DescribeLoss(Loss loss) const {
  switch (loss) {
    case Loss::kNone:
      break;
    case Loss::kRemoved:
      return absl::StrCat("segment ", names_.path,
                          " was removed (systemd-logind RemoveIPC does this at logout)");
    case Loss::kReplaced:
      return absl::StrCat("segment ", names_.path,
                          " was replaced: ours was removed (systemd-logind RemoveIPC "
                          "does this at logout) and another process created a new one");
    case Loss::kMoved:
      return absl::StrCat("segment ", names_.path,
                          " was renamed: that path no longer names the segment this "
                          "store uses, so a process that opens it now gets another one");
  }
  return absl::StrCat("segment ", names_.path, " is in place");
}

}  // namespace ipclock
