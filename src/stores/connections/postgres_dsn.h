// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What the two PostgreSQL stores (advisory locks, and Symfony's table
// store) share before a connection: the libpq keywords a DSN gives, and
// ipclock's own check of their values, so that libpq never sees a value it
// would refuse only when connecting (where its refusal reads like a server
// that is down); and the one classification of what the server says, by
// SQLSTATE. Compiled only with libpq (Meson feature `postgres`).

#ifndef IPCLOCK_STORES_POSTGRES_DSN_H_
#define IPCLOCK_STORES_POSTGRES_DSN_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/dsn.h"
#include "core/store_errors.h"

namespace ipclock {

// libpq connection keywords and values, in the order given: a later
// keyword overrides an earlier one.
using PgConninfo = std::vector<std::pair<std::string, std::string>>;

// The error of a failure the server names by SQLSTATE, in the classes of
// ipclock/errors.h: connection trouble, a server starting or shutting down,
// too many connections and rolled-back transactions are transient; refused
// credentials and privileges are refused; a database, schema, object or
// parameter the server does not know is configuration.
StoreErrorMaker PgFaultOf(absl::string_view sqlstate);

// The value `key` has for libpq (its last one), or null.
const std::string* FindPgKeyword(const PgConninfo& conninfo, absl::string_view key);

// "<scheme>://user@host:port/dbname", for messages (never the password).
std::string DescribePgConninfo(absl::string_view scheme, const PgConninfo& conninfo);

// `conninfo` after ipclock's defaults (application name, connect_timeout
// 10, TCP keepalives), which it overrides.
PgConninfo WithPgDefaults(const PgConninfo& conninfo);

// The server, the credentials and every libpq keyword a postgres DSN gives:
// the URL form (`scheme://user:password@host:port/dbname?keyword=value`),
// and with `pdo_form` also PDO's `pgsql:host=H;port=P;dbname=D` with the
// credentials as query options. Takes `connect_timeout` (0 to 3600) and
// every libpq keyword from the query; a password given where messages could
// not redact it is refused.
absl::StatusOr<PgConninfo> PgConninfoFromDsn(Dsn& dsn, bool pdo_form);

// ipclock's check of `conninfo` before libpq sees it: every keyword is one
// this libpq knows; ports, counts and timeouts are numbers in range; the
// values of sslmode, gssencmode, channel_binding, target_session_attrs and
// the TLS versions are ones libpq takes; host and port lists match; a
// socket dir, a certificate, key, CRL or password file is of the right
// type (core/named_file.h). `where` starts messages.
absl::Status CheckPgConninfo(const PgConninfo& conninfo, absl::string_view where);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_POSTGRES_DSN_H_
