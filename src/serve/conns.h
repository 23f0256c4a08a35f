/*
 * The connections of `s2s serve` (serve/server.h): what each address has open, the
 * accept policy, and the deadlines of the connections that wait.
 *
 * A new connection from an address (an IPv6 one by its /64) that already has
 * max_conns_per_ip open is closed as soon as it is accepted. A connection that has no
 * request in progress waits: a new one must complete its request head within
 * head_timeout seconds of its accept, one kept alive after an answer within
 * idle_timeout seconds of it, or it is shut down (the sweeper, a thread of its own,
 * watches the deadlines). At max_conns open, a new connection shuts down the oldest
 * waiting one, new ones before kept ones, and is refused only when none waits.
 *
 * The hooks are libmicrohttpd's: serve_conns_accept is its accept policy (cls: the
 * ServeConns), serve_conns_opened and serve_conns_closed are called from its
 * connection notification, and run on its polling thread.
 */
#ifndef S2S_SERVE_CONNS_H
#define S2S_SERVE_CONNS_H

#include <microhttpd.h>
#include <stdbool.h>
#include <sys/socket.h>

#include "base/json.h"

/* libmicrohttpd's own limit stays this far above max_conns, so that the accept policy
   sees every new connection (at its own limit libmicrohttpd stops accepting, leaving
   new clients waiting in the backlog) and connections shut down but not yet closed
   have room. */
enum { SERVE_CONN_SLACK = 64 };

typedef struct ServeConns ServeConns;

ServeConns *serve_conns_create(int max_conns, int max_conns_per_ip, double head_timeout, int idle_timeout);
/* Starts the sweeper. */
void serve_conns_start(ServeConns *k);
/* Stops the sweeper (before libmicrohttpd stops). */
void serve_conns_stop(ServeConns *k);
/* After libmicrohttpd has stopped (or without serve_conns_start). */
void serve_conns_free(ServeConns *k);

/* libmicrohttpd's accept policy; cls is the ServeConns. */
enum MHD_Result serve_conns_accept(void *cls, const struct sockaddr *addr, socklen_t len);
/* A connection started (it sets *socket_context) and one closed. */
void serve_conns_opened(ServeConns *k, struct MHD_Connection *conn, void **socket_context);
void serve_conns_closed(ServeConns *k, void **socket_context);
/* A connection whose request head is in; false when it was already shut down. */
bool serve_conns_busy(ServeConns *k, struct MHD_Connection *conn);
/* An answered connection that libmicrohttpd keeps open. */
void serve_conns_kept(ServeConns *k, struct MHD_Connection *conn);
/* A request that timed out (a body late, or no traffic): counted in /health. */
void serve_conns_timed_out(ServeConns *k);
/* The fields of /health's "connections" object: open, refused, evicted, timed_out,
   idle_closed. */
void serve_conns_health(const ServeConns *k, JsonWriter *w);

#endif
