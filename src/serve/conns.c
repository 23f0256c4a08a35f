/* The connections of `s2s serve` (serve/conns.h). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/err.h"
#include "base/json.h"
#include "serve/conns.h"

/* One connection, from its accept to its close. While it has no request in progress
   it waits in one of two lists, oldest first: `fresh` (it has sent no complete
   request head yet) or `kept` (kept alive after an answer). */
typedef struct Conn {
    struct Conn *prev, *next;
    struct ConnList *list;    /* the list it waits in, or NULL while a request is in progress */
    int fd;
    unsigned char addr[16];   /* its address as counted (addr_key) */
    double since;             /* when it began to wait: its accept, or its last answer */
    bool closing;             /* shut down by the server, not yet closed by libmicrohttpd */
} Conn;

typedef struct ConnList {
    Conn *head, *tail;
} ConnList;

/* The open connections of an address (addr_key), in an open-addressing table. */
typedef struct AddrCount {
    unsigned char key[16];
    int n; /* 0: an empty slot */
} AddrCount;

struct ServeConns {
    int max_conns, max_conns_per_ip;
    double head_timeout;
    int idle_timeout;
    long open;                /* open connections (the polling thread's alone) */
    AddrCount *addrs;         /* (naddrs, a power of two) the polling thread's alone */
    size_t naddrs;
    uint64_t addr_seed;
    pthread_mutex_t mu;       /* the lists, closing and each Conn's list and closing */
    ConnList fresh, kept;
    long closing;             /* connections shut down, not yet closed */
    atomic_long refused, evicted, timed_out, idle_closed;
    pthread_t sweeper;
    pthread_cond_t sweep_cv;  /* (mu) signalled to stop the sweeper */
    bool sweeping;            /* (mu) */
};

/* The address a connection counts against: an IPv4 address as its IPv4-mapped IPv6
   form, an IPv6 address by its /64 prefix (what one host or one network is given). */
static void addr_key(const struct sockaddr *a, unsigned char key[16])
{
    memset(key, 0, 16);
    if (a->sa_family == AF_INET) {
        key[10] = key[11] = 0xff;
        memcpy(key + 12, &((const struct sockaddr_in *)a)->sin_addr, 4);
    } else if (a->sa_family == AF_INET6) {
        const unsigned char *b = ((const struct sockaddr_in6 *)a)->sin6_addr.s6_addr;
        static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        if (!memcmp(b, mapped, 12))
            memcpy(key, b, 16);
        else
            memcpy(key, b, 8);
    }
}

static size_t addr_home(const ServeConns *k, const unsigned char *key)
{
    uint64_t h = k->addr_seed;
    for (int i = 0; i < 16; i++)
        h = (h ^ key[i]) * 0x100000001b3ULL;
    h ^= h >> 29;
    return (size_t)h & (k->naddrs - 1);
}

/* The slot that holds key, or the empty slot where it would go. */
static size_t addr_slot(const ServeConns *k, const unsigned char *key)
{
    size_t i = addr_home(k, key);
    while (k->addrs[i].n && memcmp(k->addrs[i].key, key, 16) != 0)
        i = (i + 1) & (k->naddrs - 1);
    return i;
}

/* Adds d (+1 or -1) to the count of key; a count that reaches 0 leaves the table
   (linear probing's backward shift, so that no slot is left marked deleted). */
static void addr_add(ServeConns *k, const unsigned char *key, int d)
{
    size_t mask = k->naddrs - 1, i = addr_slot(k, key);
    if (d > 0) {
        memcpy(k->addrs[i].key, key, 16);
        k->addrs[i].n += d;
        return;
    }
    if (!k->addrs[i].n || (k->addrs[i].n += d) > 0)
        return;
    for (size_t j = i;;) {
        k->addrs[i].n = 0;
        size_t home;
        do {
            j = (j + 1) & mask;
            if (!k->addrs[j].n)
                return;
            home = addr_home(k, k->addrs[j].key);
        } while (i <= j ? i < home && home <= j : i < home || home <= j);
        k->addrs[i] = k->addrs[j];
        i = j;
    }
}

