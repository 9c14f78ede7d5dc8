<?php
// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A PHP application's side of the PostgreSQL interop tests: Symfony Lock's
// PostgreSqlStore (lock id = crc32 of the resource) on the server named by
// an ipclock DSN, run by tests/postgres_store_test.cc.
//
//   php postgres_peer.php DSN RESOURCE hold|hold-read
//       Tries once. Prints "busy" and exits 1 if the lock is taken, else
//       prints "locked", keeps the lock until stdin reaches end of file (or
//       60 s pass), releases it and prints "released".
//   php postgres_peer.php DSN RESOURCE try|try-read
//       Tries once and prints "acquired" (then releases) or "busy".
//
// DSN: postgresql+advisory://user:password@host:port/db, turned into PDO's
// "pgsql:host=...;port=...;dbname=..." with the credentials passed apart.

declare(strict_types=1);

require __DIR__ . '/peer_common.php';
require_symfony_lock();

use Symfony\Component\Lock\Store\PostgreSqlStore;

[$dsn, $resource, $mode] =
    peer_args($argv, 3, 'postgres_peer.php DSN RESOURCE hold|hold-read|try|try-read', 3);
$url = parse_url($dsn);
if ($url === false || !isset($url['host'])) {
    fwrite(STDERR, "postgres_peer.php: cannot parse the DSN\n");
    exit(64);
}
$pdo = new PDO(
    sprintf('pgsql:host=%s;port=%d;dbname=%s', $url['host'], $url['port'] ?? 5432,
            ltrim($url['path'] ?? '', '/')),
    rawurldecode($url['user'] ?? ''),
    rawurldecode($url['pass'] ?? ''),
    [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);

run_lock_mode(symfony_lock(new PostgreSqlStore($pdo), $resource, null), $mode, 60);
