<?php
// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A Symfony 8.2 application's side of the MySQL named-lock interop tests:
// the statements of Symfony's MysqlStore (the store its factory makes for
// `mysql+advisory:`), replayed on a PDO connection, since Debian's PHP
// ships Symfony 5.4, which has no MysqlStore. The lock name is
// hash('sha256', resource); the statements are MysqlStore's save(),
// waitAndSave(), exists() and delete(). Run by tests/mysql_store_test.cc.
//
//   php symfony_mysql_peer.php PDO_DSN RESOURCE hold
//       save(): prints "locked" or "busy"; on "locked" holds until stdin
//       reaches end of file, then prints exists() ("exists 1") and runs
//       delete() ("released 1").
//   php symfony_mysql_peer.php PDO_DSN RESOURCE try
//       save(): prints "acquired" (then delete()) or "busy".
//   php symfony_mysql_peer.php PDO_DSN RESOURCE wait
//       waitAndSave(): GET_LOCK(name, -1); prints "acquired" (then
//       delete()), "busy" or "null" (NULL: MariaDB refuses a negative
//       timeout).
//
// The credentials come from PDO_USER and PDO_PASSWORD.

declare(strict_types=1);

require __DIR__ . '/peer_common.php';

[$dsn, $resource, $mode] =
    peer_args($argv, 3, 'symfony_mysql_peer.php PDO_DSN RESOURCE hold|try|wait', 3);

$pdo = pdo_from_env($dsn);
$name = hash('sha256', $resource);

function column(PDO $pdo, string $sql, string $name): mixed
{
    $stmt = $pdo->prepare($sql);
    $stmt->bindValue(':key', $name);
    $stmt->execute();
    return $stmt->fetchColumn();
}

$said = function (mixed $v): string {
    if ($v === null) {
        return 'null';
    }
    return in_array((string) $v, ['1', '-1'], true) ? 'locked' : 'busy';
};

if ($mode === 'wait') {
    $got = $said(column($pdo, 'SELECT GET_LOCK(:key, -1)', $name));
} else {
    $got = $said(column($pdo, 'SELECT IF(IS_USED_LOCK(:key) = CONNECTION_ID(), -1, GET_LOCK(:key, 0))', $name));
}
if ($mode !== 'hold') {
    echo $got === 'locked' ? 'acquired' : $got, "\n";
    if ($got === 'locked') {
        column($pdo, 'SELECT RELEASE_LOCK(:key)', $name);
    }
    exit(0);
}
echo "$got\n";
if ($got !== 'locked') {
    exit(1);
}
await_stdin_eof(60);
$exists = column($pdo, 'SELECT IS_USED_LOCK(:key) = CONNECTION_ID()', $name);
echo 'exists ', $exists === null ? 'NULL' : (string) $exists, "\n";
$released = column($pdo, 'SELECT RELEASE_LOCK(:key)', $name);
echo 'released ', $released === null ? 'NULL' : (string) $released, "\n";
