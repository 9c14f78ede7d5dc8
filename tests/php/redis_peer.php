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

$autoload = getenv('IPCLOCK_SYMFONY_AUTOLOAD') ?: '/usr/share/php/Symfony/Component/Lock/autoload.php';
require $autoload;

use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\Store\RedisStore;

if ($argc < 4) {
    fwrite(STDERR, "usage: redis_peer.php DSN RESOURCE hold|hold-read|try|try-read [SECONDS]\n");
    exit(64);
}
[, $dsn, $resource, $mode] = $argv;
$seconds = (int) ($argv[4] ?? 60);
$read = str_ends_with($mode, '-read');

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

$factory = new LockFactory(new RedisStore($redis, 300.0));
// No release on destruction: the script says when it lets go.
$lock = $factory->createLock($resource, 300.0, false);
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
stream_select($readable, $none, $none2, $seconds);
$lock->release();
echo "released\n";
