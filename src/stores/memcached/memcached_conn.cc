// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "stores/memcached/memcached_conn.h"

#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/dsn.h"
#include "core/store_errors.h"
#include "platform/errors.h"
#include "platform/process_id.h"

namespace ipclock {

bool IsMemcachedServerTrouble(memcached_return_t rc) {
  switch (rc) {
    case MEMCACHED_CONNECTION_FAILURE:
    case MEMCACHED_CONNECTION_SOCKET_CREATE_FAILURE:
    case MEMCACHED_HOST_LOOKUP_FAILURE:
    case MEMCACHED_WRITE_FAILURE:
    case MEMCACHED_READ_FAILURE:
    case MEMCACHED_UNKNOWN_READ_FAILURE:
    case MEMCACHED_PROTOCOL_ERROR:
    case MEMCACHED_SERVER_ERROR:
    case MEMCACHED_ERRNO:
    case MEMCACHED_TIMEOUT:
    case MEMCACHED_SERVER_MARKED_DEAD:
    case MEMCACHED_SERVER_TEMPORARILY_DISABLED:
    case MEMCACHED_NO_SERVERS:
    case MEMCACHED_SOME_ERRORS:
    case MEMCACHED_FETCH_NOTFINISHED:
    case MEMCACHED_IN_PROGRESS:
      return true;
    default:
      return false;
  }
}

std::string MemcachedServerList(const MemcachedStoreOptions& options) {
  std::vector<std::string> parts;
  for (const MemcachedStoreOptions::Server& s : options.servers) {
    if (!s.host.empty() && s.host[0] == '/') {
      parts.push_back(s.host);
    } else {
      parts.push_back(HostPort(s.host, s.port));
    }
  }
  return absl::StrJoin(parts, ",");
}

MemcachedConn::MemcachedConn(const MemcachedStoreOptions& options, std::string describe)
    : options_(options), describe_(std::move(describe)), servers_(MemcachedServerList(options)) {}

MemcachedConn::~MemcachedConn() {
  if (mc_ != nullptr && mc_pid_ == CurrentPid()) Memcached().memcached_free(mc_);
}

memcached_return_t MemcachedConn::Version() { return Memcached().memcached_version(mc_); }

std::string MemcachedConn::ErrorText(memcached_return_t rc) const {
  std::string text = Memcached().memcached_strerror(mc_, rc);
  const int err = mc_ != nullptr ? Memcached().memcached_last_error_errno(mc_) : 0;
  if (err != 0 && (rc == MEMCACHED_ERRNO || rc == MEMCACHED_CONNECTION_FAILURE ||
                   rc == MEMCACHED_WRITE_FAILURE || rc == MEMCACHED_READ_FAILURE ||
                   rc == MEMCACHED_UNKNOWN_READ_FAILURE || rc == MEMCACHED_SOME_ERRORS)) {
    absl::StrAppend(&text, ": ", strerror(err), " [", ErrnoName(err), "]");
  }
  return text;
}

std::string MemcachedConn::ServerErrors() const {
  std::vector<std::string> out;
  MemcachedCalls& mc = Memcached();
  const uint32_t count = mc_ != nullptr ? mc.memcached_server_count(mc_) : 0;
  for (uint32_t i = 0; i < count; ++i) {
    const memcached_instance_st* server = mc.memcached_server_instance_by_position(mc_, i);
    if (server == nullptr) continue;
    const memcached_return_t rc = mc.memcached_server_error_return(server);
    if (rc == MEMCACHED_SUCCESS) continue;
    // By its code: the server's own message carries a pointer and the
    // library's source line.
    out.push_back(absl::StrCat(mc.memcached_server_name(server), ":",
                               mc.memcached_server_port(server), ": ",
                               mc.memcached_strerror(mc_, rc)));
  }
  std::string text = absl::StrJoin(out, "; ");
  if (const int err = mc.memcached_last_error_errno(mc_); err != 0 && !text.empty()) {
    absl::StrAppend(&text, " (last OS error: ", strerror(err), " [", ErrnoName(err), "])");
  }
  return text;
}

absl::Status MemcachedConn::Failure(memcached_return_t rc, absl::string_view resource,
                                     absl::string_view what,
                                     const std::string& name) const {
  std::string where = servers_;
  if (mc_ != nullptr && !name.empty() && options_.servers.size() > 1) {
    memcached_return_t ignored;
    const memcached_instance_st* server =
        Memcached().memcached_server_by_key(mc_, name.data(), name.size(), &ignored);
    if (server != nullptr) {
      where = absl::StrCat(Memcached().memcached_server_name(server), ":",
                           Memcached().memcached_server_port(server));
    }
  }
  StoreErrorMaker fault = UnexpectedError;
  if (IsMemcachedServerTrouble(rc)) fault = TransientError;
  if (rc == MEMCACHED_MEMORY_ALLOCATION_FAILURE ||
      rc == MEMCACHED_SERVER_MEMORY_ALLOCATION_FAILURE || rc == MEMCACHED_E2BIG) {
    fault = OutOfResourcesError;
  }
  if (rc == MEMCACHED_BAD_KEY_PROVIDED) fault = ConfigurationError;
  return fault(describe_, resource,
               absl::StrCat(what, " on ", where, ": ", ErrorText(rc)));
}

absl::Status MemcachedConn::Ensure(bool* fresh) {
  if (fresh != nullptr) *fresh = false;
  if (mc_ != nullptr && mc_pid_ != CurrentPid()) {
    // A forked child: the connections are our parent's conversation. The
    // handle is abandoned, not freed (freeing sends "quit" on them).
    mc_ = nullptr;
  }
  if (mc_ != nullptr) return absl::OkStatus();
  memcached_st* mc = Memcached().memcached_create(nullptr);
  if (mc == nullptr) {
    return OutOfResourcesError(describe_, "",
                               "out of memory for a memcached handle");
  }
  struct Behavior {
    memcached_behavior_t flag;
    uint64_t value;
  };
  std::vector<Behavior> behaviors = {
      {MEMCACHED_BEHAVIOR_SUPPORT_CAS, 1},
      // Keys are checked here first; libmemcached checks again.
      {MEMCACHED_BEHAVIOR_VERIFY_KEY, 1},
      {MEMCACHED_BEHAVIOR_TCP_NODELAY, options_.tcp_nodelay ? 1u : 0u},
      {MEMCACHED_BEHAVIOR_NO_BLOCK, options_.no_block ? 1u : 0u},
      // Never move a key to another server because this client could not
      // reach its own: another client may still hold the lock there.
      {MEMCACHED_BEHAVIOR_REMOVE_FAILED_SERVERS, 0},
      {MEMCACHED_BEHAVIOR_AUTO_EJECT_HOSTS, 0},
  };
  // A timeout of 0 leaves libmemcached's own.
  auto set_timeout = [&behaviors](memcached_behavior_t flag, int value) {
    if (value > 0) behaviors.push_back({flag, static_cast<uint64_t>(value)});
  };
  set_timeout(MEMCACHED_BEHAVIOR_CONNECT_TIMEOUT, options_.connect_timeout_ms);
  set_timeout(MEMCACHED_BEHAVIOR_POLL_TIMEOUT, options_.poll_timeout_ms);
  set_timeout(MEMCACHED_BEHAVIOR_SND_TIMEOUT, options_.send_timeout_us);
  set_timeout(MEMCACHED_BEHAVIOR_RCV_TIMEOUT, options_.recv_timeout_us);
  set_timeout(MEMCACHED_BEHAVIOR_RETRY_TIMEOUT, options_.retry_timeout_s);
  if (options_.libketama_compatible) {
    // What PHP's OPT_LIBKETAMA_COMPATIBLE sets: weighted ketama with MD5.
    behaviors.push_back({MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1});
  }
  memcached_return_t rc = MEMCACHED_SUCCESS;
  for (const Behavior& b : behaviors) {
    rc = Memcached().memcached_behavior_set(mc, b.flag, b.value);
    if (rc != MEMCACHED_SUCCESS) break;
  }
  if (rc == MEMCACHED_SUCCESS && !options_.prefix_key.empty()) {
    rc = Memcached().memcached_callback_set(mc, MEMCACHED_CALLBACK_NAMESPACE,
                                            options_.prefix_key.c_str());
  }
  for (const MemcachedStoreOptions::Server& s : options_.servers) {
    if (rc != MEMCACHED_SUCCESS) break;
    const uint32_t weight = static_cast<uint32_t>(std::max(s.weight, 0));
    rc = !s.host.empty() && s.host[0] == '/'
             ? Memcached().memcached_server_add_unix_socket_with_weight(mc, s.host.c_str(), weight)
             : Memcached().memcached_server_add_with_weight(mc, s.host.c_str(),
                                                            static_cast<in_port_t>(s.port), weight);
  }
  if (rc != MEMCACHED_SUCCESS) {
    absl::Status s = ConfigurationError(describe_, "",
                                        absl::StrCat("libmemcached refused the settings: ",
                                                     Memcached().memcached_strerror(mc, rc)));
    Memcached().memcached_free(mc);
    return s;
  }
  mc_ = mc;
  mc_pid_ = CurrentPid();
  if (fresh != nullptr) *fresh = true;
  return absl::OkStatus();
}

memcached_return_t MemcachedConn::Add(const std::string& name, absl::string_view token,
                                      int64_t expiry) {
  return Memcached().memcached_add(mc_, name.data(), name.size(), token.data(), token.size(),
                                   static_cast<time_t>(expiry), 0);
}

memcached_return_t MemcachedConn::Gets(const std::string& name, MemcachedFound* found) {
  *found = MemcachedFound();
  const char* keys[1] = {name.data()};
  const size_t lengths[1] = {name.size()};
  memcached_return_t rc = Memcached().memcached_mget(mc_, keys, lengths, 1);
  if (rc != MEMCACHED_SUCCESS) return rc;
  memcached_return_t fetched = MEMCACHED_SUCCESS;
  memcached_result_st* result = Memcached().memcached_fetch_result(mc_, nullptr, &fetched);
  if (result == nullptr) {
    return fetched == MEMCACHED_END || fetched == MEMCACHED_NOTFOUND ? MEMCACHED_SUCCESS
                                                                     : fetched;
  }
  found->present = true;
  found->value.assign(Memcached().memcached_result_value(result),
                      Memcached().memcached_result_length(result));
  found->cas = Memcached().memcached_result_cas(result);
  Memcached().memcached_result_free(result);
  // Read up to the end marker, so the connection is ready for the next
  // command.
  while ((result = Memcached().memcached_fetch_result(mc_, nullptr, &fetched)) != nullptr) {
    Memcached().memcached_result_free(result);
  }
  if (fetched != MEMCACHED_END && fetched != MEMCACHED_NOTFOUND &&
      fetched != MEMCACHED_SUCCESS) {
    return fetched;
  }
  return MEMCACHED_SUCCESS;
}

memcached_return_t MemcachedConn::GetMany(
    const std::vector<std::string>& names, absl::flat_hash_map<std::string, std::string>* values) {
  values->clear();
  std::vector<const char*> keys;
  std::vector<size_t> lengths;
  keys.reserve(names.size());
  lengths.reserve(names.size());
  for (const std::string& name : names) {
    keys.push_back(name.data());
    lengths.push_back(name.size());
  }
  memcached_return_t rc = Memcached().memcached_mget(mc_, keys.data(), lengths.data(), keys.size());
  if (rc != MEMCACHED_SUCCESS) return rc;
  memcached_return_t fetched = MEMCACHED_SUCCESS;
  memcached_result_st* result;
  // Read up to the end marker, so the connection is ready for the next
  // command. libmemcached gives each key back without prefix_key.
  while ((result = Memcached().memcached_fetch_result(mc_, nullptr, &fetched)) != nullptr) {
    values->insert_or_assign(
        std::string(Memcached().memcached_result_key_value(result),
                    Memcached().memcached_result_key_length(result)),
        std::string(Memcached().memcached_result_value(result),
                    Memcached().memcached_result_length(result)));
    Memcached().memcached_result_free(result);
  }
  if (fetched != MEMCACHED_END && fetched != MEMCACHED_NOTFOUND &&
      fetched != MEMCACHED_SUCCESS) {
    return fetched;
  }
  return MEMCACHED_SUCCESS;
}

memcached_return_t MemcachedConn::Cas(const std::string& name, absl::string_view token,
                                      int64_t expiry, uint64_t cas) {
  return Memcached().memcached_cas(mc_, name.data(), name.size(), token.data(), token.size(),
                                   static_cast<time_t>(expiry), 0, cas);
}

memcached_return_t MemcachedConn::Delete(const std::string& name) {
  return Memcached().memcached_delete(mc_, name.data(), name.size(), 0);
}

}  // namespace ipclock
