// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/shared_page.h"

#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <vector>

#include "platform/faults.h"

namespace ipclock {
namespace internal {

// Where the handler finds the mapped pages: blocks of slots that are never
// freed, linked through atomic pointers, so that the handler can walk them
// without a lock while other threads add pages.
struct PageSlot {
  std::atomic<uintptr_t> page{0};  // 0: free
  std::atomic<uint32_t> lost{0};
};

namespace {

constexpr size_t kSlotsPerBlock = 256;

struct SlotBlock {
  PageSlot slots[kSlotsPerBlock];
  std::atomic<SlotBlock*> next{nullptr};
};

SlotBlock g_first_block;

// Guards slot allocation and the handler's installation; never taken in
// the handler.
std::mutex& RegistryMutex() {
  static std::mutex* mu = new std::mutex();
  return *mu;
}
std::vector<PageSlot*>& FreeSlots() {  // guarded by RegistryMutex()
  static std::vector<PageSlot*>* free_slots = new std::vector<PageSlot*>();
  return *free_slots;
}
SlotBlock* g_last_block = &g_first_block;  // guarded by RegistryMutex()
size_t g_used_in_last = 0;                 // guarded by RegistryMutex()
// More mapped pages than this and Map() says ENOMEM (the caller then reads
// and writes the file instead): the handler's walk stays short.
constexpr size_t kMaxBlocks = 64;
size_t g_blocks = 1;  // guarded by RegistryMutex()

// The action that was installed before ours, for PassOn(). Two slots, so
// that installing again (see EnsureGuard) never rewrites the one a handler
// running on another thread may be reading.
struct sigaction g_previous[2];
std::atomic<int> g_previous_slot{0};

size_t PageSize() {
  static const size_t size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

// Hands a SIGBUS that is not ours to the action that was there before.
void PassOn(int sig, siginfo_t* info, void* context) {
  const struct sigaction& previous = g_previous[g_previous_slot.load(std::memory_order_acquire)];
  if ((previous.sa_flags & SA_SIGINFO) != 0) {
    previous.sa_sigaction(sig, info, context);
    return;
  }
  if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(sig);
    return;
  }
  // Default or ignore: put it back. A fault then repeats when this handler
  // returns and gets the kernel's action (which kills even an ignored
  // fault); a signal sent with kill(2) is raised again under the default
  // action, and stays dropped if it was ignored.
  sigaction(SIGBUS, &previous, nullptr);
  if (info->si_code <= 0 && previous.sa_handler == SIG_DFL) raise(sig);
}

void OnSigbus(int sig, siginfo_t* info, void* context) {
  // si_code > 0: raised by the kernel for a fault, with the address.
  if (info->si_code > 0) {
    const uintptr_t page =
        reinterpret_cast<uintptr_t>(info->si_addr) & ~(PageSize() - 1);
    for (SlotBlock* b = &g_first_block; b != nullptr;
         b = b->next.load(std::memory_order_acquire)) {
      for (PageSlot& slot : b->slots) {
        if (slot.page.load(std::memory_order_acquire) != page) continue;
        // The raw system call: no interceptor or wrapper state in a handler.
        long r = syscall(SYS_mmap, reinterpret_cast<void*>(page), PageSize(),
                         PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (r == -1) break;  // cannot recover: let the previous action have it
        slot.lost.store(1, std::memory_order_relaxed);
        return;
      }
    }
  }
  PassOn(sig, info, context);
}

bool IsOurs(const struct sigaction& action) {
  return (action.sa_flags & SA_SIGINFO) != 0 && action.sa_sigaction == OnSigbus;
}

// Installs the handler if it is not the installed one: at the first Map(),
// and again at the next Map() after the program (or a test runner) put
// another in its place without chaining to ours, which also guards again the
// pages mapped before. The action found is kept for PassOn().
int EnsureGuard() {
  struct sigaction current;
  if (sigaction(SIGBUS, nullptr, &current) != 0) return errno;
  if (IsOurs(current)) return 0;
  std::lock_guard<std::mutex> guard(RegistryMutex());
  if (sigaction(SIGBUS, nullptr, &current) != 0) return errno;
  if (IsOurs(current)) return 0;
  const int spare = 1 - g_previous_slot.load(std::memory_order_relaxed);
  g_previous[spare] = current;
  g_previous_slot.store(spare, std::memory_order_release);
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = OnSigbus;
  // SA_ONSTACK: on a thread with an alternate stack, use it as the
  // program's own handler would.
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGBUS, &sa, nullptr) != 0) return errno;
  return 0;
}

PageSlot* TakeSlot() {
  std::lock_guard<std::mutex> guard(RegistryMutex());
  std::vector<PageSlot*>& free_slots = FreeSlots();
  if (!free_slots.empty()) {
    PageSlot* slot = free_slots.back();
    free_slots.pop_back();
    return slot;
  }
  if (g_used_in_last == kSlotsPerBlock) {
    if (g_blocks == kMaxBlocks) return nullptr;
    SlotBlock* block = new SlotBlock();
    g_last_block->next.store(block, std::memory_order_release);
    g_last_block = block;
    g_used_in_last = 0;
    ++g_blocks;
  }
  return &g_last_block->slots[g_used_in_last++];
}

void GiveBackSlot(PageSlot* slot) {
  slot->page.store(0, std::memory_order_release);
  slot->lost.store(0, std::memory_order_relaxed);
  std::lock_guard<std::mutex> guard(RegistryMutex());
  FreeSlots().push_back(slot);
}

}  // namespace
}  // namespace internal

size_t SharedFilePage::Size() { return internal::PageSize(); }

int SharedFilePage::Map(int fd, std::unique_ptr<SharedFilePage>* out) {
  if (int err = internal::EnsureGuard(); err != 0) return err;
  if (int err = TakeFault(FaultPoint::kMmap); err != 0) return err;
  internal::PageSlot* slot = internal::TakeSlot();
  if (slot == nullptr) return ENOMEM;
  void* p = mmap(nullptr, internal::PageSize(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    internal::GiveBackSlot(slot);
    return err;
  }
  // Registered before the first touch, so that even a page that is already
  // past the end of the file is caught.
  slot->page.store(reinterpret_cast<uintptr_t>(p), std::memory_order_release);
  out->reset(new SharedFilePage(static_cast<char*>(p), slot, &slot->lost));
  return 0;
}

SharedFilePage::~SharedFilePage() {
  // Out of the registry first: once unmapped, the address may be reused by
  // a mapping that is not ours.
  internal::PageSlot* slot = slot_;
  char* page = page_;
  slot->page.store(0, std::memory_order_release);
  // munmap of a mapping made above fails only for bad arguments.
  (void)munmap(page, internal::PageSize());
  internal::GiveBackSlot(slot);
}

}  // namespace ipclock
