// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The remote stores' client libraries (hiredis, libpq, MariaDB Connector/C,
// libsqlite3, libmemcached, the ZooKeeper C client), loaded on first use.
//
// A program that takes only local locks should pay nothing for the stores
// it does not use: no shared object mapped, no constructor run, no
// relocation at start-up, no package to install. So by default
// (`-Dclient_libraries=dlopen`) ipclock links no client library. A library
// is dlopen()ed by its soname when the first store that needs it is made
// (StoreFromDsn(), a typed factory, a lister), and its symbols are resolved
// once into that library's table of calls: platform/hiredis_calls.h,
// libpq_calls.h, mariadb_calls.h, sqlite_calls.h, memcached_calls.h and
// zookeeper_calls.h. A missing library is an Unimplemented error that names
// the package to install. Each table's file also carries a `.note.dlopen`
// ELF note (the systemd "dlopen metadata" format), so that packaging tools
// see the dependency that DT_NEEDED no longer shows (`readelf -n`).
//
// With `-Dclient_libraries=link` (a fully static program, where dlopen()
// cannot load a shared library) the libraries are linked as before and the
// tables point at the linked functions from the start.
//
// Every call ipclock makes into a client library goes through its table:
//
//   PGresult* r = Libpq().PQexec(conn, "SELECT 1");
//
// That is what makes the table a seam. A test replaces one call with one
// that fails (ClientCall::Replace(), as SQLite's xSetSystemCall replaces a
// system call) and sees the store's error. And a call that bypasses the
// table cannot be written by accident: the dlopen build links no client
// library, so a direct call leaves an undefined symbol that fails the link
// of the CLI and of every program built from `pkg-config --libs ipclock`,
// and tests/client_calls_test.sh fails on any object of libipclock.a that
// imports a client library's symbol (outside the tables' own files in the
// link build).

#ifndef IPCLOCK_PLATFORM_CLIENT_LIBRARY_H_
#define IPCLOCK_PLATFORM_CLIENT_LIBRARY_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ipclock_config.h"

namespace ipclock {

// One resolved symbol of a client library: a function (ClientCall) or an
// object (ClientData). The address is atomic so that a test may replace a
// call while a store's own thread (ZooKeeper's) makes it.
class ClientSymbol {
 public:
  ClientSymbol() = default;
  ClientSymbol(const ClientSymbol&) = delete;
  ClientSymbol& operator=(const ClientSymbol&) = delete;

  void* address() const { return address_.load(std::memory_order_relaxed); }
  void set_address(void* address) { address_.store(address, std::memory_order_relaxed); }

 protected:
  void* exchange(void* address) { return address_.exchange(address, std::memory_order_relaxed); }

 private:
  std::atomic<void*> address_{nullptr};
};

template <typename F>
class ClientCall;

// A function of a client library, called as the function itself:
// `Libpq().PQclear(r)`. Calling it before its library was loaded is a
// null call: every store loads its library before it makes a call.
template <typename R, typename... A>
class ClientCall<R (*)(A...)> : public ClientSymbol {
 public:
  using Function = R (*)(A...);
  R operator()(A... args) const { return get()(args...); }
  Function get() const { return reinterpret_cast<Function>(address()); }
  // For tests: makes `fn` the function called from now on; returns the one
  // it replaces, to call through or to put back.
  Function Replace(Function fn) {
    return reinterpret_cast<Function>(exchange(reinterpret_cast<void*>(fn)));
  }
};

// A variadic function (mysql_optionsv).
template <typename R, typename... A>
class ClientCall<R (*)(A..., ...)> : public ClientSymbol {
 public:
  using Function = R (*)(A..., ...);
  template <typename... V>
  R operator()(A... args, V... rest) const {
    return get()(args..., rest...);
  }
  Function get() const { return reinterpret_cast<Function>(address()); }
  Function Replace(Function fn) {
    return reinterpret_cast<Function>(exchange(reinterpret_cast<void*>(fn)));
  }
};

// An object a client library exports (ZooKeeper's ZOO_EPHEMERAL, its open
// ACL): `*ZooKeeper().ZOO_EPHEMERAL`.
template <typename T>
class ClientData : public ClientSymbol {
 public:
  T* get() const { return static_cast<T*>(address()); }
  T& operator*() const { return *get(); }
};

// One symbol of a table, by name.
struct ClientSymbolSlot {
  const char* name;
  ClientSymbol* symbol;
  // Its address in a build that links the library; nullptr in the dlopen
  // build, where dlsym() finds it.
  void* linked;
};

// What a library is and where it comes from.
struct ClientLibraryInfo {
  const char* what;     // "the Redis client library (hiredis)"
  const char* soname;   // "libhiredis.so.0.14", what dlopen() is given
  const char* package;  // "libhiredis0.14", the Debian package that has it
};

// A client library's loader: loads it once, on the first Load() that
// succeeds, and fills its table. Thread-safe.
class ClientLibrary {
 public:
  constexpr ClientLibrary(ClientLibraryInfo info, absl::Span<const ClientSymbolSlot> slots)
      : info_(info), slots_(slots) {}

  // OK once the table is filled. Otherwise Unimplemented, naming `who`
  // (the store that needs it), the library, its soname, the package to
  // install and dlerror()'s reason:
  //
  //   ipclock: redis: the Redis client library (hiredis), libhiredis.so.0.14,
  //   could not be loaded (install libhiredis0.14): libhiredis.so.0.14:
  //   cannot open shared object file: No such file or directory
  //
  // A failure is not remembered: a later Load() tries again (the package
  // may have been installed since).
  absl::Status Load(absl::string_view who);
  bool loaded() const { return loaded_.load(std::memory_order_acquire); }
  const ClientLibraryInfo& info() const { return info_; }

