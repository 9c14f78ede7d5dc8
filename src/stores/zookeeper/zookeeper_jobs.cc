// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The ZooKeeper session's background work (zookeeper_session.h): deletes
// that nobody waits for, retried after a reconnection and dropped once the
// session expired (the servers then delete ephemeral nodes themselves). It
// runs on the client's completion thread, from session events and from the
// completions of the requests it sends.

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "stores/zookeeper/zookeeper_session.h"
#include "platform/process_id.h"
#include "stores/zookeeper/zookeeper_multi.h"

namespace ipclock {

// --- Background jobs -----------------------------------------------------------------

// Completions of background jobs (on the client's completion thread).
struct ZkJobCompletions {
  static void AfterDeletes(int rc, const void* data);
  static void AfterChildren(int rc, const struct String_vector* strings, const void* data);
  static void AfterData(int rc, const char* value, int len, const struct Stat* stat,
                        const void* data);
};

struct JobBox {
  ZkSession* session;
  std::shared_ptr<ZkSession::Job> job;
  std::vector<zoo_op_t> zops;
  std::vector<zoo_op_result_t> zresults;
};

void ZkSession::DeleteLater(std::vector<ZkOp> deletes) {
  if (deletes.empty() || pid_ != CurrentPid()) return;
  auto job = std::make_shared<Job>();
  job->deletes = std::move(deletes);
  StartOrQueue(std::move(job));
}

void ZkSession::DeleteTaggedLater(const std::string& parent, const std::string& tag) {
  if (pid_ != CurrentPid()) return;
  auto job = std::make_shared<Job>();
  job->parent = parent;
  job->tag = tag;
  StartOrQueue(std::move(job));
}

void ZkSession::DeleteIfDataLater(const std::string& path, const std::string& data) {
  if (pid_ != CurrentPid()) return;
  auto job = std::make_shared<Job>();
  job->path = path;
  job->data = data;
  StartOrQueue(std::move(job));
}

void ZkSession::StartJobsLocked(zhandle_t* zh) {
  std::vector<std::shared_ptr<Job>> jobs;
  jobs.swap(jobs_);
  for (std::shared_ptr<Job>& job : jobs) StartJob(zh, std::move(job));
}

void ZkSession::StartJob(zhandle_t* zh, std::shared_ptr<Job> job) {
  auto* box = new JobBox{this, job, {}, {}};
  int rc;
  if (!job->tag.empty()) {
    rc = ZooKeeper().zoo_aget_children(zh, job->parent.c_str(), 0, &ZkJobCompletions::AfterChildren,
                                       box);
  } else if (!job->path.empty()) {
    rc = ZooKeeper().zoo_aget(zh, job->path.c_str(), 0, &ZkJobCompletions::AfterData, box);
  } else {
    box->zops.resize(job->deletes.size());
    box->zresults.resize(job->deletes.size());
    for (size_t i = 0; i < job->deletes.size(); ++i) {
      ZooKeeper().zoo_delete_op_init(&box->zops[i], job->deletes[i].path.c_str(),
                                     job->deletes[i].version);
    }
    rc = SendZkMulti(zh, box->zops, box->zresults.data(), &ZkJobCompletions::AfterDeletes, box);
  }
  if (rc != ZOK) {
    delete box;
    // Not sent: keep it for the next connection (mu_ is held by callers).
    if (rc != ZINVALIDSTATE) jobs_.push_back(std::move(job));
  }
}

void ZkSession::StartOrQueue(std::shared_ptr<Job> job) {
  std::lock_guard<std::mutex> guard(mu_);
  if (expired()) return;
  if (connected()) {
    StartJob(zh_, std::move(job));
  } else {
    jobs_.push_back(std::move(job));
  }
}

void ZkJobCompletions::AfterDeletes(int rc, const void* data) {
  std::unique_ptr<JobBox> box(static_cast<JobBox*>(const_cast<void*>(data)));
  if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT) {
    box->session->StartOrQueue(std::move(box->job));
    return;
  }
  if (rc != ZOK && box->job->deletes.size() > 1) {
    // One of them was gone already (or changed): delete the others alone.
    for (size_t i = 0; i < box->zresults.size(); ++i) {
      const int err = box->zresults[i].err;
      if (err == ZNONODE || err == ZBADVERSION) continue;
      box->session->DeleteLater({box->job->deletes[i]});
    }
  }
}

