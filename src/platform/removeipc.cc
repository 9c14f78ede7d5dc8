// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Reads logind.conf, login.defs and the linger flags the way systemd and
// shadow read them; see removeipc.h for what is decided from them.

#include "platform/removeipc.h"

#include <dirent.h>
#include <iterator>
#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "platform/small_file.h"

namespace ipclock {

namespace {

constexpr uid_t kDefaultSysUidMax = 999;

std::string UnderRoot(absl::string_view root, absl::string_view path) {
  absl::string_view r = root;
  while (!r.empty() && r.back() == '/') r.remove_suffix(1);
  return absl::StrCat(r, path);
}

bool IsHostRoot(absl::string_view root) {
  while (!root.empty() && root.back() == '/') root.remove_suffix(1);
  return root.empty();
}

// Missing and unreadable files read as absent (ReadSmallFile): logind
// (root) could read a file we cannot, but guessing its content would be no
// better.

// Applies every RemoveIPC= in [Login] of one file, in systemd's syntax:
// '#' or ';' first on a line makes a comment, a trailing backslash joins the
// next line, keys and section names are case-sensitive.
void ApplyLogindFile(const std::string& path, absl::string_view text,
                     RemoveIpcSetting* setting) {
  std::string section;
  std::string pending;
  int pending_line = 0;
  int line_no = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_no;
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (!line.empty() && (line[0] == '#' || line[0] == ';')) continue;
    if (absl::EndsWith(line, "\\")) {
      if (pending.empty()) pending_line = line_no;
      line.remove_suffix(1);
      absl::StrAppend(&pending, line, " ");
      continue;
    }
    std::string joined;
    int at = line_no;
    if (!pending.empty()) {
      joined = absl::StrCat(pending, line);
      pending.clear();
      at = pending_line;
      line = joined;
    }
    if (line.empty()) continue;
    if (line.front() == '[') {
      if (line.back() == ']') {
        section = std::string(line.substr(1, line.size() - 2));
      }
      continue;
    }
    size_t eq = line.find('=');
    if (eq == absl::string_view::npos || section != "Login") continue;
    if (absl::StripAsciiWhitespace(line.substr(0, eq)) != "RemoveIPC") continue;
    std::optional<bool> value =
        ParseSystemdBoolean(absl::StripAsciiWhitespace(line.substr(eq + 1)));
    if (!value) continue;  // logind logs and skips an invalid value
    setting->remove_ipc = *value;
    setting->source = absl::StrCat(path, ":", at);
  }
}

// The drop-ins logind reads, by file name. A name seen in an earlier
// (higher-priority) dir hides the same name in later ones, which is how an
// administrator overrides or masks (with an empty file or a link to
// /dev/null) a vendor's drop-in.
std::map<std::string, std::string> ListDropIns(absl::string_view root) {
  static constexpr absl::string_view kDirs[] = {
      "/etc/systemd/logind.conf.d",
      "/run/systemd/logind.conf.d",
      "/usr/local/lib/systemd/logind.conf.d",
      "/usr/lib/systemd/logind.conf.d",
      "/lib/systemd/logind.conf.d",  // distributions without merged /usr
  };
  std::map<std::string, std::string> by_name;
  for (absl::string_view dir_name : kDirs) {
    const std::string dir = UnderRoot(root, dir_name);
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) continue;
    while (struct dirent* e = readdir(d)) {
      absl::string_view name = e->d_name;
      // systemd skips hidden and backup files, and anything not *.conf.
      if (name.empty() || name[0] == '.' || !absl::EndsWith(name, ".conf")) {
        continue;
      }
      std::string path = absl::StrCat(dir, "/", name);
      struct stat st;
      if (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) continue;
      by_name.emplace(std::string(name), std::move(path));
    }
    closedir(d);
  }
  return by_name;
}

