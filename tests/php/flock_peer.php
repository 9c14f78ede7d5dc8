<?php
// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A PHP application's side of the flock interop tests: Symfony Lock's
// FlockStore on a given dir, run by tests/php_interop_test.cc.
//
//   php flock_peer.php DIR RESOURCE hold|hold-read [SECONDS]
//       Tries once. Prints "busy" and exits 1 if the lock is taken, else
//       prints "locked", keeps the lock until stdin reaches end of file (or
//       SECONDS, default 60, pass), releases it and prints "released".
//   php flock_peer.php DIR RESOURCE try|try-read
//       Tries once and prints "acquired" (then releases) or "busy".
//
// IPCLOCK_SYMFONY_AUTOLOAD overrides the autoloader's path (Debian's
// php-symfony-lock by default).

declare(strict_types=1);

require __DIR__ . '/peer_common.php';

use Symfony\Component\Lock\Store\FlockStore;

[$dir, $resource, $mode, $seconds] =
    symfony_peer_args($argv, 'flock_peer.php DIR RESOURCE hold|hold-read|try|try-read');

run_lock_mode(symfony_lock(new FlockStore($dir), $resource, null), $mode, $seconds);
