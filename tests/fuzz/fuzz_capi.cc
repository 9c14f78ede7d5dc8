// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Fuzzes the C API's argument handling: random sequences of calls on
// in-memory stores with random names, lengths, options, flags, waits and
// NULLs. Every call must return one of its documented values and every
// message function a string, whatever came before; handles are used after
// their store was closed, as the API allows. Waits are at most 5 ms, and a
// wait without a limit is only ever asked together with IPCLOCK_NONBLOCK,
// since one thread holding two handles on a name would wait on itself.

#include <errno.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "ipclock/c.h"

namespace {

constexpr int kStores = 4;
constexpr int kLocks = 16;

class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool empty() const { return pos_ >= size_; }
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  int64_t Int() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | Byte();
    return static_cast<int64_t>(v);
  }
  // Up to 255 bytes, any values, NULs included.
  std::string Bytes() {
    size_t n = Byte();
    std::string out;
    while (n-- > 0 && !empty()) out.push_back(static_cast<char>(Byte()));
    return out;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

void Check(bool ok) {
  if (!ok) abort();
}

bool IsErrno(int rc) { return rc < 0 && rc >= -4095; }

void CheckMessage(const char* text) { Check(text != nullptr); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  ipclock_store* stores[kStores] = {};
  ipclock_lock* locks[kLocks] = {};
  while (!in.empty()) {
    const uint8_t op = in.Byte();
    ipclock_store*& store = stores[in.Byte() % kStores];
    ipclock_lock*& lock = locks[in.Byte() % kLocks];
    switch (op % 14) {
      case 0: {  // open: "in-memory" with a random tail, or NULLs, by either function
        if (store != nullptr) ipclock_store_close(store);
        store = nullptr;
        const uint8_t how = in.Byte();
        std::string dsn = (how & 1) ? "in-memory" : "memory";
        if (how & 2) dsn += "?" + in.Bytes();
        char* why = nullptr;
        // ipclock_store_open_kinds() among in-memory and shm (a shm DSN is
        // refused: the tail never names shm), or with a NULL kind.
        const ipclock_store_kind* kinds[] = {&ipclock_kind_shm, &ipclock_kind_in_memory,
                                             nullptr};
        const size_t nkinds = (how & 64) ? 3 : 1 + (in.Byte() & 1);
        int rc = (how & 32) ? ipclock_store_open_kinds((how & 4) ? nullptr : dsn.c_str(),
                                                       kinds, nkinds, nullptr,
                                                       (how & 8) ? nullptr : &store,
                                                       (how & 16) ? nullptr : &why)
                            : ipclock_store_open((how & 4) ? nullptr : dsn.c_str(), nullptr,
                                                 (how & 8) ? nullptr : &store,
                                                 (how & 16) ? nullptr : &why);
        Check(rc == 0 || IsErrno(rc));
        Check((rc == 0) == (store != nullptr));
        // A failure has a message, unless the caller did not ask for one.
        Check((how & 16) || (rc == 0) == (why == nullptr));
        free(why);
        break;
      }
      case 1:
        ipclock_store_close(store);
        store = nullptr;
        break;
      case 2: {  // create
        if (lock != nullptr) ipclock_lock_destroy(lock);
        lock = nullptr;
        std::string name = in.Bytes();
        const uint8_t how = in.Byte();
        ipclock_lock_options opts = {};
        opts.ttl_ms = (how & 1) ? in.Int() : static_cast<int8_t>(in.Byte());
        opts.permits = (how & 2) ? static_cast<uint32_t>(in.Int()) : in.Byte() % 4;
        opts.keep_on_destroy = (how & 4) ? 1 : 0;
        // A NULL name is only ever passed with its length, never a length
        // past the bytes we own.
        const char* ptr = (how & 8) ? nullptr : name.data();
        char* why = nullptr;
        int rc = ipclock_lock_create(store, ptr, name.size(),
                                     (how & 16) ? nullptr : &opts, &lock, &why);
        Check(rc == 0 || IsErrno(rc));
        Check((rc == 0) == (lock != nullptr));
        Check((rc == 0) == (why == nullptr));
        free(why);
        break;
      }
      case 3:
        ipclock_lock_destroy(lock);
        lock = nullptr;
        break;
      case 4: {  // acquire
        unsigned flags = in.Byte();
        int64_t wait_ms = in.Byte() % 6;
        if ((flags & IPCLOCK_NONBLOCK) && (in.Byte() & 1)) wait_ms = -1 - in.Byte();
        int rc = ipclock_lock_acquire(lock, flags, wait_ms);
        Check(rc == 0 || rc == IPCLOCK_BUSY || IsErrno(rc));
        if (lock == nullptr) Check(rc == -EINVAL);
        break;
      }
      case 5: {
        int rc = ipclock_lock_refresh(lock, in.Int());
        Check(rc == 0 || IsErrno(rc));
        break;
      }
      case 6: {
        int rc = ipclock_lock_release(lock);
        Check(rc == 0 || IsErrno(rc));
        if (rc == 0 && lock != nullptr) Check(ipclock_lock_is_acquired(lock) == 0);
        break;
      }
      case 7: {
        int held = ipclock_lock_is_acquired(lock);
        int expired = ipclock_lock_is_expired(lock);
        int died = ipclock_lock_previous_owner_died(lock);
        Check(lock == nullptr ? held == -EINVAL : (held == 0 || held == 1));
        Check(lock == nullptr ? expired == -EINVAL : (expired == 0 || expired == 1));
        Check(lock == nullptr ? died == -EINVAL : (died == 0 || died == 1));
        break;
      }
      case 8: {
        int64_t ms = ipclock_lock_remaining_ms(lock);
        Check(lock == nullptr ? ms == -EINVAL : ms >= -1);
        break;
      }
      case 9: {
        uint64_t fence = 0;
        int rc = ipclock_lock_fence(lock, (in.Byte() & 1) ? nullptr : &fence);
        Check(rc == 0 || rc == -ENODATA || rc == -EINVAL);
        break;
      }
      case 10:
        CheckMessage(ipclock_lock_error(lock));
        break;
      case 11:
        CheckMessage(ipclock_store_name(store));
        CheckMessage(ipclock_store_describe(store));
        Check(store != nullptr || ipclock_store_capabilities(store) == 0);
        break;
      case 12:
        CheckMessage(ipclock_strerror(static_cast<int>(in.Int())));
        break;
      case 13: {
        int rc = ipclock_lock_check(lock);
        Check(rc == 0 || IsErrno(rc));
        if (lock == nullptr) Check(rc == -EINVAL);
        break;
      }
    }
  }
  for (ipclock_lock* l : locks) ipclock_lock_destroy(l);
  for (ipclock_store* s : stores) ipclock_store_close(s);
  return 0;
}
