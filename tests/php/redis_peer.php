<?php
// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A PHP application's side of the Redis interop tests: Symfony Lock's
// RedisStore (5.2+ sorted-set format) over php-redis, run by
// tests/redis_store_test.cc.
//
//   php redis_peer.php DSN RESOURCE hold|hold-read [SECONDS]
//       Tries once. Prints "busy" and exits 1 if the lock is taken, else
//       prints "locked", keeps the lock until stdin reaches end of file (or
//       SECONDS, default 60, pass), releases it and prints "released".
//   php redis_peer.php DSN RESOURCE try|try-read
//       Tries once and prints "acquired" (then releases) or "busy".
//
// DSN: redis://[:password@]host[:port][/db]. The lock's TTL is 300 s
// (Symfony's default). IPCLOCK_SYMFONY_AUTOLOAD overrides the autoloader's
// path (Debian's php-symfony-lock by default).

declare(strict_types=1);

require __DIR__ . '/peer_common.php';

use Symfony\Component\Lock\Store\RedisStore;

[$dsn, $resource, $mode, $seconds] =
    symfony_peer_args($argv, 'redis_peer.php DSN RESOURCE hold|hold-read|try|try-read');

$parts = parse_url($dsn);
if ($parts === false || ($parts['scheme'] ?? '') !== 'redis' || !isset($parts['host'])) {
    fwrite(STDERR, "redis_peer.php: bad DSN\n");
    exit(64);
}
$redis = new \Redis();
$redis->connect($parts['host'], (int) ($parts['port'] ?? 6379), 5.0);
if (isset($parts['pass']) && $parts['pass'] !== '') {
    $redis->auth(isset($parts['user']) && $parts['user'] !== ''
        ? [$parts['user'], rawurldecode($parts['pass'])]
        : rawurldecode($parts['pass']));
}
$db = (int) ltrim($parts['path'] ?? '', '/');
if ($db !== 0) {
    $redis->select($db);
}

run_lock_mode(symfony_lock(new RedisStore($redis, 300.0), $resource, 300.0), $mode, $seconds);