// Lexically normalized absolute path ("." and ".." resolved, "//" folded),
// with /var/run read as /run, its usual symlink.
std::string NormalizePath(absl::string_view path) {
  std::vector<absl::string_view> parts;
  for (absl::string_view p : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    if (p == ".") continue;
    if (p == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(p);
  }
  if (parts.size() >= 2 && parts[0] == "var" && parts[1] == "run") {
    parts.erase(parts.begin());
  }
  std::string out;
  for (absl::string_view p : parts) absl::StrAppend(&out, "/", p);
  return out.empty() ? "/" : out;
}

// On this host a symlinked dir (a runtime dir reached through a link, say)
// is judged by where it leads.
std::string ResolveLockDir(absl::string_view root, absl::string_view dir) {
  std::string normalized = NormalizePath(dir);
  if (!IsHostRoot(root)) return normalized;
  char* real = realpath(normalized.c_str(), nullptr);
  if (real == nullptr) return normalized;
  std::string out = NormalizePath(real);
  free(real);
  return out;
}

// The dir right below `parent` that `path` is in, or nullopt when `path` is
// not below `parent`.
std::optional<absl::string_view> ChildOf(absl::string_view path,
                                         absl::string_view parent) {
  if (!absl::ConsumePrefix(&path, parent) || !absl::ConsumePrefix(&path, "/")) {
    return std::nullopt;
  }
  return path.substr(0, path.find('/'));
}

bool IsUnder(absl::string_view path, absl::string_view parent) {
  return path == parent || ChildOf(path, parent).has_value();
}

std::string UserName(absl::string_view root, uid_t uid) {
  if (IsHostRoot(root)) {
    // The system's user database, so that LDAP or sssd users are found too.
    std::vector<char> buf(16384);
    struct passwd pw;
    struct passwd* found = nullptr;
    if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 &&
        found != nullptr) {
      return found->pw_name;
    }
    return "";
  }
  std::optional<std::string> passwd = ReadSmallFile(UnderRoot(root, "/etc/passwd"));
  if (!passwd) return "";
  for (absl::string_view line : absl::StrSplit(*passwd, '\n')) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ':');
    uid_t u;
    if (f.size() >= 3 && absl::SimpleAtoi(f[2], &u) && u == uid) {
      return std::string(f[0]);
    }
  }
  return "";
}

std::string IpcAdvice(uid_t sys_uid_max) {
  return absl::StrCat(
      "set RemoveIPC=no in the [Login] section of "
      "/etc/systemd/logind.conf.d/ipclock.conf (then restart "
      "systemd-logind), run the service as a system user (uid <= ",
      sys_uid_max, "), or enable lingering (loginctl enable-linger USER)");
}

}  // namespace

absl::string_view IpcKindName(IpcKind kind) {
  static constexpr absl::string_view kNames[] = {
      "SysV IPC", "POSIX shared memory", "lock dir"};  // by IpcKind
  static_assert(std::size(kNames) == kIpcKinds);
  return kNames[static_cast<size_t>(kind)];
}

std::optional<bool> ParseSystemdBoolean(absl::string_view text) {
  for (absl::string_view yes : {"1", "yes", "y", "true", "t", "on"}) {
    if (absl::EqualsIgnoreCase(text, yes)) return true;
  }
  for (absl::string_view no : {"0", "no", "n", "false", "f", "off"}) {
    if (absl::EqualsIgnoreCase(text, no)) return false;
  }
  return std::nullopt;
}

RemoveIpcSetting ReadRemoveIpcSetting(absl::string_view root) {
  RemoveIpcSetting setting;
  // Newer systemd ships the main file under /usr/lib and reads only the
  // first one found; older ones read /etc only, which comes first anyway.
  for (absl::string_view main : {"/etc/systemd/logind.conf",
                                 "/run/systemd/logind.conf",
                                 "/usr/local/lib/systemd/logind.conf",
                                 "/usr/lib/systemd/logind.conf"}) {
    const std::string path = UnderRoot(root, main);
    if (std::optional<std::string> text = ReadSmallFile(path)) {
      ApplyLogindFile(path, *text, &setting);
      break;
    }
  }
  for (const auto& [name, path] : ListDropIns(root)) {
    if (std::optional<std::string> text = ReadSmallFile(path)) {
      ApplyLogindFile(path, *text, &setting);
    }
  }
  return setting;
}

void ApplyLogindConfText(absl::string_view path, absl::string_view text,
                         RemoveIpcSetting* setting) {
  ApplyLogindFile(std::string(path), text, setting);
}

std::optional<uid_t> ParseSysUidMax(absl::string_view text) {
  std::optional<uid_t> value;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<absl::string_view> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    uid_t n;
    // Like shadow's getdef, a later line overrides an earlier one.
    if (words.size() >= 2 && words[0] == "SYS_UID_MAX" &&
        absl::SimpleAtoi(words[1], &n)) {
      value = n;
    }
  }
  return value;
}

uid_t ReadSysUidMax(absl::string_view root, std::string* source) {
  const std::string path = UnderRoot(root, "/etc/login.defs");
  std::optional<uid_t> value;
  if (std::optional<std::string> text = ReadSmallFile(path)) {
    value = ParseSysUidMax(*text);
  }
  if (source != nullptr) *source = value ? path : "default";
  return value.value_or(kDefaultSysUidMax);
}

