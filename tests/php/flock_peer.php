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

$autoload = getenv('IPCLOCK_SYMFONY_AUTOLOAD') ?: '/usr/share/php/Symfony/Component/Lock/autoload.php';
require $autoload;

use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\Store\FlockStore;

if ($argc < 4) {
    fwrite(STDERR, "usage: flock_peer.php DIR RESOURCE hold|hold-read|try|try-read [SECONDS]\n");
    exit(64);
}
[, $dir, $resource, $mode] = $argv;
$seconds = (int) ($argv[4] ?? 60);
$read = str_ends_with($mode, '-read');

$factory = new LockFactory(new FlockStore($dir));
// No TTL and no release on destruction: the script says when it lets go.
$lock = $factory->createLock($resource, null, false);
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
