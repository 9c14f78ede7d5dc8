// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// `ipclock list --key NAME --limit N`: a counting semaphore seen from
// outside, with real `ipclock run --limit` holders and waiters: on slot
// locks (flock; shm, whose slots keep a dead holder's mark) and on the SysV
// set, which counts without holders and records its own limit.

#include <signal.h>

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli_util.h"
#include "spawn_util.h"
#include "cli_list_doctor_test.h"
#include "test_util.h"  // last: it pulls in cmocka.h

namespace ipclock_test {
// Slot locks: holders grouped by process with their weight and slots, and
// a heavy waiter queued on a slot.
void test_list_semaphore_slots(void** state) {
  (void)state;
  const std::string store = FreshStore();
  const pid_t heavy =
      StartCliHolder({"run", "--store", store, "--key", "pool", "--limit", "3", "--weight", "2"});
  const pid_t light = StartCliHolder({"run", "--store", store, "--key", "pool", "--limit", "3"});
  SpawnOptions quiet;
  quiet.new_process_group = true;
  const pid_t waiter = Spawn(WithCli({"run", "--store", store, "--key", "pool", "--limit", "3",
                                      "--weight", "2", "-w", "60", "--", "true"}),
                             quiet);
  const std::string json =
      ListJsonUntil({"--store", store, "--key", "pool", "--limit", "3"}, absl::StrCat(waiter));
  ExpectContains(json, "\"limit\":3,\"in_use\":3,\"free\":0", "limit and permits");
  ExpectContains(json, absl::StrCat("{\"pid\":", heavy, ",\"command\":\"ipclock\""),
                 "the heavy holder");
  ExpectContains(json, absl::StrCat("{\"pid\":", light, ",\"command\":\"ipclock\""),
                 "the light holder");
  ExpectContains(json, "\"weight\":2,\"slots\":[", "a holder's weight and slots");
  ExpectContains(json, "\"weight\":1,\"slots\":[", "the other's");
  ExpectContains(json, absl::StrCat("\"waiting\":[{\"pid\":", waiter), "the waiter on a slot");
  ExpectContains(json, "\"waiters\":null", "weight-1 waits are not counted");

  CliResult table = RunCli({"list", "--store", store, "--key", "pool", "--limit", "3"});
  ExpectCode(table, 0, "list --limit");
  ExpectContains(table.out, "limit 3, 3 permits in use, 0 free", "the table's summary");
  ExpectContains(table.out, "WEIGHT  SLOTS", "the holders' columns");
  // A larger limit than the holders' shows the slots above as free.
  CliResult wider = RunCli({"list", "--store", store, "--key", "pool", "--limit", "5", "--json"});
  ExpectContains(wider.out, "\"limit\":5,\"in_use\":3,\"free\":2", "a limit of 5");
  StopHolder(waiter, SIGKILL);
  StopHolder(light);
  StopHolder(heavy);
  CliResult after = RunCli({"list", "--store", store, "--key", "pool", "--limit", "3", "--json"});
  ExpectContains(after.out, "\"in_use\":0,\"free\":3,\"holders\":[]", "nothing held after");
}

// shm slots keep a holder's death: the slot is free, and named as dead.
void test_list_semaphore_dead_slot(void** state) {
  (void)state;
  const std::string store = absl::StrCat("shm://", UniqueShmName("lsem"));
  const pid_t holder = StartCliHolder({"run", "--store", store, "--key", "dl", "--limit", "2"});
  CliResult held = RunCli({"list", "--store", store, "--key", "dl", "--limit", "2", "--json"});
  ExpectContains(held.out, "\"in_use\":1", "one permit held");
  StopHolder(holder, SIGKILL);
  CliResult died = RunCli({"list", "--store", store, "--key", "dl", "--limit", "2", "--json"});
  ExpectCode(died, 0, "list after a death");
  ExpectContains(died.out, "\"in_use\":0", "the dead holder's permit is free");
  if (!absl::StrContains(died.out, "\"dead_slots\":[0]") &&
      !absl::StrContains(died.out, "\"dead_slots\":[1]")) {
    fail_msg("the dead slot is not named: %s", died.out.c_str());
  }
  CliResult table = RunCli({"list", "--store", store, "--key", "dl", "--limit", "2"});
  ExpectContains(table.out, "holder died holding it", "the table names the death");
  // Both slots taken: the next holder is told of the death.
  ExpectCode(RunCli({"run", "--store", store, "--key", "dl", "--limit", "2", "--weight", "2",
                     "--", "sh", "-c", "test \"$IPCLOCK_PREVIOUS_OWNER_DIED\" = 1"}),
             0, "the next holder is told");
}

// The SysV set: its own limit, a count without holders.
void test_list_semaphore_sysv_set(void** state) {
  (void)state;
  const std::string resource = UniqueResource("lsem-sysv");
  const pid_t holder = StartCliHolder(
      {"run", "--store", "semaphore", "--key", resource, "--limit", "3", "--weight", "2"});
  CliResult r =
      RunCli({"list", "--store", "semaphore", "--key", resource, "--limit", "3", "--json"});
  ExpectCode(r, 0, "list --limit of a set");
  ExpectContains(r.out, "\"limit\":3,\"in_use\":2,\"free\":1,\"holders\":null",
                 "the set's count");
  ExpectContains(r.out, "\"waiters\":0", "GETNCNT");
  CliResult other =
      RunCli({"list", "--store", "semaphore", "--key", resource, "--limit", "5", "--json"});
  ExpectCode(other, 0, "list with another limit");
  ExpectContains(other.out, "\"limit\":3", "the set's own limit is shown");
  ExpectContains(other.err, "records limit 3, not 5", "and the difference is told");
  StopHolder(holder);
  ExpectCode(RunCli({"run", "--store", "semaphore", "--key", resource, "--limit", "3", "--",
                     "true"}),
             0, "a next holder lets go cleanly");
}

void test_list_semaphore_usage(void** state) {
  (void)state;
  const std::string store = FreshStore();
  ExpectCode(RunCli({"list", "--store", store, "--limit", "3"}), 64, "--limit without --key");
  ExpectCode(RunCli({"list", "--store", store, "--key", "k", "--limit", "0"}), 64, "limit 0");
  ExpectCode(RunCli({"list", "--store", store, "--key", "k", "--limit", "32768"}), 64,
             "limit above SEMVMX");
  ExpectCode(RunCli({"list", "--store", store, "--key", "k", "--limit", "3", "--format",
                     "openmetrics"}),
             64, "--limit as openmetrics");
  ExpectCode(RunCli({"list", "--store", "in-memory", "--key", "k", "--limit", "3"}), 64,
             "a store that cannot be listed");
  CliResult r = RunCli({"list", "--store", store, "--key", "k", "--limit", "x"});
  ExpectContains(r.err, "invalid --limit 'x'", "names the bad value");
}

}  // namespace ipclock_test