static void list_append(ConnList *l, Conn *c)
{
    c->list = l;
    c->next = NULL;
    c->prev = l->tail;
    if (l->tail)
        l->tail->next = c;
    else
        l->head = c;
    l->tail = c;
}

static void list_remove(Conn *c)
{
    ConnList *l = c->list;
    if (!l)
        return;
    if (c->prev)
        c->prev->next = c->next;
    else
        l->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    else
        l->tail = c->prev;
    c->list = NULL;
    c->prev = c->next = NULL;
}

/* Shuts a waiting connection down (mu held): its client sees the connection
   closed, and libmicrohttpd, reading its end, closes it (serve_conns_closed). Only the
   polling thread closes a connection's descriptor, and only after the notification
   that takes it out of the lists, so fd is still this connection's. */
static void conn_shut(ServeConns *k, Conn *c, atomic_long *count)
{
    list_remove(c);
    c->closing = true;
    k->closing++;
    shutdown(c->fd, SHUT_RDWR);
    atomic_fetch_add(count, 1);
}

/* A connection whose request head is in leaves its list; false when the server has
   already shut it down. */
bool serve_conns_busy(ServeConns *k, struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    Conn *c = ci ? ci->socket_context : NULL;
    if (!c)
        return true;
    pthread_mutex_lock(&k->mu);
    bool open = !c->closing;
    list_remove(c);
    pthread_mutex_unlock(&k->mu);
    /* while a request is in progress, libmicrohttpd closes the connection after
       idle_timeout seconds without traffic; a waiting connection has no timeout of
       libmicrohttpd's (the sweeper's deadlines instead), which keeps it in the list
       that libmicrohttpd does not walk whole at each event */
    if (open)
        MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, (unsigned)k->idle_timeout);
    return open;
}

/* An answered connection that libmicrohttpd keeps open waits for its next request. */
void serve_conns_kept(ServeConns *k, struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    Conn *c = ci ? ci->socket_context : NULL;
    if (!c)
        return;
    MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
    pthread_mutex_lock(&k->mu);
    if (!c->closing && !c->list) {
        c->since = clock_now();
        list_append(&k->kept, c);
    }
    pthread_mutex_unlock(&k->mu);
}

/* A new connection: refused (closed at once) when its address has max_conns_per_ip
   open, or when max_conns are open and none of them waits; otherwise accepted, and at
   max_conns the oldest waiting connection, a fresh one first, is shut down for it.
   Connections shut down and not yet closed may take half of SERVE_CONN_SLACK more;
   beyond, a new one is refused until libmicrohttpd has closed them (within its next
   turn). */
enum MHD_Result serve_conns_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
    ServeConns *k = cls;
    unsigned char key[16];
    addr_key(addr, key);
    if (k->addrs[addr_slot(k, key)].n >= k->max_conns_per_ip) {
        atomic_fetch_add(&k->refused, 1);
        return MHD_NO;
    }
    enum MHD_Result ok = MHD_YES;
    pthread_mutex_lock(&k->mu);
    bool full = k->open - k->closing >= k->max_conns;
    Conn *old = !full ? NULL : k->fresh.head ? k->fresh.head : k->kept.head;
    if ((full && !old) || k->open >= (long)k->max_conns + SERVE_CONN_SLACK / 2) {
        atomic_fetch_add(&k->refused, 1);
        ok = MHD_NO;
    } else if (old) {
        conn_shut(k, old, &k->evicted);
    }
    pthread_mutex_unlock(&k->mu);
    return ok;
}

/* A connection started: it waits in `fresh` (socket_context: its Conn). */
void serve_conns_opened(ServeConns *k, struct MHD_Connection *conn, void **socket_context)
{
    Conn *c = XCNEW(Conn, 1);
    const union MHD_ConnectionInfo *fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *ad = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    c->fd = fd ? fd->connect_fd : -1;
    if (ad)
        addr_key(ad->client_addr, c->addr);
    addr_add(k, c->addr, 1);
    pthread_mutex_lock(&k->mu);
    c->since = clock_now();
    list_append(&k->fresh, c);
    pthread_mutex_unlock(&k->mu);
    *socket_context = c;
    k->open++;
}

