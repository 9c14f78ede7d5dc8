// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// ShmMutexStore. See include/ipclock/shm_store.h for the contract. The
// caveats of robust pthread mutexes in shared memory are written beside the
// code that deals with them.
//
// How a name finds its slot. The slots form an open-addressed table: a name
// hashes (NameHash(), the same in every process) to a home slot and lives at most
// `max_displacement` slots after it. Lookup and binding run under the
// table-level robust mutex `table_mu`; a Key remembers its slot index and the
// slot's binding `generation`, so later acquisitions of the same Key lock the
// slot's mutex directly. A slot may be rebound to another name only by a
// process that holds both `table_mu` and the slot's mutex, and rebinding
// bumps the generation: a Key that finds a changed generation after locking
// lets go and looks its name up again. That check, not the reference count,
// is what keeps two names from sharing a slot; the count only steers reuse
// toward slots that no Key has cached.

#include "stores/shm_mutex_store.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "platform/errors.h"
#include "ipclock/store_interface.h"
#include "core/removeipc_guard.h"
#include "core/hashing.h"
#include "platform/mutex_futex.h"
#include "platform/proc_pid.h"
#include "platform/process_id.h"
#include "platform/random.h"
#include "platform/scoped_fd.h"
#include "stores/shm_inspect.h"

