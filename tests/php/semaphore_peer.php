<?php
// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// A PHP application's side of the SysV semaphore interop tests: Symfony
// Lock's SemaphoreStore, run by tests/sysv_semaphore_test.cc.
//
//   php semaphore_peer.php RESOURCE hold [SECONDS]
//       Tries once. Prints "busy" and exits 1 if the lock is taken, else
//       prints "locked", keeps the lock until stdin reaches end of file (or
//       SECONDS, default 60, pass), releases it and prints "released".
//   php semaphore_peer.php RESOURCE try
//       Tries once and prints "acquired" (then releases) or "busy".
//   php semaphore_peer.php RESOURCE wait
//       Waits for the lock (Symfony's blocking loop), prints "acquired",
//       releases.
//
// IPCLOCK_SYMFONY_AUTOLOAD overrides the autoloader's path (Debian's
// php-symfony-lock by default).

declare(strict_types=1);

require __DIR__ . '/peer_common.php';
require_symfony_lock();

use Symfony\Component\Lock\Store\SemaphoreStore;

[$resource, $mode] = peer_args($argv, 2, 'semaphore_peer.php RESOURCE hold|try|wait [SECONDS]');
$seconds = (int) ($argv[3] ?? 60);

run_lock_mode(symfony_lock(new SemaphoreStore(), $resource, null), $mode, $seconds);
