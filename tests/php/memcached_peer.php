<?php
// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A PHP application's side of the memcached interop tests: Symfony Lock's
// MemcachedStore over php-memcached, run by tests/memcached_store_test.cc.
//
//   php memcached_peer.php SERVERS PROTOCOL RESOURCE hold [SECONDS]
//       Tries once. Prints "busy" and exits 1 if the lock is taken, else
//       prints "locked", keeps the lock until stdin reaches end of file (or
//       SECONDS, default 60, pass), releases it and prints "released".
//   php memcached_peer.php SERVERS PROTOCOL RESOURCE try
//       Tries once and prints "acquired" (then releases) or "busy".
//   php memcached_peer.php SERVERS PROTOCOL RESOURCE get
//       Prints the key's value, or "none".
//
// SERVERS: host:port[,host:port...]. PROTOCOL: "binary" sets up the client
// as Symfony's memcached: DSNs do (binary protocol, libketama-compatible
// hashing, no-block, TCP_NODELAY); "text" is a plain `new Memcached()`
// with libketama-compatible hashing. The lock's TTL is 300 s (Symfony's
// default). IPCLOCK_SYMFONY_AUTOLOAD overrides the autoloader's path.

declare(strict_types=1);

require __DIR__ . '/peer_common.php';
require_symfony_lock();

use Symfony\Component\Lock\Store\MemcachedStore;

[$servers, $protocol, $resource, $mode] =
    peer_args($argv, 4, 'memcached_peer.php SERVERS binary|text RESOURCE hold|try|get [SECONDS]');
$seconds = (int) ($argv[5] ?? 60);

$memcached = new \Memcached();
if ($protocol === 'binary') {
    $memcached->setOption(\Memcached::OPT_BINARY_PROTOCOL, true);
    $memcached->setOption(\Memcached::OPT_NO_BLOCK, true);
    $memcached->setOption(\Memcached::OPT_TCP_NODELAY, true);
}
$memcached->setOption(\Memcached::OPT_LIBKETAMA_COMPATIBLE, true);
foreach (explode(',', $servers) as $server) {
    [$host, $port] = explode(':', $server);
    $memcached->addServer($host, (int) $port);
}

if ($mode === 'get') {
    $value = $memcached->get($resource);
    echo $value === false ? "none\n" : "$value\n";
    exit(0);
}

run_lock_mode(symfony_lock(new MemcachedStore($memcached, 300), $resource, 300.0), $mode, $seconds);