namespace ipclock {

namespace {

constexpr absl::string_view kName = "shm";

// How long a store waits for another process to finish initializing a new
// segment before it calls the segment abandoned.
constexpr int64_t kInitWaitNanos = 5'000'000'000;
// A process holds table_mu only for a bounded scan. One that keeps it longer
// than this is stopped (SIGSTOP, a debugger) and a finite wait fails instead
// of hanging on it.
constexpr int64_t kTableGraceNanos = 1'000'000'000;
// A Key whose slot is rebound under it this many times in a row during one
// acquisition gives up rather than chase a thrashing table forever.
constexpr int kMaxRebinds = 1000;
// First acquisitions re-check the segment's link count at most this often
// (in practice once per kernel tick, the resolution of the coarse clock).
constexpr int64_t kLinkCheckIntervalNanos = 1'000'000;

static_assert(std::atomic<uint64_t>::is_always_lock_free,
              "the segment needs address-free 64-bit atomics");
static_assert(std::atomic<uint32_t>::is_always_lock_free,
              "the segment needs address-free 32-bit atomics");
static_assert(sizeof(ShmSlot) % 64 == 0, "slots are cache-line multiples");
// Where pthread_mutex_t is 40 bytes (x86_64) or less (armhf: 24). On
// aarch64 glibc's is 48, and the slot's hot fields spill into a second line.
static_assert(sizeof(pthread_mutex_t) > 40 ||
                  offsetof(ShmSlot, generation) + sizeof(uint64_t) <= 64,
              "what an acquisition touches fits one cache line");

// --- Names --------------------------------------------------------------------

bool ValidSegmentName(absl::string_view name) {
  if (name.empty() || name.size() > 200) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

absl::Status BadSegmentName(absl::string_view name) {
  return absl::InvalidArgumentError(absl::StrCat(
      "ipclock: shm: bad segment name \"", absl::CEscape(name.substr(0, 96)),
      "\": expected 1 to 200 bytes of [A-Za-z0-9._-]"));
}

// A resource as a slot stores it.
struct SlotName {
  uint64_t hash;
  uint32_t kind;
  uint32_t len;
  const uint8_t* bytes;  // `stored_len()` bytes
  Sha256Digest digest;

  size_t stored_len() const { return kind == kShmNameInline ? len : digest.size(); }
};

// The table hash: the same in every process that maps the segment (so not
// absl::Hash, which is seeded per process), and word-at-a-time, since a
// byte-wise FNV over a 200-byte name costs more than the rest of an
// acquisition. Collisions cost a longer probe, never a shared slot.
uint64_t NameHash(const uint8_t* p, size_t n) {
  constexpr uint64_t kMul = 0x9e3779b97f4a7c15ULL;
  uint64_t h = 0xcbf29ce484222325ULL ^ (n * kMul);
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ w) * kMul;
    h ^= h >> 29;
  }
  uint64_t tail = 0;
  memcpy(&tail, p, n);
  h = (h ^ tail) * kMul;
  h ^= h >> 32;
  return h;
}

void MakeSlotName(absl::string_view resource, SlotName* out) {
  out->len = static_cast<uint32_t>(resource.size());
  if (resource.size() <= kShmInlineName) {
    out->kind = kShmNameInline;
    out->bytes = reinterpret_cast<const uint8_t*>(resource.data());
  } else {
    // Longer names are kept as SHA-256 and length: two distinct names then
    // share a slot only if their digests collide.
    out->kind = kShmNameSha256;
    out->digest = Sha256(resource);
    out->bytes = out->digest.data();
  }
  out->hash = NameHash(out->bytes, out->stored_len());
}

bool SlotHolds(const ShmSlot& slot, const SlotName& name) {
  return slot.state == kShmSlotBound && slot.name_hash == name.hash &&
         slot.name_kind == name.kind && slot.name_len == name.len &&
         memcmp(slot.name, name.bytes, name.stored_len()) == 0;
}

// --- Mutexes ------------------------------------------------------------------

absl::Status InitMutex(pthread_mutex_t* mu, bool pi) {
  pthread_mutexattr_t attr;
  int rc = pthread_mutexattr_init(&attr);
  if (rc == 0) rc = pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
  if (rc == 0) rc = pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
  // ERRORCHECK makes a second lock by the holding thread return EDEADLK
  // instead of hanging the thread forever.
  if (rc == 0) rc = pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
  if (rc == 0 && pi) rc = pthread_mutexattr_setprotocol(&attr, PTHREAD_PRIO_INHERIT);
  if (rc == 0) rc = pthread_mutex_init(mu, &attr);
  pthread_mutexattr_destroy(&attr);
  if (rc != 0) return ErrnoError(rc, "shm", "", "pthread_mutex_init");
  return absl::OkStatus();
}

// Set once glibc or the kernel refused CLOCK_MONOTONIC for a PI mutex.
std::atomic<bool> g_pi_needs_realtime{false};

// GCC 12's ThreadSanitizer runtime does not intercept
// pthread_mutex_clocklock, and its pthread_mutex_timedlock interceptor does
// not record an EOWNERDEAD acquisition, so either would leave TSan seeing
// our unlock of a mutex it never saw locked. TSan builds (tests only) wait
// with pthread_mutex_trylock, which it fully understands, every 200 us
// until the deadline; other builds never poll.
#if defined(__SANITIZE_THREAD__)
#define IPCLOCK_TSAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define IPCLOCK_TSAN_BUILD 1
#endif
#endif
#ifdef IPCLOCK_TSAN_BUILD
constexpr bool kTimedLocksInvisibleToTsan = true;
#else
constexpr bool kTimedLocksInvisibleToTsan = false;
#endif

// Locks `mu` by `deadline`: 0, EOWNERDEAD (held, inconsistent), or the
// error (EBUSY/ETIMEDOUT when the deadline passed first).
int LockMutex(pthread_mutex_t* mu, Deadline deadline, bool pi) {
  if (deadline == Deadline::Past()) return pthread_mutex_trylock(mu);
  if (deadline.is_never()) return pthread_mutex_lock(mu);
  if (kTimedLocksInvisibleToTsan) {
    for (;;) {
      int rc = pthread_mutex_trylock(mu);
      if (rc != EBUSY || deadline.has_passed()) return rc == EBUSY ? ETIMEDOUT : rc;
      usleep(200);
    }
  }
  if (!pi || !g_pi_needs_realtime.load(std::memory_order_relaxed)) {
    const struct timespec ts = deadline.ToMonotonicTimespec();
    int rc = pthread_mutex_clocklock(mu, CLOCK_MONOTONIC, &ts);
    if (!pi || rc != EINVAL) return rc;
    g_pi_needs_realtime.store(true, std::memory_order_relaxed);
  }
  // A PI mutex sleeps in FUTEX_LOCK_PI, which took only CLOCK_REALTIME
  // timeouts before FUTEX_LOCK_PI2 (Linux 5.14, used by glibc 2.35 and
  // later); older pairs return EINVAL for CLOCK_MONOTONIC. There the
  // remaining time is re-based onto the wall clock, so a clock step during
  // the wait shortens or stretches it (see shm_store.h).
  const int64_t left = deadline.monotonic_nanos() - Deadline::NowNanos();
  if (left <= 0) return pthread_mutex_trylock(mu);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  const int64_t at = static_cast<int64_t>(ts.tv_nsec) + left % 1'000'000'000;
  ts.tv_sec += static_cast<time_t>(left / 1'000'000'000 + at / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(at % 1'000'000'000);
  return pthread_mutex_timedlock(mu, &ts);
}

// --- The mapped segment -------------------------------------------------------

class Segment {
 public:
  Segment(std::string name, ScopedFd fd, void* base, size_t size)
      : name_(std::move(name)),
        describe_(absl::StrCat("shm://", name_)),
        path_(absl::StrCat("/dev/shm/ipclock.", name_)),
        fd_(std::move(fd)),
        base_(base),
        size_(size),
        header_(static_cast<ShmHeader*>(base)),
        slots_(reinterpret_cast<ShmSlot*>(static_cast<char*>(base) +
                                          header_->header_size)),
        capacity_(header_->capacity),
        pi_((header_->flags & kShmFlagPriorityInheritance) != 0) {}

  ~Segment() { munmap(base_, size_); }

  const std::string& describe() const { return describe_; }
  const std::string& path() const { return path_; }
  ShmHeader* header() const { return header_; }
  ShmSlot& slot(uint32_t i) const { return slots_[i]; }
  uint32_t capacity() const { return capacity_; }
  bool pi() const { return pi_; }
  bool removed() const { return removed_.load(std::memory_order_relaxed); }

  // Whether the segment is still linked at its path: one fstat(2). Once it
  // reports a removal, every later call does too.
  absl::Status CheckLinked(absl::string_view resource);

  // CheckLinked() at most once per tick of the coarse clock. An fstat costs
  // 150 to 400 ns where system calls pay for speculation mitigations, more
  // than the whole create-acquire-release-destroy cycle is allowed; reading
  // CLOCK_MONOTONIC_COARSE (vDSO) costs under 10.
  absl::Status CheckLinkedNow(absl::string_view resource) {
    if (removed()) return CheckLinked(resource);
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    const int64_t now = static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
    if (now < next_check_ns_.load(std::memory_order_relaxed)) return absl::OkStatus();
    next_check_ns_.store(now + kLinkCheckIntervalNanos, std::memory_order_relaxed);
    return CheckLinked(resource);
  }

