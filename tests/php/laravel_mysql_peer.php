<?php
// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A Laravel application's side of the MySQL advisory-lock interop tests:
// the SQL that Laravel's database advisory locks run on MySQL/MariaDB
// (mpyw/laravel-database-advisory-lock, session locks), on a PDO
// connection set up as Laravel's MySQL connector sets it (utf8mb4, native
// prepared statements). Run by tests/mysql_store_test.cc.
//
//   php laravel_mysql_peer.php PDO_DSN KEY hold TIMEOUT
//       Runs GET_LOCK with Laravel's name expression and TIMEOUT as Laravel
//       writes it into the SQL. Prints "locked", "busy" (0) or "null"
//       (NULL: the server refused, e.g. a negative timeout on MariaDB), and
//       on "locked" holds until stdin reaches end of file, then runs
//       Laravel's RELEASE_LOCK and prints "released 1" (or 0 / NULL).
//   php laravel_mysql_peer.php PDO_DSN KEY try TIMEOUT
//       The same GET_LOCK; prints "acquired" (then releases), "busy" or
//       "null", and the seconds the statement took.
//
// The credentials come from PDO_USER and PDO_PASSWORD.

declare(strict_types=1);

require __DIR__ . '/peer_common.php';

[$dsn, $key, $mode, $timeout] =
    peer_args($argv, 4, 'laravel_mysql_peer.php PDO_DSN KEY hold|try TIMEOUT', 4);
if (!is_numeric($timeout)) {
    fwrite(STDERR, "laravel_mysql_peer.php: TIMEOUT must be a number\n");
    exit(64);
}

$pdo = pdo_from_env($dsn, [PDO::ATTR_EMULATE_PREPARES => false]);
$pdo->exec("SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci");

$name = 'CASE WHEN CHAR_LENGTH(?) > 64 THEN CONCAT(SUBSTR(?, 1, 24), SHA1(?)) ELSE ? END';
$lock = $pdo->prepare("SELECT GET_LOCK($name, $timeout)");
$release = $pdo->prepare("SELECT RELEASE_LOCK($name)");
$keys = array_fill(0, 4, $key);

$started = microtime(true);
$lock->execute($keys);
$got = $lock->fetchColumn();
$took = microtime(true) - $started;
$said = $got === null ? 'null' : ((string) $got === '1' ? 'locked' : 'busy');

if ($mode === 'try') {
    echo ($said === 'locked' ? 'acquired' : $said), sprintf(" %.3f\n", $took);
    if ($said === 'locked') {
        $release->execute($keys);
    }
    exit(0);
}
echo "$said\n";
if ($said !== 'locked') {
    exit(1);
}
await_stdin_eof(60);
$release->execute($keys);
$result = $release->fetchColumn();
echo 'released ', $result === null ? 'NULL' : (string) $result, "\n";