  // For tests: the file given to dlopen() instead of the soname (nullptr
  // for the soname again). Has an effect only before the library is loaded,
  // and none in the link build.
  void SetFileForTest(const char* file) { file_for_test_.store(file); }

 private:
  const ClientLibraryInfo info_;
  const absl::Span<const ClientSymbolSlot> slots_;
  std::atomic<bool> loaded_{false};
  std::atomic<const char*> file_for_test_{nullptr};
  std::mutex mu_;  // serializes loading
};

// Whether this build loads client libraries with dlopen() (the default) or
// links them (-Dclient_libraries=link); false in a build without a remote
// store, which has none to load and does not link dlopen().
bool ClientLibrariesLoadedOnFirstUse();

// The address of a linked function or object, for a ClientSymbolSlot.
template <typename T>
void* LinkedAddress(T* p) {
  return const_cast<void*>(reinterpret_cast<const void*>(p));
}

}  // namespace ipclock

// What a table's X-macro list expands to: a member of the table struct per
// function or object, and a slot per symbol (in the table's .cc, inside
// IPCLOCK_CLIENT_LIBRARY, which names the table `g_client_table`). Only the
// link build takes the linked address, so only it refers to the library's
// symbols.
#define IPCLOCK_CLIENT_CALL_MEMBER(name) ::ipclock::ClientCall<decltype(&::name)> name;
#define IPCLOCK_CLIENT_DATA_MEMBER(name) \
  ::ipclock::ClientData<std::remove_reference_t<decltype(::name)>> name;
#if IPCLOCK_CLIENT_LIBRARIES_DLOPEN
#define IPCLOCK_CLIENT_SLOT(name) {#name, &g_client_table.name, nullptr},
#else
#define IPCLOCK_CLIENT_SLOT(name) \
  {#name, &g_client_table.name, ::ipclock::LinkedAddress(&::name)},
#endif

// Puts a `.note.dlopen` ELF note into the object that uses it, in the format
// of the systemd "dlopen metadata" specification: owner "FDO", type
// 0x407c0c0a, and as its descriptor a NUL-terminated JSON array of objects
// with "soname" (an array), "feature", "description" and "priority".
// `json` must be a string literal. The note is `used`, so that the compiler
// keeps it; it lands in a program together with the object that holds it,
// that is, with the store that needs the library.
#define IPCLOCK_DLOPEN_NOTE(variable, json)                                        \
  __attribute__((used, section(".note.dlopen"), aligned(4))) static const struct { \
    uint32_t n_namesz;                                                             \
    uint32_t n_descsz;                                                             \
    uint32_t n_type;                                                               \
    char name[4];                                                                  \
    char desc[sizeof(json)];                                                       \
  } variable = {4, sizeof(json), 0x407c0c0a, "FDO", json}

// The note of one library that one feature suggests (string literals all);
// only the dlopen build has it, for only it loads the library by soname.
#if IPCLOCK_CLIENT_LIBRARIES_DLOPEN
#define IPCLOCK_CLIENT_LIBRARY_NOTE(soname, feature, description)                  \
  IPCLOCK_DLOPEN_NOTE(kClientLibraryDlopenNote,                                    \
                      "[{\"soname\":[\"" soname "\"],\"feature\":\"" feature     \
                      "\",\"description\":\"" description "\",\"priority\":\"suggested\"}]");
#else
#define IPCLOCK_CLIENT_LIBRARY_NOTE(soname, feature, description)
#endif

// What a client library's table .cc defines, inside namespace ipclock: the
// table (a `Table`, its calls null until the library is loaded) and
// `Table& table_fn()`; the loader of the library `what` (soname `soname`,
// Debian package `package`: ClientLibraryInfo) and `ClientLibrary&
// library_fn()`; and the `.note.dlopen` note that says the Meson feature
// `feature` suggests the library, for `description`. The strings are
// literals. The rest are the table's X-macro lists applied to
// IPCLOCK_CLIENT_SLOT:
//
//   IPCLOCK_CLIENT_LIBRARY(HiredisCalls, Hiredis, HiredisLibrary,
//                          "the Redis client library (hiredis)",
//                          IPCLOCK_HIREDIS_SONAME, IPCLOCK_HIREDIS_PACKAGE, "redis",
//                          "the redis store (redis://)",
//                          IPCLOCK_HIREDIS_CALLS(IPCLOCK_CLIENT_SLOT))
#define IPCLOCK_CLIENT_LIBRARY(Table, table_fn, library_fn, what, soname, package, feature, \
                               description, ...)                                          \
  namespace {                                                                             \
  Table g_client_table;                                                                   \
  const ClientSymbolSlot kClientSlots[] = {__VA_ARGS__};                                  \
  ClientLibrary g_client_library({what, soname, package}, kClientSlots);                  \
  }                                                                                       \
  IPCLOCK_CLIENT_LIBRARY_NOTE(soname, feature, description)                               \
  Table& table_fn() { return g_client_table; }                                            \
  ClientLibrary& library_fn() { return g_client_library; }

#endif  // IPCLOCK_PLATFORM_CLIENT_LIBRARY_H_