 private:
  const std::string name_;
  const std::string describe_;
  const std::string path_;
  // Kept open: fstat of the open segment tells whether it was unlinked.
  ScopedFd fd_;
  void* const base_;
  const size_t size_;
  ShmHeader* const header_;
  ShmSlot* const slots_;
  const uint32_t capacity_;
  const bool pi_;
  std::atomic<bool> removed_{false};
  std::atomic<int64_t> next_check_ns_{0};
};

absl::Status Segment::CheckLinked(absl::string_view resource) {
  if (!removed()) {
    struct stat st;
    if (fstat(fd_.get(), &st) != 0) {
      return ErrnoError(errno, describe_, resource, absl::StrCat("fstat ", path_));
    }
    if (st.st_nlink > 0) return absl::OkStatus();
    removed_.store(true, std::memory_order_relaxed);
  }
  // Only now is the path worth a look, to say whether a new segment already
  // took its place.
  struct stat now;
  const bool replaced = stat(path_.c_str(), &now) == 0;
  return StoreError(
      absl::StatusCode::kFailedPrecondition, describe_, resource,
      absl::StrCat(
          "segment ", path_,
          " was removed, probably by systemd-logind RemoveIPC at its owner's "
          "logout (or by hand)",
          replaced ? " and another process has created a new one" : "",
          "; this store refuses new locks, since processes on the new segment "
          "would not exclude ours. Open a new store once every user of the old "
          "segment is gone, and run the service as a system user or set "
          "RemoveIPC=no in logind.conf"));
}

// --- Opening and initializing -------------------------------------------------

size_t SegmentSize(uint32_t capacity) {
  return sizeof(ShmHeader) + static_cast<size_t>(capacity) * sizeof(ShmSlot);
}

absl::Status Mismatch(const std::string& describe, const std::string& path,
                      absl::string_view what, uint64_t theirs, uint64_t ours) {
  return StoreError(
      absl::StatusCode::kFailedPrecondition, describe, "",
      absl::StrCat("segment ", path, " has ", what, " ", theirs,
                   " where this build has ", ours,
                   ": it was made by another version or build of ipclock (or "
                   "with other options). Remove it (rm ",
                   path, ") once no process uses it"));
}

// Checks an initialized header against this build and `options`.
absl::Status ValidateHeader(const ShmHeader& h, size_t file_size, bool pi,
                            const std::string& describe, const std::string& path) {
  if (h.version != kShmLayoutVersion) {
    return Mismatch(describe, path, "layout version", h.version, kShmLayoutVersion);
  }
  if (h.word_size != sizeof(void*)) {
    return Mismatch(describe, path, "word size", h.word_size, sizeof(void*));
  }
  if (h.header_size != sizeof(ShmHeader)) {
    return Mismatch(describe, path, "header size", h.header_size, sizeof(ShmHeader));
  }
  if (h.slot_size != sizeof(ShmSlot)) {
    return Mismatch(describe, path, "slot size", h.slot_size, sizeof(ShmSlot));
  }
  if (h.mutex_size != sizeof(pthread_mutex_t)) {
    return Mismatch(describe, path, "mutex size", h.mutex_size,
                    sizeof(pthread_mutex_t));
  }
  if (h.capacity == 0 || h.capacity > kShmMaxCapacity ||
      file_size < SegmentSize(h.capacity)) {
    return StoreError(absl::StatusCode::kFailedPrecondition, describe, "",
                      absl::StrCat("segment ", path, " is ", file_size,
                                   " bytes, too small for its capacity of ",
                                   h.capacity, " slots; remove it (rm ", path,
                                   ") once no process uses it"));
  }
  const bool seg_pi = (h.flags & kShmFlagPriorityInheritance) != 0;
  if (seg_pi != pi) {
    return StoreError(
        absl::StatusCode::kFailedPrecondition, describe, "",
        absl::StrCat("segment ", path, " was created with pi=",
                     seg_pi ? "true" : "false", " but this store asks for pi=",
                     pi ? "true" : "false",
                     "; every user of a segment must agree on pi"));
  }
  return absl::OkStatus();
}

absl::Status InitializeSegment(int fd, const ShmStoreOptions& options,
                               const std::string& describe,
                               const std::string& path) {
  const size_t size = SegmentSize(options.capacity);
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    return ErrnoError(errno, describe, "", absl::StrCat("ftruncate ", path));
  }
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    return ErrnoError(errno, describe, "", absl::StrCat("mmap ", path));
  }
  // ftruncate left zeros, and a zero magic keeps everyone else out until the
  // release store below.
  auto* h = new (base) ShmHeader();
  h->magic.store(0, std::memory_order_relaxed);
  h->version = kShmLayoutVersion;
  h->word_size = sizeof(void*);
  h->header_size = sizeof(ShmHeader);
  h->slot_size = sizeof(ShmSlot);
  h->mutex_size = sizeof(pthread_mutex_t);
  h->capacity = options.capacity;
  h->flags = options.priority_inheritance ? kShmFlagPriorityInheritance : 0;
  h->creator_pid = getpid();
  absl::Status s = FillRandom(h->creation_id, sizeof(h->creation_id));
  if (s.ok()) s = InitMutex(&h->table_mu, options.priority_inheritance);
  auto* slots = reinterpret_cast<ShmSlot*>(static_cast<char*>(base) + sizeof(ShmHeader));
  for (uint32_t i = 0; s.ok() && i < options.capacity; ++i) {
    ShmSlot* slot = new (&slots[i]) ShmSlot();
    slot->refs.store(0, std::memory_order_relaxed);
    s = InitMutex(&slot->mu, options.priority_inheritance);
  }
  if (s.ok()) h->magic.store(kShmMagic, std::memory_order_release);
  munmap(base, size);
  return s;
}

