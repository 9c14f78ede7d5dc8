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

$autoload = getenv('IPCLOCK_SYMFONY_AUTOLOAD') ?: '/usr/share/php/Symfony/Component/Lock/autoload.php';
require $autoload;

use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\Store\PdoStore;

if ($argc < 4) {
    fwrite(STDERR, "usage: pdo_peer.php PDO_DSN RESOURCE hold|try|wait [TTL]\n");
    exit(64);
}
[, $dsn, $resource, $mode] = $argv;
$ttl = (int) ($argv[4] ?? 300);
$user = getenv('PDO_USER') ?: null;
$password = getenv('PDO_PASSWORD') ?: null;
$options = [];
parse_str(getenv('PDO_OPTIONS') ?: '', $options);

$pdo = new PDO($dsn, $user, $password, [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
$store = new PdoStore($pdo, $options, 0.0, $ttl);
$factory = new LockFactory($store);
// No release on destruction: the script says when it lets go.
$lock = $factory->createLock($resource, (float) $ttl, false);

if ($mode === 'wait') {
    $lock->acquire(true);
    echo "acquired\n";
    $lock->release();
    exit(0);
}
$got = $lock->acquire(false);
if ($mode === 'try') {
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
