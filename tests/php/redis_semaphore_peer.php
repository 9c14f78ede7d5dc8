<?php
// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A PHP application's side of the Redis semaphore interop test: Symfony
// Semaphore's RedisStore over php-redis, run by
// tests/redis_semaphore_php_test.cc.
//
//   php redis_semaphore_peer.php DSN RESOURCE LIMIT WEIGHT TTL MODE
//     try      tries once; prints "acquired" (then releases) or "busy"
//     hold     tries once; "busy" and exit 1, or "locked", then holds until
//              stdin reaches end of file, releases, prints "released"
//     refresh  as hold, refreshing the TTL every second while it holds
//     abandon  tries once; "busy" and exit 1, or "locked", and exits
//              without releasing: the permits stay until the TTL ends
//
// DSN: redis://host:port. IPCLOCK_SYMFONY_SEMAPHORE_AUTOLOAD overrides the
// autoloader's path (Debian's php-symfony-semaphore by default).

declare(strict_types=1);

require __DIR__ . '/peer_common.php';

use Symfony\Component\Semaphore\SemaphoreFactory;
use Symfony\Component\Semaphore\Store\RedisStore;

[$dsn, $resource, $limit, $weight, $ttl, $mode] = peer_args(
    $argv, 6, 'redis_semaphore_peer.php DSN RESOURCE LIMIT WEIGHT TTL try|hold|refresh|abandon', 6);
require_once getenv('IPCLOCK_SYMFONY_SEMAPHORE_AUTOLOAD')
    ?: '/usr/share/php/Symfony/Component/Semaphore/autoload.php';

$parts = parse_url($dsn);
if ($parts === false || ($parts['scheme'] ?? '') !== 'redis' || !isset($parts['host'])) {
    fwrite(STDERR, "redis_semaphore_peer.php: bad DSN\n");
    exit(64);
}
$redis = new \Redis();
$redis->connect($parts['host'], (int) ($parts['port'] ?? 6379), 5.0);

$semaphore = (new SemaphoreFactory(new RedisStore($redis)))
    ->createSemaphore($resource, (int) $limit, (int) $weight, (float) $ttl, false);
$got = $semaphore->acquire();
if ($mode === 'try') {
    echo $got ? "acquired\n" : "busy\n";
    if ($got) {
        $semaphore->release();
    }
    exit(0);
}
if (!$got) {
    echo "busy\n";
    exit(1);
}
echo "locked\n";
if ($mode === 'abandon') {
    exit(0);
}
fflush(STDOUT);
$none = null;
$none2 = null;
for (;;) {
    $readable = [STDIN];
    if (stream_select($readable, $none, $none2, 1) !== 0) {
        break;  // end of file: the test lets go
    }
    if ($mode === 'refresh') {
        $semaphore->refresh((float) $ttl);
    }
}
$semaphore->release();
echo "released\n";
exit(0);