absl::StatusOr<ScopedFd> OpenOrCreate(const ShmStoreOptions& options,
                                      const std::string& shm_name,
                                      const std::string& describe,
                                      const std::string& path) {
  for (int attempt = 0; attempt < 64; ++attempt) {
    int fd = shm_open(shm_name.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0);
    if (fd < 0 && errno == ENOENT) {
      fd = shm_open(shm_name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                    options.mode);
      if (fd < 0 && errno == EEXIST) continue;  // another process won the race
      // O_CREAT's mode is cut by the umask; the mode is a promise to the
      // other users of the segment, so set it exactly.
      if (fd >= 0 && fchmod(fd, options.mode) != 0) {
        int err = errno;
        close(fd);
        return ErrnoError(err, describe, "", absl::StrCat("fchmod ", path));
      }
    }
    if (fd < 0) {
      if (errno == ENOENT) continue;  // unlinked between the two opens
      if (errno == ELOOP) {
        return StoreError(absl::StatusCode::kPermissionDenied, describe, "",
                          absl::StrCat("refusing ", path, ": it is a symbolic link"));
      }
      return ErrnoError(errno, describe, "", absl::StrCat("shm_open ", path));
    }
    return ScopedFd(fd);
  }
  return StoreError(absl::StatusCode::kUnavailable, describe, "",
                    absl::StrCat(path, " kept vanishing while being opened"));
}

// Reads the magic of the segment behind `fd` if it is big enough to have one.
uint64_t PublishedMagic(int fd, size_t file_size) {
  if (file_size < sizeof(ShmHeader)) return 0;
  void* p = mmap(nullptr, sizeof(ShmHeader), PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return 0;
  uint64_t magic =
      static_cast<const ShmHeader*>(p)->magic.load(std::memory_order_acquire);
  munmap(p, sizeof(ShmHeader));
  return magic;
}

absl::StatusOr<std::shared_ptr<Segment>> OpenSegment(const ShmStoreOptions& options) {
  const std::string shm_name = absl::StrCat("/ipclock.", options.name);
  const std::string describe = absl::StrCat("shm://", options.name);
  const std::string path = absl::StrCat("/dev/shm/ipclock.", options.name);
  absl::StatusOr<ScopedFd> fd = OpenOrCreate(options, shm_name, describe, path);
  if (!fd.ok()) return fd.status();

  // Creation race. Whoever finds the segment uninitialized (zero magic)
  // initializes it under an exclusive flock(2) on the segment, publishing
  // the magic last. flock rather than "the creator initializes": a creator
  // killed between O_EXCL and the publication would otherwise leave a
  // segment that nobody may touch, while flock is released by its death.
  const int64_t give_up = Deadline::NowNanos() + kInitWaitNanos;
  struct stat st;
  for (;;) {
    if (fstat(fd->get(), &st) != 0) {
      return ErrnoError(errno, describe, "", absl::StrCat("fstat ", path));
    }
    uint64_t magic = PublishedMagic(fd->get(), static_cast<size_t>(st.st_size));
    if (magic == kShmMagic) break;
    if (magic != 0) {
      return StoreError(absl::StatusCode::kFailedPrecondition, describe, "",
                        absl::StrCat(path, " is not an ipclock segment (magic ",
                                     absl::Hex(magic), "); remove it or pick "
                                     "another name"));
    }
    if (flock(fd->get(), LOCK_EX | LOCK_NB) == 0) {
      if (fstat(fd->get(), &st) != 0) {
        int err = errno;
        flock(fd->get(), LOCK_UN);
        return ErrnoError(err, describe, "", absl::StrCat("fstat ", path));
      }
      absl::Status s;
      if (PublishedMagic(fd->get(), static_cast<size_t>(st.st_size)) == 0) {
        s = InitializeSegment(fd->get(), options, describe, path);
      }
      flock(fd->get(), LOCK_UN);
      if (!s.ok()) return s;
      continue;
    }
    if (errno != EWOULDBLOCK && errno != EINTR) {
      return ErrnoError(errno, describe, "", absl::StrCat("flock ", path));
    }
    if (Deadline::NowNanos() > give_up) {
      return StoreError(absl::StatusCode::kFailedPrecondition, describe, "",
                        absl::StrCat("another process has been initializing ", path,
                                     " for ", kInitWaitNanos / 1'000'000'000,
                                     " s; if it is stuck, remove the segment (rm ",
                                     path, ")"));
    }
    const struct timespec ms = {0, 1'000'000};
    nanosleep(&ms, nullptr);
  }

  void* head = mmap(nullptr, sizeof(ShmHeader), PROT_READ, MAP_SHARED, fd->get(), 0);
  if (head == MAP_FAILED) {
    return ErrnoError(errno, describe, "", absl::StrCat("mmap ", path));
  }
  absl::Status valid = ValidateHeader(*static_cast<const ShmHeader*>(head),
                                      static_cast<size_t>(st.st_size),
                                      options.priority_inheritance, describe, path);
  const uint32_t capacity = static_cast<const ShmHeader*>(head)->capacity;
  munmap(head, sizeof(ShmHeader));
  if (!valid.ok()) return valid;

  const size_t size = SegmentSize(capacity);
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd->get(), 0);
  if (base == MAP_FAILED) {
    return ErrnoError(errno, describe, "", absl::StrCat("mmap ", path));
  }
  return std::make_shared<Segment>(options.name, *std::move(fd), base, size);
}

