// Copyright 2026 The ipclock Authors.
// SPDX-License-Identifier: Apache-2.0
//
// Counting semaphores on Redis in the layout of Symfony Semaphore's
// RedisStore, so that PHP's symfony/semaphore and ipclock count against one
// limit: a semaphore R is the sorted sets `{R}:weight` (each holder's token
// and weight) and `{R}:time` (its expiry in whole Unix seconds); a
// holder is in both or in neither, and one whose expiry has passed holds
// nothing. See redis_scripts.h for the scripts.
//
// Caveats, as Symfony has them: the limit is not recorded (each save
// compares the weights held with its own limit, so holders that disagree
// may hold more than the smaller one); a waiter polls (5 to 50 ms) with no
// place in a queue, so a heavy waiter may wait behind lighter holders for
// as long as they keep coming; a killed holder's permits come back when its
// lease ends, and nobody is told (the layout keeps no marker). Expiries
// are the server's clock here and the client's in PHP: hosts need NTP.

#ifndef IPCLOCK_STORES_REDIS_SEMAPHORE_STORE_H_
#define IPCLOCK_STORES_REDIS_SEMAPHORE_STORE_H_

#include <memory>
#include <string>

#include "core/key_naming.h"
#include "ipclock/store.h"
#include "ipclock/stores/redis_store.h"

namespace ipclock {

// A store of semaphores on the server of `options`, on a connection of its
// own (made at the first request), naming keys as `naming` does.
std::shared_ptr<Store> NewRedisSemaphoreStore(const RedisStoreOptions& options,
                                              KeyNaming naming, std::string describe);

}  // namespace ipclock

#endif  // IPCLOCK_STORES_REDIS_SEMAPHORE_STORE_H_
