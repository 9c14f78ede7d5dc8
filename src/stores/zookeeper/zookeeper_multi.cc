// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/zookeeper/zookeeper_multi.h"

#include <stdlib.h>
#include <string.h>

#include <mutex>

namespace ipclock {
namespace {

// Where a sub-request keeps its path, by the op's type (a union).
const char** PathOf(zoo_op_t& op) {
  switch (op.type) {
    case ZOO_DELETE_OP:
      return &op.delete_op.path;
    case ZOO_SETDATA_OP:
      return &op.set_op.path;
    case ZOO_CHECK_OP:
      return &op.check_op.path;
    default:  // the create ops
      return &op.create_op.path;
  }
}

// Copies a failed call handed to the client, kept reachable (so that a leak
// checker does not count them) and never freed: see the header.
void KeepForever(std::vector<char*>& copies) {
  static std::mutex* mu = new std::mutex;
  static std::vector<char*>* kept = new std::vector<char*>;
  std::lock_guard<std::mutex> guard(*mu);
  kept->insert(kept->end(), copies.begin(), copies.end());
}

}  // namespace

int SendZkMulti(zhandle_t* zh, std::vector<zoo_op_t>& ops, zoo_op_result_t* results,
                void_completion_t completion, const void* data) {
  if (ops.size() < 2) {
    return ZooKeeper().zoo_amulti(zh, static_cast<int>(ops.size()), ops.data(), results,
                                  completion, data);
  }
  const int state = ZooKeeper().zoo_state(zh);
  if (state == *ZooKeeper().ZOO_EXPIRED_SESSION_STATE ||
      state == *ZooKeeper().ZOO_AUTH_FAILED_STATE) {
    return ZINVALIDSTATE;
  }
  std::vector<const char*> originals(ops.size());
  std::vector<char*> copies(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const char** path = PathOf(ops[i]);
    originals[i] = *path;
    copies[i] = strdup(*path);
    if (copies[i] == nullptr) {
      for (size_t j = 0; j < i; ++j) {
        *PathOf(ops[j]) = originals[j];
        free(copies[j]);
      }
      return ZSYSTEMERROR;
    }
    *path = copies[i];
  }
  const int rc = ZooKeeper().zoo_amulti(zh, static_cast<int>(ops.size()), ops.data(), results,
                                        completion, data);
  for (size_t i = 0; i < ops.size(); ++i) *PathOf(ops[i]) = originals[i];
  if (rc == ZOK) {
    // Every sub-request was set up and serialized: the client holds no
    // path of ours and freed none.
    for (char* copy : copies) free(copy);
  } else {
    KeepForever(copies);
  }
  return rc;
}

}  // namespace ipclock