// --- The store ------------------------------------------------------------------

struct ShmKeyState final : KeyState {
  ShmKeyState(std::shared_ptr<Segment> s, uint32_t i, uint64_t g)
      : segment(std::move(s)), index(i), generation(g) {}
  // Drops this key's reference to the slot. A held lock stays held: the
  // mutex belongs to its thread, not to this object (see shm_store.h).
  ~ShmKeyState() override {
    segment->slot(index).refs.fetch_sub(1, std::memory_order_relaxed);
  }

  std::shared_ptr<Segment> segment;
  uint32_t index;
  uint64_t generation;
  pid_t owner_tid = 0;
  pid_t owner_pid = 0;
  bool held = false;
};

class ShmMutexStore final : public StoreWithState<ShmKeyState> {
 public:
  explicit ShmMutexStore(std::shared_ptr<Segment> segment)
      : segment_(std::move(segment)) {}

  absl::string_view name() const override { return kName; }
  std::string Describe() const override { return segment_->describe(); }

  Capabilities capabilities() const override {
    Capabilities c;
    c.blocking = true;
    c.fencing = true;
    c.owner_death = true;
    c.scope = Scope::kLocal;
    return c;
  }

  absl::StatusOr<bool> Save(Key& key, LockMode mode, Deadline deadline) override;
  absl::Status PutOffExpiration(Key&, absl::Duration) override {
    return absl::OkStatus();  // no leases
  }
  absl::Status Delete(Key& key) override;
  absl::StatusOr<bool> Exists(Key& key) override {
    // A forked child has a copy of its parent's Key but not the mutex.
    const auto* st = state(key);
    return st != nullptr && st->held && st->owner_pid == CurrentPid();
  }
  // Async waits sleep on the futex word of the slot's mutex.
  absl::StatusOr<WaitWord> GetWaitWord(Key& key) override;

 private:
  absl::StatusOr<ShmKeyState*> Bind(Key& key, Deadline deadline);
  bool TryRebind(ShmSlot& slot, uint32_t displacement, const SlotName& name,
                 bool any_refs);
  absl::Status MutexError(int rc, const Key& key, absl::string_view what) const;

  const std::shared_ptr<Segment> segment_;
};

absl::Status ShmMutexStore::MutexError(int rc, const Key& key,
                                       absl::string_view what) const {
  if (rc == ENOTRECOVERABLE) {
    // Only a process that unlocked an EOWNERDEAD mutex without calling
    // pthread_mutex_consistent gets a mutex here; ipclock never does, so
    // some other program wrote into the segment. Nobody can lock it again.
    return StoreError(absl::StatusCode::kDataLoss, Describe(), key.resource(),
                      absl::StrCat(what, ": the mutex is unrecoverable (a "
                                   "process released it after its owner died "
                                   "without making it consistent); remove the "
                                   "segment (rm ", segment_->path(),
                                   ") once no process uses it"));
  }
  return ErrnoError(rc, Describe(), key.resource(), what);
}

// Rebinds `slot`, `displacement` slots after the home of `name`, to `name`
// if nobody holds it. Called with table_mu held.
bool ShmMutexStore::TryRebind(ShmSlot& slot, uint32_t displacement,
                              const SlotName& name, bool any_refs) {
  if (slot.state == kShmSlotBound && !any_refs &&
      slot.refs.load(std::memory_order_relaxed) != 0) {
    return false;
  }
  int rc = pthread_mutex_trylock(&slot.mu);
  if (rc == EOWNERDEAD) {
    pthread_mutex_consistent(&slot.mu);
  } else if (rc != 0) {
    return false;  // held (EBUSY; EDEADLK if by this thread) or unrecoverable
  }
  if (slot.holder_pid != 0) {
    // The last holder died with the lock. The slot is kept for that
    // resource until its next holder has been told (holder_pid still set
    // is how it will learn); reusing it would lose the report.
    pthread_mutex_unlock(&slot.mu);
    return false;
  }
  ShmHeader* h = segment_->header();
  // The order below keeps a binder killed half-way harmless: the floor
  // first, so no fence is ever lost; the generation next, so that Keys that
  // cached the old name cannot match; the name is written with the slot
  // marked free, so a torn name is never looked up; the slot is marked bound
  // only once lookups reach that far, so a bound name is never invisible
  // (an invisible one would get a second slot).
  if (slot.fence > h->fence_floor) h->fence_floor = slot.fence;
  slot.generation++;
  slot.state = kShmSlotFree;
  slot.name_hash = name.hash;
  slot.name_kind = name.kind;
  slot.name_len = name.len;
  memcpy(slot.name, name.bytes, name.stored_len());
  slot.fence = h->fence_floor;
  if (displacement > h->max_displacement) h->max_displacement = displacement;
  slot.state = kShmSlotBound;
  pthread_mutex_unlock(&slot.mu);
  return true;
}

