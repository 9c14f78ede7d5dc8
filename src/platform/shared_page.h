// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A shared mapping of the first page of a file, read and written without
// system calls, that a truncation of the file cannot turn into a crash.
//
// The problem. Touching a page of a MAP_SHARED file mapping that lies past
// the end of the file raises SIGBUS, and by default SIGBUS kills the
// process. Any process that may write the file can truncate it at any time
// (`exec 9>file`, the idiom flock(1)'s manual teaches, truncates), and no
// lease, lock or seal keeps it from doing so on an ordinary file: checking
// the size with fstat(2) first only moves the race. A full filesystem can do
// the same where touching a page must allocate a block.
//
// The guard. `Map()` installs a SIGBUS handler, keeping whatever action was
// there before. When a SIGBUS comes from the kernel for an address on one of
// these pages, the handler maps a private zero page over it (MAP_FIXED) and
// marks the page lost, and the interrupted copy finishes on the zero page;
// `Read()` and `Write()` then return false and the caller falls back to
// pread/pwrite, which report a short file as such. Every other SIGBUS
// (another mapping of the program, kill -BUS) goes to the previous action:
// the program's or a sanitizer's handler, or the default (the handler
// restores it, and the fault repeats or the signal is raised again).
//
// Caveats:
//   * A program that puts its own SIGBUS handler in place of ours, without
//     chaining to it, takes the guard away from the pages mapped until then:
//     a truncation of such a file then kills it (or goes to its handler) as
//     it would without ipclock's mapping. The next `Map()` installs the guard
//     again, in front of the program's handler, which it then chains to.
//   * The handler runs for synchronous faults on the faulting thread. A
//     thread that blocks SIGBUS gets the kernel's default action for a
//     fault regardless of any handler (POSIX leaves this undefined).
//   * Mappings are inherited by fork() children with the handler, and gone
//     after exec.

#ifndef IPCLOCK_PLATFORM_SHARED_PAGE_H_
#define IPCLOCK_PLATFORM_SHARED_PAGE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

namespace ipclock {

namespace internal {
struct PageSlot;
}  // namespace internal

class SharedFilePage {
 public:
  // Maps the first page of `fd`, which must be open for reading and writing
  // and hold at least one byte (the page must exist when first touched, or
  // it is lost at once). 0 or an errno: sigaction's if the guard cannot be
  // installed, ENOMEM when too many pages are mapped, or mmap's own.
  [[nodiscard]] static int Map(int fd, std::unique_ptr<SharedFilePage>* out);

  SharedFilePage(const SharedFilePage&) = delete;
  SharedFilePage& operator=(const SharedFilePage&) = delete;
  ~SharedFilePage();

  // Copies `size` bytes from `offset` of the page into `out` (one copy, so
  // that a caller parses what it read once, whatever another process writes
  // meanwhile). False if the page was cut off the file before or during the
  // copy: `out` then holds nothing of the file.
  bool Read(size_t offset, void* out, size_t size) {
    if (lost()) return false;
    memcpy(out, page_ + offset, size);
    // The handler runs on this thread in the middle of the copy: keep the
    // compiler from reading the mark before the copy is done.
    std::atomic_signal_fence(std::memory_order_seq_cst);
    return !lost();
  }
  // Copies `data` to `offset` of the page. False as for `Read()`: the bytes
  // did not reach the file.
  bool Write(size_t offset, const void* data, size_t size) {
    if (lost()) return false;
    memcpy(page_ + offset, data, size);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    return !lost();
  }

  // The page itself, for words that processes change with atomic
  // operations in place (a copy would not do). A truncation that takes the
  // page away swaps in a private zero page under the operation, as for
  // Read() and Write(): the operation completes there, and lost() says so.
  void* data() const { return page_; }

  // True once a truncation took the page away; it stays lost.
  bool lost() const { return lost_->load(std::memory_order_relaxed) != 0; }

  // The page size (the most a page holds).
  static size_t Size();

 private:
  SharedFilePage(char* page, internal::PageSlot* slot,
                 const std::atomic<uint32_t>* lost)
      : page_(page), slot_(slot), lost_(lost) {}

  char* page_;
  internal::PageSlot* slot_;
  const std::atomic<uint32_t>* lost_;  // the slot's mark, set by the handler
};

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_SHARED_PAGE_H_
