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

$autoload = getenv('IPCLOCK_SYMFONY_AUTOLOAD') ?: '/usr/share/php/Symfony/Component/Lock/autoload.php';
require $autoload;

use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\Store\SemaphoreStore;

if ($argc < 3) {
    fwrite(STDERR, "usage: semaphore_peer.php RESOURCE hold|try|wait [SECONDS]\n");
    exit(64);
}
[, $resource, $mode] = $argv;
$seconds = (int) ($argv[3] ?? 60);

$factory = new LockFactory(new SemaphoreStore());
$lock = $factory->createLock($resource, null, false);

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
stream_select($readable, $none, $none2, $seconds);
$lock->release();
echo "released\n";
