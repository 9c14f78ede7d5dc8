// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Sending a ZooKeeper multi-op (zoo_amulti) clear of a fault of the C client.
//
// In the ZooKeeper C client (3.8, Debian 12's), once one sub-request of a
// multi-op fails to set up, every later one skips its setup but still frees
// its request's path: an uninitialised stack slot, which in practice holds
// the previous sub-request's path, the caller's buffer. The caller frees it
// again: a double free (under ASan, an alloc-dealloc mismatch, since the
// buffer came from operator new). Every sub-request fails to set up once the
// session has expired or its authentication failed, and the first of them
// answers ZINVALIDSTATE: so a multi-op of two or more sub-requests is not
// sent on a session in that state, and ZINVALIDSTATE is returned as the
// client would have.
//
// The state can still turn between that check and the client's own (its I/O
// thread learns of an expiry on its own time). For that window the client is
// given copies of the paths made with malloc(), and when the call fails the
// copies are kept for the life of the process instead of freed: a stray
// free() then lands on a block that nothing frees again.

#ifndef IPCLOCK_STORES_ZOOKEEPER_MULTI_H_
#define IPCLOCK_STORES_ZOOKEEPER_MULTI_H_

#include <vector>

#include "platform/zookeeper_calls.h"

namespace ipclock {

// zoo_amulti(zh, ops, results, completion, data), as above. `ops` are made
// by zoo_*_op_init; their path pointers are replaced by the copies for the
// length of the call. `results` has ops.size() entries.
int SendZkMulti(zhandle_t* zh, std::vector<zoo_op_t>& ops, zoo_op_result_t* results,
                void_completion_t completion, const void* data);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_ZOOKEEPER_MULTI_H_