// Finds or binds the slot of `key`'s resource and gives the key a state
// that references it. This is the path that checks the segment's link.
absl::StatusOr<ShmKeyState*> ShmMutexStore::Bind(Key& key, Deadline deadline) {
  if (absl::Status s = segment_->CheckLinkedNow(key.resource()); !s.ok()) return s;
  SlotName name;
  MakeSlotName(key.resource(), &name);

  ShmHeader* h = segment_->header();
  Deadline table_deadline = deadline;
  if (!deadline.is_never()) {
    const absl::Duration grace = absl::Nanoseconds(kTableGraceNanos);
    if (deadline.Remaining() < grace) table_deadline = Deadline::In(grace);
  }
  int rc = LockMutex(&h->table_mu, table_deadline, segment_->pi());
  if (rc == EOWNERDEAD) {
    // A process died in a lookup or inside TryRebind. The order of writes
    // there leaves the table consistent at every step (a slot is either
    // free or fully bound and reachable); at worst a reference count is one
    // too high, which only makes the slot a later choice for reuse.
    pthread_mutex_consistent(&h->table_mu);
  } else if (rc == ETIMEDOUT || rc == EBUSY) {
    return StoreError(absl::StatusCode::kUnavailable, Describe(), key.resource(),
                      "the slot table stayed locked for over 1 s (is a process "
                      "using the segment stopped?)");
  } else if (rc != 0) {
    return MutexError(rc, key, "locking the slot table");
  }

  const uint32_t cap = segment_->capacity();
  const uint32_t home = static_cast<uint32_t>(name.hash % cap);
  uint32_t found = cap;
  const uint32_t reach = h->max_displacement < cap ? h->max_displacement : cap - 1;
  for (uint32_t d = 0; d <= reach; ++d) {
    uint32_t i = (home + d) % cap;
    if (SlotHolds(segment_->slot(i), name)) {
      found = i;
      break;
    }
  }
  if (found == cap) {
    // First pass: slots that are free or that no Key has cached. Second:
    // any slot nobody holds, since a process killed with a Key alive never
    // gave its reference back and the count alone would leak capacity.
    for (int pass = 0; pass < 2 && found == cap; ++pass) {
      for (uint32_t d = 0; d < cap; ++d) {
        uint32_t i = (home + d) % cap;
        if (TryRebind(segment_->slot(i), d, name, pass == 1)) {
          found = i;
          break;
        }
      }
    }
  }
  if (found == cap) {
    pthread_mutex_unlock(&h->table_mu);
    return StoreError(
        absl::StatusCode::kResourceExhausted, Describe(), key.resource(),
        absl::StrCat("all ", cap, " slots of ", segment_->path(),
                     " are held (or kept for holders that died until their "
                     "next holder is told); raise the `capacity` DSN option "
                     "(shm://NAME?capacity=N), which takes effect when the "
                     "segment is created: remove it first (rm ",
                     segment_->path(), ") once no process uses it"));
  }
  ShmSlot& slot = segment_->slot(found);
  slot.refs.fetch_add(1, std::memory_order_relaxed);
  const uint64_t generation = slot.generation;
  pthread_mutex_unlock(&h->table_mu);

  SetStateSlot(key, nullptr);
  return &EnsureState(key, segment_, found, generation);
}

absl::StatusOr<bool> ShmMutexStore::Save(Key& key, LockMode mode, Deadline deadline) {
  if (mode != LockMode::kExclusive) {
    return StoreError(absl::StatusCode::kFailedPrecondition, Describe(),
                      key.resource(), "this store has no shared locks");
  }
  key.MarkUnserializable();
  auto* st = state(key);
  if (st != nullptr && st->held) {
    if (st->owner_tid == CurrentTid()) return true;
    // The mutex belongs to another thread, or to the parent of this forked
    // process: saying "held" here would give this thread a lock it lacks.
    return StoreError(absl::StatusCode::kFailedPrecondition, Describe(),
                      key.resource(),
                      absl::StrCat("this Key holds the lock for thread ", st->owner_tid,
                                   st->owner_pid == CurrentPid()
                                       ? ""
                                       : " of the process it was forked from",
                                   "; a shm lock belongs to the thread that "
                                   "acquired it"));
  }

  for (int attempt = 0; attempt < kMaxRebinds; ++attempt) {
    if (st == nullptr) {
      absl::StatusOr<ShmKeyState*> bound = Bind(key, deadline);
      if (!bound.ok()) return bound.status();
      st = *bound;
    } else if (segment_->removed()) {
      // A removal seen by any Lock of this store stops reused Keys too.
      return segment_->CheckLinked(key.resource());
    }
    ShmSlot& slot = segment_->slot(st->index);
    int rc = LockMutex(&slot.mu, deadline, segment_->pi());
    if (rc == EOWNERDEAD) {
      // The holder died (its holder_pid is still set and is reported
      // below), or a binder died after trylocking the slot (holder_pid is
      // clear: nothing to report). Either way the mutex must be made
      // consistent now: unlocking it as it is would turn it into
      // ENOTRECOVERABLE for every process, forever.
      rc = pthread_mutex_consistent(&slot.mu);
      if (rc != 0) {
        pthread_mutex_unlock(&slot.mu);
        return MutexError(rc, key, "pthread_mutex_consistent");
      }
    } else if (rc == EBUSY || rc == ETIMEDOUT) {
      return false;
    } else if (rc == EDEADLK) {
      // This thread already holds the resource through another Key. It
      // cannot release while it waits here, so no wait can succeed.
      if (deadline.is_never()) {
        return StoreError(absl::StatusCode::kFailedPrecondition, Describe(),
                          key.resource(),
                          "self-deadlock: this thread already holds the lock "
                          "through another Lock object, and a wait without a "
                          "timeout would never end");
      }
      if (!deadline.has_passed()) {
        const struct timespec ts = deadline.ToMonotonicTimespec();
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
        }
      }
      return false;
    } else if (rc != 0) {
      return MutexError(rc, key, "locking its slot");
    }
    if (slot.generation != st->generation) {
      // The slot was rebound to another name while this Key did not hold
      // it: let go and look the name up again.
      pthread_mutex_unlock(&slot.mu);
      TakeState(key);
      st = nullptr;
      continue;
    }
    key.set_previous_owner_died(slot.holder_pid != 0);
    slot.holder_pid = CurrentPid();
    key.set_fence(++slot.fence);
    st->owner_tid = CurrentTid();
    st->owner_pid = CurrentPid();
    st->held = true;
    return true;
  }
  return StoreError(absl::StatusCode::kUnavailable, Describe(), key.resource(),
                    absl::StrCat("its slot was taken for other names ", kMaxRebinds,
                                 " times in a row; the table is too small "
                                 "(raise the `capacity` DSN option)"));
}