bool IsLingering(absl::string_view root, uid_t uid) {
  std::string name = UserName(root, uid);
  if (name.empty() || name.find('/') != std::string::npos) return false;
  const std::string flag =
      UnderRoot(root, absl::StrCat("/var/lib/systemd/linger/", name));
  return access(flag.c_str(), F_OK) == 0;
}

RemoveIpcReport CheckRemoveIpc(absl::string_view root, uid_t uid, IpcKind kind,
                               absl::string_view lock_dir, RemoveIpcDetail detail) {
  RemoveIpcReport r;
  r.kind = kind;
  r.uid = uid;

  // Whether logind's IPC cleanup applies to objects `uid` owns. With
  // kVerdict only what can change the answer is read: root is exempt
  // whatever SYS_UID_MAX is, and RemoveIPC= matters only above it.
  auto ipc_cleaned = [&]() {
    const bool full = detail == RemoveIpcDetail::kFull;
    if (!full && uid == 0) {
      r.is_system_user = true;
      return false;
    }
    r.sys_uid_max = ReadSysUidMax(root);
    r.is_system_user = uid <= r.sys_uid_max;
    if (full || !r.is_system_user) {
      RemoveIpcSetting setting = ReadRemoveIpcSetting(root);
      r.remove_ipc = setting.remove_ipc;
      r.source = setting.source;
    }
    if (!r.remove_ipc || r.is_system_user) return false;
    r.lingering = IsLingering(root, uid);
    return !r.lingering;
  };
  auto why_ipc = [&]() {
    return absl::StrCat(
        "systemd-logind removes ",
        IpcKindName(kind == IpcKind::kLockDir ? IpcKind::kPosixShm : kind), " objects of uid ",
        uid, " when its last session ends (RemoveIPC=", r.remove_ipc ? "yes" : "no", " from ",
        r.source, "; uid ", uid, " is above SYS_UID_MAX ", r.sys_uid_max, ")");
  };

  if (kind != IpcKind::kLockDir) {
    if (ipc_cleaned()) {
      r.at_risk = true;
      r.reason = why_ipc();
      r.advice = IpcAdvice(r.sys_uid_max);
    }
    return r;
  }

  // A lock dir: where it is decides what can delete it, and only a dir in
  // /dev/shm depends on logind's configuration.
  r.lock_dir = ResolveLockDir(root, lock_dir);
  if (std::optional<absl::string_view> owner = ChildOf(r.lock_dir, "/run/user")) {
    uid_t owner_uid;
    if (absl::SimpleAtoi(*owner, &owner_uid)) {
      // This is logout, not RemoveIPC: it applies to every user, root too.
      if (IsLingering(root, owner_uid)) {
        r.lingering = true;
        return r;
      }
      r.at_risk = true;
      r.reason = absl::StrCat(r.lock_dir, " is in the runtime dir of uid ",
                              owner_uid,
                              ", which systemd removes when that user's last "
                              "session ends");
      r.advice = absl::StrCat(
          "use a lock dir that outlives sessions, such as /run/lock/APP "
          "(made by tmpfiles.d or RuntimeDirectory= with "
          "RuntimeDirectoryPreserve=yes), or enable lingering for uid ",
          owner_uid, " (loginctl enable-linger)");
      return r;
    }
  }
  if (IsUnder(r.lock_dir, "/dev/shm")) {
    if (ipc_cleaned()) {
      r.at_risk = true;
      r.reason = absl::StrCat(r.lock_dir, " is in /dev/shm: ", why_ipc());
      r.advice = absl::StrCat("use a lock dir outside /dev/shm such as "
                              "/run/lock/APP, or ",
                              IpcAdvice(r.sys_uid_max));
    }
    return r;
  }
  if (IsUnder(r.lock_dir, "/tmp") || IsUnder(r.lock_dir, "/var/tmp")) {
    r.may_be_cleaned = true;
    r.reason = absl::StrCat(
        r.lock_dir,
        " is under a tmp dir, where systemd-tmpfiles may delete lock files "
        "that have not been touched for a while, held ones included");
    r.advice = absl::StrCat(
        "use a lock dir such as /run/lock/APP, or exclude this one from "
        "cleaning with the line 'x ",
        r.lock_dir, "' in /etc/tmpfiles.d/ipclock.conf");
  }
  return r;
}

}  // namespace ipclock
