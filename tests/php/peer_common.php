<?php
// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// What every PHP peer of the interop tests does alike: read its arguments,
// load Symfony Lock, open a PDO connection, and the try / hold / wait flows
// whose lines ("acquired", "busy", "locked", "released") the C++ tests read.
// Each peer requires this file from its own directory.

declare(strict_types=1);

use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\LockInterface;
use Symfony\Component\Lock\PersistingStoreInterface;

// The arguments after the script's name; exits 64 with "usage: USAGE" when
// there are fewer than `min` (or, when `max` is given, more than `max`).
function peer_args(array $argv, int $min, string $usage, ?int $max = null): array
{
    $args = array_slice($argv, 1);
    if (count($args) < $min || ($max !== null && count($args) > $max)) {
        fwrite(STDERR, "usage: $usage\n");
        exit(64);
    }
    return $args;
}

// Loads Symfony Lock; IPCLOCK_SYMFONY_AUTOLOAD overrides the autoloader's
// path (Debian's php-symfony-lock by default).
function require_symfony_lock(): void
{
    require_once getenv('IPCLOCK_SYMFONY_AUTOLOAD')
        ?: '/usr/share/php/Symfony/Component/Lock/autoload.php';
}

// For a peer that holds or tries one Symfony lock: loads Symfony Lock and
// reads TARGET RESOURCE MODE [SECONDS] (`usage` without the last), SECONDS
// 60 by default.
function symfony_peer_args(array $argv, string $usage): array
{
    require_symfony_lock();
    [$target, $resource, $mode] = peer_args($argv, 3, "$usage [SECONDS]");
    return [$target, $resource, $mode, (int) ($argv[4] ?? 60)];
}

// A lock on `resource` in `store` with `ttl` seconds (null: none) that is
// not released on destruction: the peer says when it lets go.
function symfony_lock(PersistingStoreInterface $store, string $resource, ?float $ttl): LockInterface
{
    return (new LockFactory($store))->createLock($resource, $ttl, false);
}

// A PDO connection that throws on errors, with the credentials from
// PDO_USER and PDO_PASSWORD.
function pdo_from_env(string $dsn, array $attributes = []): PDO
{
    return new PDO($dsn, getenv('PDO_USER') ?: null, getenv('PDO_PASSWORD') ?: null,
                   [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION] + $attributes);
}

// Returns once stdin reaches end of file (the test lets go) or `seconds`
// pass.
function await_stdin_eof(int $seconds): void
{
    fflush(STDOUT);
    $readable = [STDIN];
    $none = null;
    $none2 = null;
    stream_select($readable, $none, $none2, $seconds);
}

// Runs `mode` on a Symfony lock and exits:
//   wait: acquires blocking, prints "acquired", releases.
//   try, try-read: tries once and prints "acquired" (then releases) or
//       "busy".
//   hold, hold-read: tries once; prints "busy" and exits 1 if the lock is
//       taken, else prints "locked", keeps the lock until stdin reaches end
//       of file (or `seconds` pass), releases it and prints "released".
function run_lock_mode(LockInterface $lock, string $mode, int $seconds): void
{
    if ($mode === 'wait') {
        $lock->acquire(true);
        echo "acquired\n";
        $lock->release();
        exit(0);
    }
    $got = str_ends_with($mode, '-read') ? $lock->acquireRead(false) : $lock->acquire(false);
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
    await_stdin_eof($seconds);
    $lock->release();
    echo "released\n";
    exit(0);
}