absl::StatusOr<WaitWord> ShmMutexStore::GetWaitWord(Key& key) {
  // A lock here belongs to the thread that took it, so an async waiter
  // cannot use a helper thread: it needs the word, and must try on its own.
  if (segment_->pi()) {
    // A PI mutex is handed over by the kernel (FUTEX_UNLOCK_PI) to sleepers
    // in FUTEX_LOCK_PI only; a plain futex sleeper would never be woken.
    return StoreError(absl::StatusCode::kFailedPrecondition, Describe(), key.resource(),
                      "async waits are not available on pi=true segments");
  }
  if (absl::Status s = RobustMutexFutexSelfTest(); !s.ok()) {
    return StoreError(absl::StatusCode::kFailedPrecondition, Describe(), key.resource(),
                      s.message());
  }
  auto* st = state(key);
  if (st == nullptr) {
    absl::StatusOr<ShmKeyState*> bound = Bind(key, Deadline::Past());
    if (!bound.ok()) return bound.status();
    st = *bound;
  }
  WaitWord w;
  w.word = MutexFutexWord(&segment_->slot(st->index).mu);
  w.owner_mask = kFutexTidMask;
  w.waiters_bit = kFutexWaitersBit;
  w.shared = true;
  return w;
}

absl::Status ShmMutexStore::Delete(Key& key) {
  auto* st = state(key);
  if (st == nullptr || !st->held) return absl::OkStatus();
  // A pthread mutex may only be unlocked by the thread that locked it; for
  // a robust mutex glibc refuses with EPERM, for which the slot's state
  // would already have been changed. Check first.
  if (st->owner_tid != CurrentTid()) {
    return StoreError(
        absl::StatusCode::kFailedPrecondition, Describe(), key.resource(),
        absl::StrCat("released from thread ", CurrentTid(), " but acquired by thread ",
                     st->owner_tid,
                     " (or before a fork); a shm lock must be released by the "
                     "thread that acquired it. The lock stays held until that "
                     "thread releases it or exits"));
  }
  ShmSlot& slot = segment_->slot(st->index);
  // Cleared before the unlock: a holder that dies after this line is not
  // reported as dead, since its release had begun.
  slot.holder_pid = 0;
  int rc = pthread_mutex_unlock(&slot.mu);
  st->held = false;
  if (rc != 0) return MutexError(rc, key, "pthread_mutex_unlock");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::shared_ptr<Store>> NewShmStore(const ShmStoreOptions& options) {
  if (!ValidSegmentName(options.name)) return BadSegmentName(options.name);
  if (options.capacity < 1 || options.capacity > kShmMaxCapacity) {
    return absl::InvalidArgumentError(
        absl::StrCat("ipclock: shm://", options.name, ": capacity ", options.capacity,
                     " is out of range 1..", kShmMaxCapacity));
  }
  if ((options.mode & ~static_cast<mode_t>(0777)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ipclock: shm://", options.name, ": mode must be a permission mode (0 to 0777)"));
  }
  if (absl::Status s = GuardRemoveIpc(IpcKind::kPosixShm, "", options.remove_ipc,
                                      absl::StrCat("shm://", options.name));
      !s.ok()) {
    return s;
  }
  absl::StatusOr<std::shared_ptr<Segment>> segment = OpenSegment(options);
  if (!segment.ok()) return segment.status();
  if (absl::Status s = (*segment)->CheckLinked(""); !s.ok()) return s;
  return std::make_shared<ShmMutexStore>(*std::move(segment));
}

absl::Status RemoveShmSegment(absl::string_view name) {
  if (!ValidSegmentName(name)) return BadSegmentName(name);
  const std::string shm_name = absl::StrCat("/ipclock.", name);
  if (shm_unlink(shm_name.c_str()) != 0) {
    return ErrnoError(errno, absl::StrCat("shm://", name), "",
                      absl::StrCat("shm_unlink ", shm_name));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<Store>> ShmStoreFromDsn(Dsn& dsn,
    const StoreOptions& store_options) {
  if (!dsn.has_authority() || !dsn.user().empty() || dsn.has_password() ||
      dsn.port() != 0 || !dsn.path().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ipclock: bad DSN \"", dsn.redacted(),
        "\": expected shm://NAME with NAME of [A-Za-z0-9._-]{1,200}"));
  }
  ShmStoreOptions options;
  options.name = dsn.host();
  if (!ValidSegmentName(options.name)) return BadSegmentName(options.name);
  absl::StatusOr<unsigned> mode = dsn.TakeMode("mode", options.mode);
  if (!mode.ok()) return mode.status();
  options.mode = static_cast<mode_t>(*mode);
  absl::StatusOr<long> capacity =
      dsn.TakeInt("capacity", options.capacity, 1, kShmMaxCapacity);
  if (!capacity.ok()) return capacity.status();
  options.capacity = static_cast<uint32_t>(*capacity);
  absl::StatusOr<bool> pi = dsn.TakeBool("pi", options.priority_inheritance);
  if (!pi.ok()) return pi.status();
  options.priority_inheritance = *pi;
  absl::StatusOr<RemoveIpcPolicy> remove_ipc =
      TakeRemoveIpcPolicy(dsn, store_options.remove_ipc);
  if (!remove_ipc.ok()) return remove_ipc.status();
  options.remove_ipc = *remove_ipc;
  if (absl::Status s = dsn.CheckAllOptionsUsed(); !s.ok()) return s;
  return NewShmStore(options);
}

// --- Read-only listing (`ipclock list`) ------------------------------------------

namespace {

// A slot being rebound while we copy it could show one name's bytes under
// another's length; its generation changes when that happens, so a copy is
// kept only if the generation read before and after agree.
constexpr int kListCopyAttempts = 3;

template <typename T>
T LoadShared(const T& field) {
  return __atomic_load_n(&field, __ATOMIC_ACQUIRE);
}

// Copies slot `i` if it is bound; false for a free slot.
bool CopySlot(const ShmSlot& slot, uint32_t i, ShmSlotInfo* out) {
  for (int attempt = 0; attempt < kListCopyAttempts; ++attempt) {
    const uint64_t generation = LoadShared(slot.generation);
    if (LoadShared(slot.state) != kShmSlotBound) return false;
    const uint32_t kind = LoadShared(slot.name_kind);
    const uint32_t len = LoadShared(slot.name_len);
    uint8_t name[kShmInlineName];
    memcpy(name, slot.name, sizeof(name));
    out->index = i;
    out->holder_pid = LoadShared(slot.holder_pid);
    out->fence = LoadShared(slot.fence);
    out->refs = slot.refs.load(std::memory_order_relaxed);
    if (kind == kShmNameSha256) {
      Sha256Digest digest;
      memcpy(digest.data(), name, digest.size());
      out->name = absl::StrCat("sha256:", ToHex(digest));
    } else {
      out->name.assign(reinterpret_cast<const char*>(name),
                       len <= kShmInlineName ? len : kShmInlineName);
    }
    if (LoadShared(slot.generation) == generation) break;
  }
  out->holder_alive = out->holder_pid != 0 && !ProcessIsGone(out->holder_pid, 0);
  return true;
}

}  // namespace

absl::StatusOr<std::vector<ShmSlotInfo>> ListShmSlots(absl::string_view name) {
  if (!ValidSegmentName(name)) return BadSegmentName(name);
  const std::string describe = absl::StrCat("shm://", name);
  const std::string path = absl::StrCat("/dev/shm/ipclock.", name);
  const std::string shm_name = absl::StrCat("/ipclock.", name);
  ScopedFd fd(shm_open(shm_name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0));
  if (!fd.valid()) {
    return ErrnoError(errno, describe, "", absl::StrCat("shm_open ", path));
  }
  struct stat st;
  if (fstat(fd.get(), &st) != 0) {
    return ErrnoError(errno, describe, "", absl::StrCat("fstat ", path));
  }
  const size_t file_size = static_cast<size_t>(st.st_size);
  if (PublishedMagic(fd.get(), file_size) != kShmMagic) {
    return StoreError(absl::StatusCode::kFailedPrecondition, describe, "",
                      absl::StrCat(path, " is not an initialized ipclock segment"));
  }
  void* head = mmap(nullptr, sizeof(ShmHeader), PROT_READ, MAP_SHARED, fd.get(), 0);
  if (head == MAP_FAILED) {
    return ErrnoError(errno, describe, "", absl::StrCat("mmap ", path));
  }
  const ShmHeader& h = *static_cast<const ShmHeader*>(head);
  // Whatever pi setting the segment has is fine for reading it.
  absl::Status valid = ValidateHeader(
      h, file_size, (h.flags & kShmFlagPriorityInheritance) != 0, describe, path);
  const uint32_t capacity = h.capacity;
  munmap(head, sizeof(ShmHeader));
  if (!valid.ok()) return valid;

  const size_t size = SegmentSize(capacity);
  void* base = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd.get(), 0);
  if (base == MAP_FAILED) {
    return ErrnoError(errno, describe, "", absl::StrCat("mmap ", path));
  }
  const auto* slots = reinterpret_cast<const ShmSlot*>(
      static_cast<const char*>(base) + sizeof(ShmHeader));
  std::vector<ShmSlotInfo> out;
  for (uint32_t i = 0; i < capacity; ++i) {
    ShmSlotInfo info;
    if (CopySlot(slots[i], i, &info)) out.push_back(std::move(info));
  }
  munmap(base, size);
  return out;
}

const StoreDriver kShmDriver = {&ShmStoreFromDsn, &ListShmLocks};

}  // namespace ipclock