void serve_conns_closed(ServeConns *k, void **socket_context)
{
    Conn *c = *socket_context;
    if (c) {
        pthread_mutex_lock(&k->mu);
        list_remove(c);
        if (c->closing)
            k->closing--;
        pthread_mutex_unlock(&k->mu);
        addr_add(k, c->addr, -1);
        free(c);
        *socket_context = NULL;
    }
    k->open--;
}

/* The sweeper thread: shuts down a fresh connection head_timeout seconds after its
   accept and a kept one idle_timeout seconds after its last answer. Each list is in
   the order of its deadlines; it looks again at the next one, at most 0.1 s later
   (a connection that joins a list has a later deadline than any before it). */
static void *sweep(void *arg)
{
    ServeConns *k = arg;
    pthread_mutex_lock(&k->mu);
    while (k->sweeping) {
        double now = clock_now(), next = now + 0.1;
        while (k->fresh.head && k->fresh.head->since + k->head_timeout <= now)
            conn_shut(k, k->fresh.head, &k->timed_out);
        while (k->kept.head && k->kept.head->since + k->idle_timeout <= now)
            conn_shut(k, k->kept.head, &k->idle_closed);
        if (k->fresh.head && k->fresh.head->since + k->head_timeout < next)
            next = k->fresh.head->since + k->head_timeout;
        if (k->kept.head && k->kept.head->since + k->idle_timeout < next)
            next = k->kept.head->since + k->idle_timeout;
        /* the condition variable's clock is clock_now's (CLOCK_MONOTONIC) */
        struct timespec at = {.tv_sec = (time_t)next};
        at.tv_nsec = (long)((next - (double)at.tv_sec) * 1e9);
        pthread_cond_timedwait(&k->sweep_cv, &k->mu, &at);
    }
    pthread_mutex_unlock(&k->mu);
    return NULL;
}

ServeConns *serve_conns_create(int max_conns, int max_conns_per_ip, double head_timeout, int idle_timeout)
{
    ServeConns *k = XCNEW(ServeConns, 1);
    k->max_conns = max_conns;
    k->max_conns_per_ip = max_conns_per_ip;
    k->head_timeout = head_timeout;
    k->idle_timeout = idle_timeout;
    pthread_mutex_init(&k->mu, NULL);
    /* at most max_conns + SERVE_CONN_SLACK addresses, in a table at most half full */
    k->naddrs = 64;
    while (k->naddrs < 2 * ((size_t)max_conns + SERVE_CONN_SLACK))
        k->naddrs *= 2;
    k->addrs = XCNEW(AddrCount, k->naddrs);
    k->addr_seed = 0xcbf29ce484222325ULL ^ (uint64_t)(clock_now() * 1e9) ^ ((uint64_t)getpid() << 32);
    return k;
}

void serve_conns_start(ServeConns *k)
{
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&k->sweep_cv, &ca);
    pthread_condattr_destroy(&ca);
    k->sweeping = true;
    if (pthread_create(&k->sweeper, NULL, sweep, k) != 0)
        die("cannot start the thread that closes late connections");
}

void serve_conns_stop(ServeConns *k)
{
    pthread_mutex_lock(&k->mu);
    k->sweeping = false;
    pthread_cond_signal(&k->sweep_cv);
    pthread_mutex_unlock(&k->mu);
    pthread_join(k->sweeper, NULL);
    pthread_cond_destroy(&k->sweep_cv);
}

void serve_conns_free(ServeConns *k)
{
    pthread_mutex_destroy(&k->mu);
    free(k->addrs);
    free(k);
}

void serve_conns_timed_out(ServeConns *k)
{
    atomic_fetch_add(&k->timed_out, 1);
}

void serve_conns_health(const ServeConns *k, JsonWriter *w)
{
    json_put_int(w, "open", k->open);
    json_put_int(w, "refused", atomic_load(&k->refused));
    json_put_int(w, "evicted", atomic_load(&k->evicted));
    json_put_int(w, "timed_out", atomic_load(&k->timed_out));
    json_put_int(w, "idle_closed", atomic_load(&k->idle_closed));
}
