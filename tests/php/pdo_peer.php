<?php
// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A PHP application's side of the table-store interop tests: Symfony Lock's
// PdoStore on a PDO connection (PostgreSQL, MySQL/MariaDB or SQLite), run by
// tests/table_store_test.cc.
//
//   php pdo_peer.php PDO_DSN RESOURCE hold [TTL]
//       Tries once. Prints "busy" and exits 1 if the lock is taken, else
//       prints "locked", keeps the lock (never refreshing it) until stdin
//       reaches end of file (or 60 s pass), releases it and prints
//       "released".
//   php pdo_peer.php PDO_DSN RESOURCE try [TTL]
//       Tries once and prints "acquired" (then releases) or "busy".
//   php pdo_peer.php PDO_DSN RESOURCE wait [TTL]
//       Waits (Symfony's blocking acquire, which polls a PdoStore), prints
//       "acquired", releases.
//
// TTL is the store's initial TTL in whole seconds (300 by default). The
// credentials come from PDO_USER and PDO_PASSWORD, Symfony's table options
// (db_table=...&db_id_col=...) from PDO_OPTIONS, as a query string.
// IPCLOCK_SYMFONY_AUTOLOAD overrides the autoloader's path.

declare(strict_types=1);

require __DIR__ . '/peer_common.php';
require_symfony_lock();

use Symfony\Component\Lock\Store\PdoStore;

[$dsn, $resource, $mode] = peer_args($argv, 3, 'pdo_peer.php PDO_DSN RESOURCE hold|try|wait [TTL]');
$ttl = (int) ($argv[4] ?? 300);
$options = [];
parse_str(getenv('PDO_OPTIONS') ?: '', $options);

$store = new PdoStore(pdo_from_env($dsn), $options, 0.0, $ttl);
run_lock_mode(symfony_lock($store, $resource, (float) $ttl), $mode, 60);
