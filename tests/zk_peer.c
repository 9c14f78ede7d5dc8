/* Copyright 2026 The ipclock Authors.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Another ZooKeeper client for the zookeeper store's tests, written against
 * the C client alone: the peer in Symfony's layout (PHP's zookeeper
 * extension is not packaged for Debian, and zkCli.sh starts a JVM per
 * command), and the hand that deletes or inspects nodes behind a holder's
 * back.
 *
 *   zk_peer SERVERS hold PATH DATA      creates an EPHEMERAL node (as
 *       Symfony's ZookeeperStore does), prints "locked CZXID", keeps it
 *       until stdin reaches end of file, then closes the session (which
 *       deletes the node) and prints "released"; prints "busy" and exits 1
 *       if the node exists
 *   zk_peer SERVERS delete PATH         "deleted" or "nonode"
 *   zk_peer SERVERS get PATH            the data, or "nonode"
 *   zk_peer SERVERS stat PATH           "czxid=N ephemeral=0|1 version=N", or "nonode"
 *   zk_peer SERVERS ls PATH             the children, sorted, one a line
 *
 * Exit status 0, or 1 for "busy", 2 for a connection failure, 64 for usage.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zookeeper/zookeeper.h>

static int compare(const void* a, const void* b) {
  return strcmp(*(char* const*)a, *(char* const*)b);
}

static void ignore_events(zhandle_t* zh, int type, int state, const char* path, void* ctx) {
  (void)zh;
  (void)type;
  (void)state;
  (void)path;
  (void)ctx;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: zk_peer SERVERS hold|delete|get|stat|ls PATH [DATA]\n");
    return 64;
  }
  const char* servers = argv[1];
  const char* cmd = argv[2];
  const char* path = argv[3];
  zoo_set_log_stream(fopen("/dev/null", "w"));
  zhandle_t* zh = zookeeper_init(servers, ignore_events, 10000, NULL, NULL, 0);
  if (zh == NULL) return 2;
  /* The first request waits for the connection. */
  struct Stat stat;
  int rc = ZOK;
  for (int i = 0; i < 200 && zoo_state(zh) != ZOO_CONNECTED_STATE; ++i) usleep(25000);
  if (zoo_state(zh) != ZOO_CONNECTED_STATE) {
    fprintf(stderr, "zk_peer: cannot connect to %s\n", servers);
    return 2;
  }
  if (strcmp(cmd, "hold") == 0 && argc == 5) {
    char created[1024];
    rc = zoo_create2(zh, path, argv[4], (int)strlen(argv[4]), &ZOO_OPEN_ACL_UNSAFE,
                     ZOO_EPHEMERAL, created, sizeof(created), &stat);
    if (rc == ZNODEEXISTS) {
      printf("busy\n");
      zookeeper_close(zh);
      return 1;
    }
    if (rc != ZOK) {
      fprintf(stderr, "zk_peer: create %s: %s\n", path, zerror(rc));
      return 2;
    }
    printf("locked %lld\n", (long long)stat.czxid);
    fflush(stdout);
    char buf[64];
    while (fread(buf, 1, sizeof(buf), stdin) > 0) {
    }
    zookeeper_close(zh);
    printf("released\n");
    return 0;
  }
  if (strcmp(cmd, "delete") == 0) {
    rc = zoo_delete(zh, path, -1);
    printf("%s\n", rc == ZOK ? "deleted" : rc == ZNONODE ? "nonode" : zerror(rc));
  } else if (strcmp(cmd, "get") == 0) {
    char data[4096];
    int len = sizeof(data);
    rc = zoo_get(zh, path, 0, data, &len, &stat);
    if (rc == ZOK) {
      printf("%.*s\n", len < 0 ? 0 : len, data);
    } else {
      printf("%s\n", rc == ZNONODE ? "nonode" : zerror(rc));
    }
  } else if (strcmp(cmd, "stat") == 0) {
    rc = zoo_exists(zh, path, 0, &stat);
    if (rc == ZOK) {
      printf("czxid=%lld ephemeral=%d version=%d\n", (long long)stat.czxid,
             stat.ephemeralOwner != 0 ? 1 : 0, stat.version);
    } else {
      printf("%s\n", rc == ZNONODE ? "nonode" : zerror(rc));
    }
  } else if (strcmp(cmd, "ls") == 0) {
    struct String_vector children;
    rc = zoo_get_children(zh, path, 0, &children);
    if (rc == ZOK) {
      qsort(children.data, (size_t)children.count, sizeof(char*), compare);
      for (int i = 0; i < children.count; ++i) printf("%s\n", children.data[i]);
      deallocate_String_vector(&children);
    } else {
      printf("%s\n", rc == ZNONODE ? "nonode" : zerror(rc));
    }
  } else {
    fprintf(stderr, "zk_peer: unknown command %s\n", cmd);
    return 64;
  }
  zookeeper_close(zh);
  return 0;
}