void ZkJobCompletions::AfterChildren(int rc, const struct String_vector* strings,
                                     const void* data) {
  std::unique_ptr<JobBox> box(static_cast<JobBox*>(const_cast<void*>(data)));
  if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT) {
    box->session->StartOrQueue(std::move(box->job));
    return;
  }
  if (rc != ZOK || strings == nullptr) return;
  const std::string marker = absl::StrCat("-", box->job->tag, "-");
  std::vector<ZkOp> deletes;
  for (int32_t i = 0; i < strings->count; ++i) {
    absl::string_view child = strings->data[i];
    if (child.find(marker) == absl::string_view::npos) continue;
    ZkOp op;
    op.path = absl::StrCat(box->job->parent, "/", child);
    deletes.push_back(std::move(op));
  }
  for (ZkOp& op : deletes) box->session->DeleteLater({std::move(op)});
}

void ZkJobCompletions::AfterData(int rc, const char* value, int len, const struct Stat* stat,
                                 const void* data) {
  std::unique_ptr<JobBox> box(static_cast<JobBox*>(const_cast<void*>(data)));
  if (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT) {
    box->session->StartOrQueue(std::move(box->job));
    return;
  }
  if (rc != ZOK || stat == nullptr || value == nullptr ||
      absl::string_view(value, static_cast<size_t>(std::max(len, 0))) != box->job->data) {
    return;
  }
  ZkOp op;
  op.path = box->job->path;
  op.version = stat->version;
  box->session->DeleteLater({std::move(op)});
}

std::string ZkErrorText(int rc) {
  const char* name = "?";
  switch (rc) {
    case ZOK: name = "ZOK"; break;
    case ZCONNECTIONLOSS: name = "ZCONNECTIONLOSS"; break;
    case ZOPERATIONTIMEOUT: name = "ZOPERATIONTIMEOUT"; break;
    case ZBADARGUMENTS: name = "ZBADARGUMENTS"; break;
    case ZINVALIDSTATE: name = "ZINVALIDSTATE"; break;
    case ZMARSHALLINGERROR: name = "ZMARSHALLINGERROR"; break;
    case ZSYSTEMERROR: name = "ZSYSTEMERROR"; break;
    case ZNONODE: name = "ZNONODE"; break;
    case ZNOAUTH: name = "ZNOAUTH"; break;
    case ZBADVERSION: name = "ZBADVERSION"; break;
    case ZNODEEXISTS: name = "ZNODEEXISTS"; break;
    case ZNOTEMPTY: name = "ZNOTEMPTY"; break;
    case ZSESSIONEXPIRED: name = "ZSESSIONEXPIRED"; break;
    case ZINVALIDACL: name = "ZINVALIDACL"; break;
    case ZAUTHFAILED: name = "ZAUTHFAILED"; break;
    case ZCLOSING: name = "ZCLOSING"; break;
    case ZSESSIONMOVED: name = "ZSESSIONMOVED"; break;
    case ZTHROTTLEDOP: name = "ZTHROTTLEDOP"; break;
    case ZNOCHILDRENFOREPHEMERALS: name = "ZNOCHILDRENFOREPHEMERALS"; break;
    default: break;
  }
  if (rc == ZOPERATIONTIMEOUT) return "no answer in time (ZOPERATIONTIMEOUT)";
  return absl::StrCat(ZooKeeper().zerror(rc), " (", name, ")");
}

}  // namespace ipclock
