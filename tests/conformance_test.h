// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the source files of the conformance suite share: the store under
// test and what each asks of it; and the tests that live in
// conformance_test_capabilities.cc, for conformance_test.cc's table.

#ifndef IPCLOCK_TESTS_CONFORMANCE_TEST_H_
#define IPCLOCK_TESTS_CONFORMANCE_TEST_H_

#include <string>

#include "ipclock/lock.h"
#include "ipclock/store.h"

namespace ipclock_test {

// The store under test: argv[1] with {tmpdir} expanded once.
extern std::string g_dsn;

// Lock::CheckAcquired() as a bool (IsStillHeld).
bool Held(ipclock::Lock& lock);

// The store's capabilities. Tests check them through Caps() before they make
// any object: skip() longjmps out of the test, past every destructor.
ipclock::Capabilities Caps();
// Whether locks of the store exclude other processes.
bool CrossProcess();

// The tests of conformance_test_capabilities.cc, in one declaration, for the suite's table.
void KilledWaiterDoesNotBlockTheNext(void**), KilledHolderWithAWaiterIsReported(void**),
    FairStoreServesTheWaiterFirst(void**), FairStoreLetsNoReaderPastAWaitingWriter(void**),
    CancelledWaitLeavesTheQueue(void**),
    FenceGrows(void**), ExpiresAfterTtl(void**), NearZeroRefreshReportsExpiry(void**),
    SavingExpiredKeyLeavesNothing(void**), ReadersCoexist(void**),
    ReaderConflictsWithWriter(void**), SoleReaderPromotes(void**), TwoReadersCannotPromote(void**),
    WriterDemotesAndLetsReadersIn(void**), PermitsBoundHolders(void**),
    PermitsRefusedWithoutCounting(void**);

}  // namespace ipclock_test

#endif  // IPCLOCK_TESTS_CONFORMANCE_TEST_H_
