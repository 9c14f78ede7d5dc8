// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "doctor_command.h"

#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "doctor_checks.h"
#include "exit_codes.h"
#include "getopt_util.h"
#include "json.h"
#include "store_dsn.h"
#include "platform/small_file.h"

namespace ipclock_cli {

namespace {

using Level = Finding::Level;

enum LongOnly : int {
  kOptStore = 256,
  kOptRoot,
  kOptUser,
  kOptJson,
};

constexpr char kShortOptions[] = ":h";

const struct option kLongOptions[] = {
    {"store", required_argument, nullptr, kOptStore},
    {"root", required_argument, nullptr, kOptRoot},
    {"user", required_argument, nullptr, kOptUser},
    {"json", no_argument, nullptr, kOptJson},
    {"help", no_argument, nullptr, 'h'},
    {nullptr, 0, nullptr, 0},
};

absl::Status Usage(absl::string_view message) { return UsageError("doctor", message); }

// `user` (a name or a number) as a uid, and its name if known. Under a
// root dir other than "/", names come from that tree's etc/passwd, since
// the host's users need not be the tree's.
absl::Status ResolveUser(const DoctorOptions& options, const DoctorTarget& target,
                         uid_t* uid, std::string* name) {
  if (options.user.empty()) {
    *uid = geteuid();
  } else if (!absl::SimpleAtoi(options.user, uid)) {
    *uid = static_cast<uid_t>(-1);
  }
  const bool by_name = *uid == static_cast<uid_t>(-1);
  if (target.host()) {
    std::vector<char> buf(16384);
    struct passwd pw;
    struct passwd* found = nullptr;
    const int err = by_name ? getpwnam_r(options.user.c_str(), &pw, buf.data(), buf.size(), &found)
                            : getpwuid_r(*uid, &pw, buf.data(), buf.size(), &found);
    if (err == 0 && found != nullptr) {
      *uid = found->pw_uid;
      *name = found->pw_name;
    }
  } else {
    const std::string passwd = absl::StrCat(target.root, "/etc/passwd");
    if (std::optional<std::string> text = ipclock::ReadSmallFile(passwd)) {
      for (absl::string_view line : absl::StrSplit(*text, '\n')) {
        std::vector<absl::string_view> f = absl::StrSplit(line, ':');
        uid_t u;
        if (f.size() < 3 || !absl::SimpleAtoi(f[2], &u)) continue;
        if (by_name ? f[0] == options.user : u == *uid) {
          *uid = u;
          *name = std::string(f[0]);
          break;
        }
      }
    }
  }
  if (*uid == static_cast<uid_t>(-1)) {
    return Usage(absl::StrCat("unknown user '", options.user, "'",
                              target.host() ? "" : absl::StrCat(" in ", target.root, "/etc/passwd")));
  }
  return absl::OkStatus();
}

// What the DSN names, without opening the store (which would create it).
absl::Status DescribeStore(const DoctorOptions& options, DoctorTarget* target) {
  target->explicit_store = !options.store_dsn.empty();
  absl::StatusOr<ipclock::Dsn> dsn = ParseStoreDsn(options.store_dsn);
  if (!dsn.ok()) return dsn.status();
  target->scheme = dsn->scheme();
  if (target->scheme == "semaphore") {
    target->ipc_kind = ipclock::IpcKind::kSysV;
  } else if (target->scheme == "shm" || target->scheme == "posix-semaphore") {
    target->ipc_kind = ipclock::IpcKind::kPosixShm;
  } else if (target->scheme == "flock") {
    absl::StatusOr<std::string> dir = FlockDirOf(*dsn);
    if (!dir.ok()) return dir.status();
    if (!dir->empty()) {
      target->lock_dirs.push_back({*dir, ""});
    } else if (!FlockPathNaming(*dsn)) {
      SetDefaultFlockDirs(target);
    }
  }
  return absl::OkStatus();
}

const char* LevelName(Level level) {
  switch (level) {
    case Level::kOk:
      return "ok";
    case Level::kInfo:
      return "info";
    case Level::kRisk:
      return "risk";
  }
  return "?";
}

void PrintHuman(const DoctorTarget& target, const std::string& user_name,
                const std::vector<Finding>& findings, int risks) {
  printf("ipclock doctor: uid %u%s, %s, store %s\n", static_cast<unsigned>(target.uid),
         user_name.empty() ? "" : absl::StrCat(" (", user_name, ")").c_str(),
         target.host() ? "this host" : absl::StrCat("the tree at ", target.root).c_str(),
         target.scheme.c_str());
  for (const Finding& f : findings) {
    printf("[%s] %s%s: %s\n", LevelName(f.level), f.check.c_str(),
           f.subject.empty() ? "" : absl::StrCat(" ", f.subject).c_str(), f.message.c_str());
    if (f.level != Level::kOk && !f.advice.empty()) printf("       fix: %s\n", f.advice.c_str());
  }
  if (risks == 0) {
    printf("Nothing found that breaks locks.\n");
  } else {
    printf("%d finding%s put%s locks at risk.\n", risks, risks == 1 ? "" : "s",
           risks == 1 ? "s" : "");
  }
}

void PrintJson(const DoctorTarget& target, const std::string& user_name,
               const std::vector<Finding>& findings, int risks) {
  std::vector<std::string> items;
  for (const Finding& f : findings) {
    items.push_back(JsonObject()
                        .AddString("check", f.check)
                        .AddString("level", LevelName(f.level))
                        .AddString("subject", f.subject)
                        .AddString("message", f.message)
                        .AddString("advice", f.advice)
                        .Build());
  }
  std::string list = JsonArray(items);
  list.pop_back();  // its final newline
  printf("%s\n", JsonObject()
                     .AddInt("uid", static_cast<int64_t>(target.uid))
                     .AddString("user", user_name)
                     .AddString("root", target.root)
                     .AddString("store", target.scheme)
                     .AddBool("at_risk", risks > 0)
                     .AddInt("risks", risks)
                     .AddRaw("findings", list)
                     .Build()
                     .c_str());
}

}  // namespace

absl::StatusOr<DoctorOptions> ParseDoctorOptions(int argc, char** argv) {
  DoctorOptions options;
  absl::Status s = ParseOptionsOnly(
      argc, argv, kShortOptions, kLongOptions, "doctor", &options.show_help,
      [&](int opt, const char* arg) -> absl::Status {
        switch (opt) {
          case kOptStore:
            options.store_dsn = arg;
            break;
          case kOptRoot:
            if (arg[0] != '/') return Usage("--root needs an absolute path");
            options.root = arg;
            break;
          case kOptUser:
            if (arg[0] == '\0') return Usage("--user needs a name or a uid");
            options.user = arg;
            break;
          case kOptJson:
            options.json = true;
            break;
        }
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  return options;
}

int DoctorCommand(const DoctorOptions& options) {
  DoctorTarget target;
  target.root = options.root;
  struct stat st;
  if (stat(target.root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    PrintError("ipclock doctor", Usage(absl::StrCat("--root ", target.root,
                                                    " is not a directory")));
    return kExitUsage;
  }
  std::string user_name;
  absl::Status s = ResolveUser(options, target, &target.uid, &user_name);
  target.is_current_user = target.host() && target.uid == geteuid();
  if (s.ok()) s = DescribeStore(options, &target);
  if (!s.ok()) {
    PrintError("ipclock doctor", s);
    return ExitCodeForStatus(s);
  }

  std::vector<Finding> findings;
  CheckRemoveIpcSetting(target, &findings);
  CheckLockDirs(target, &findings);
  CheckSysvLimits(target, &findings);
  CheckIoUring(target, &findings);
  CheckTimedWaitSignal(target, &findings);
  int risks = 0;
  for (const Finding& f : findings) risks += f.level == Level::kRisk;

  if (options.json) {
    PrintJson(target, user_name, findings, risks);
  } else {
    PrintHuman(target, user_name, findings, risks);
  }
  return risks > 0 ? kExitAtRisk : 0;
}

}  // namespace ipclock_cli
