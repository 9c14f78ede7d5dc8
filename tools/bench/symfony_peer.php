<?php
// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// The Symfony Lock peer of tools/bench: times Symfony's own stores on the
// operations the benchmark times for ipclock, and prints one
// "<figure> <ns per operation>" line each ("note <text>" when a store is
// skipped). Run by the benchmark; by hand:
//   php symfony_peer.php --dir /dev/shm/somedir [--iterations N] [--reps R]
// IPCLOCK_TEST_REDIS / IPCLOCK_TEST_POSTGRES add the remote stores.

require_once '/usr/share/php/Symfony/Component/Lock/autoload.php';

use Symfony\Component\Lock\LockFactory;
use Symfony\Component\Lock\Store\FlockStore;
use Symfony\Component\Lock\Store\PostgreSqlStore;
use Symfony\Component\Lock\Store\RedisStore;
use Symfony\Component\Lock\Store\SemaphoreStore;

$opts = getopt('', ['dir:', 'iterations:', 'reps:']);
$dir = $opts['dir'] ?? null;
$iterations = (int)($opts['iterations'] ?? 20000);
$reps = (int)($opts['reps'] ?? 5);
if ($dir === null) {
    fwrite(STDERR, "usage: symfony_peer.php --dir DIR [--iterations N] [--reps R]\n");
    exit(64);
}

// Median ns per operation over $reps runs of $n operations, after a warm-up.
function median_ns(callable $body, int $n, int $reps): float
{
    $body(max(intdiv($n, 10), 10));
    $runs = [];
    for ($r = 0; $r < $reps; $r++) {
        $t = hrtime(true);
        $body($n);
        $runs[] = (hrtime(true) - $t) / $n;
    }
    sort($runs);
    return $runs[intdiv(count($runs), 2)];
}

// A full cycle: create the lock, acquire, release, let it go.
function cycle(LockFactory $factory, string $resource): callable
{
    return function (int $n) use ($factory, $resource) {
        for ($i = 0; $i < $n; $i++) {
            $lock = $factory->createLock($resource);
            $lock->acquire();
            $lock->release();
            unset($lock);
        }
    };
}

// A reused handle: one lock, acquired and released again and again.
function reused(LockFactory $factory, string $resource): callable
{
    $lock = $factory->createLock($resource);
    return function (int $n) use ($lock) {
        for ($i = 0; $i < $n; $i++) {
            $lock->acquire();
            $lock->release();
        }
    };
}

function report(string $figure, float $ns): void
{
    printf("%s %.1f\n", $figure, $ns);
}

$flock = new LockFactory(new FlockStore($dir));
report('flock_cycle_ns', median_ns(cycle($flock, 'bench-symfony'), $iterations, $reps));
report('flock_reused_ns', median_ns(reused($flock, 'bench-symfony'), $iterations, $reps));

if (extension_loaded('sysvsem')) {
    $sem = new LockFactory(new SemaphoreStore());
    $name = 'bench-symfony-' . getmypid();
    report('semaphore_cycle_ns', median_ns(cycle($sem, $name), $iterations, $reps));
    report('semaphore_reused_ns', median_ns(reused($sem, $name), $iterations, $reps));
} else {
    echo "note Symfony SemaphoreStore skipped: PHP has no sysvsem\n";
}

$remote = intdiv($iterations, 10);
$redisDsn = getenv('IPCLOCK_TEST_REDIS');
if ($redisDsn !== false && $redisDsn !== '' && extension_loaded('redis')) {
    $u = parse_url($redisDsn);
    $redis = new Redis();
    $redis->connect($u['host'] ?? '127.0.0.1', $u['port'] ?? 6379);
    if (isset($u['pass'])) {
        $redis->auth(isset($u['user']) ? [$u['user'], $u['pass']] : $u['pass']);
    }
    $factory = new LockFactory(new RedisStore($redis));
    $name = 'bench-symfony-' . getmypid();
    report('redis_cycle_ns', median_ns(cycle($factory, $name), $remote, $reps));
} else {
    echo "note Symfony RedisStore skipped: IPCLOCK_TEST_REDIS unset or no php-redis\n";
}

// Symfony Semaphore on the same server: a reused semaphore of limit 3
// taking one permit and giving it back, as the bench's ipclock row does.
$semaphoreAutoload = '/usr/share/php/Symfony/Component/Semaphore/autoload.php';
if ($redisDsn !== false && $redisDsn !== '' && extension_loaded('redis') &&
    is_readable($semaphoreAutoload)) {
    require_once $semaphoreAutoload;
    $factory = new Symfony\Component\Semaphore\SemaphoreFactory(
        new Symfony\Component\Semaphore\Store\RedisStore($redis));
    $semaphore = $factory->createSemaphore('bench-symfony-sem-' . getmypid(), 3, 1, 300.0, false);
    report('redis_semaphore_ns', median_ns(function (int $n) use ($semaphore) {
        for ($i = 0; $i < $n; $i++) {
            $semaphore->acquire();
            $semaphore->release();
        }
    }, $remote, $reps));
} else {
    echo "note Symfony Semaphore skipped: IPCLOCK_TEST_REDIS unset, no php-redis or no php-symfony-semaphore\n";
}

$pgDsn = getenv('IPCLOCK_TEST_POSTGRES');
if ($pgDsn !== false && $pgDsn !== '' && extension_loaded('pdo_pgsql')) {
    $u = parse_url(str_replace('+advisory', '', $pgDsn));
    $pdoDsn = sprintf('pgsql:host=%s;port=%d;dbname=%s', $u['host'] ?? '127.0.0.1',
                      $u['port'] ?? 5432, ltrim($u['path'] ?? '/postgres', '/'));
    $pdo = new PDO($pdoDsn, $u['user'] ?? null, $u['pass'] ?? null);
    $factory = new LockFactory(new PostgreSqlStore($pdo));
    $name = 'bench-symfony-' . getmypid();
    report('postgres_cycle_ns', median_ns(cycle($factory, $name), $remote, $reps));
} else {
    echo "note Symfony PostgreSqlStore skipped: IPCLOCK_TEST_POSTGRES unset or no pdo_pgsql\n";
}
