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

$autoload = getenv('IPCLOCK_SYMFONY_AUTOLOAD') ?: '/usr/share/php/Symfony/Component/Lock/autoload.php';
require $autoload;

use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\Store\PostgreSqlStore;

if ($argc !== 4) {
    fwrite(STDERR, "usage: postgres_peer.php DSN RESOURCE hold|hold-read|try|try-read\n");
    exit(64);
}
[, $dsn, $resource, $mode] = $argv;
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

$factory = new LockFactory(new PostgreSqlStore($pdo));
// No release on destruction: the script says when it lets go.
$lock = $factory->createLock($resource, null, false);
$read = str_ends_with($mode, '-read');
$got = $read ? $lock->acquireRead(false) : $lock->acquire(false);

if (str_starts_with($mode, 'try')) {
    echo $got ? "acquired\n" : "busy\n";
    if ($got) {
        $lock->release();
    }
    exit(0);
}
if (!$got) {
    echo "busy\n";
    exit(1);
}
echo "locked\n";
fflush(STDOUT);
$readable = [STDIN];
$none = null;
$none2 = null;
stream_select($readable, $none, $none2, 60);
$lock->release();
echo "released\n";
