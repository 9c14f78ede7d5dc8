// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Loads and stores of words in memory that other processes map too. A word
// written by another process (or by a program built with another compiler)
// is no std::atomic object, so these use the compiler's atomic built-ins on
// the plain word. Acquire/release by default; a caller whose protocol needs
// a single order over several words passes __ATOMIC_SEQ_CST.

#ifndef IPCLOCK_PLATFORM_SHARED_WORD_H_
#define IPCLOCK_PLATFORM_SHARED_WORD_H_

namespace ipclock {

template <int kOrder = __ATOMIC_ACQUIRE, typename T>
T SharedLoad(const T* p) {
  return __atomic_load_n(p, kOrder);
}

template <int kOrder = __ATOMIC_RELEASE, typename T>
void SharedStore(T* p, T v) {
  __atomic_store_n(p, v, kOrder);
}

}  // namespace ipclock

#endif  // IPCLOCK_PLATFORM_SHARED_WORD_H_
