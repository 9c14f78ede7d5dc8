// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0

#include "platform/path_kind.h"

#include <errno.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>

namespace ipclock {

namespace {

bool IsKernelFs(long magic) {
  switch (magic) {
    case PROC_SUPER_MAGIC:
    case SYSFS_MAGIC:
    case DEBUGFS_MAGIC:
    case TRACEFS_MAGIC:
    case SECURITYFS_MAGIC:
    case CGROUP_SUPER_MAGIC:
    case CGROUP2_SUPER_MAGIC:
    case BPF_FS_MAGIC:
    case 0x62656570:  // configfs
    case EFIVARFS_MAGIC:
    case PSTOREFS_MAGIC:
    case DEVPTS_SUPER_MAGIC:
      return true;
    default:
      return false;
  }
}

bool OnKernelFs(const std::string& path) {
  struct statfs fs;
  int r;
  do {
    r = statfs(path.c_str(), &fs);
  } while (r != 0 && errno == EINTR);
  return r == 0 && IsKernelFs(static_cast<long>(fs.f_type));
}

std::string ParentOf(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

PathKind InspectPathKind(const std::string& path) {
  PathKind out;
  struct stat st;
  int r;
  do {
    r = stat(path.c_str(), &st);
  } while (r != 0 && errno == EINTR);
  if (r != 0) {
    out.error = errno;
    out.kernel_fs = out.error == ENOENT && OnKernelFs(ParentOf(path));
    return out;
  }
  out.type = st.st_mode & S_IFMT;
  out.kernel_fs = OnKernelFs(path);
  return out;
}

}  // namespace ipclock
