/* The socket transport: processes of different worlds of one universe
 * (parents and the children they spawned, or jobs joined by
 * MPI_Comm_accept/connect) on this node.
 *
 * Each process of a universe listens on an abstract UNIX socket named after
 * the universe and its uid (nothing in the file system, gone when the
 * process is). A process sends to another over a stream socket it connects
 * itself (so each direction of a pair is one ordered stream, and two
 * processes connecting to each other at once need no tie-break), and
 * receives over the sockets others connected to it. Every connection opens
 * with a hello carrying the universe's secret; the listener also checks the
 * peer runs as the same user (SO_PEERCRED). Anything else is dropped.
 *
 * Packets travel as on every transport: the 64-byte header and its payload,
 * padded to 8 bytes so the next header stays aligned in the receive buffer.
 * No single copy: large messages go by the copy path (CTS and DATA). */
#ifndef FERRY_SOCK_H
#define FERRY_SOCK_H
#include <stddef.h>

#include "transport/transport.h"

extern const struct ferry_transport ferry_transport_sock;

/* Set up listening (universe and secret from the launcher, see boot.h).
 * Without a universe the transport stays off and this returns -1. */
int ferry_sock_setup(const char *universe, const char *secret);
/* Whether the transport is set up; whether it has peers to poll. */
int ferry_sock_ready(void);
extern int ferry_sock_active;
/* Make uid reachable through this transport (a process of another world). */
void ferry_sock_add_peer(int uid);
/* Bytes committed and not yet handed to the kernel. */
size_t ferry_sock_pending(void);

/* Rendezvous sockets for ports (MPI_Open_port): listen on / connect to the
 * abstract name "ferry-<universe>-<name>", authenticated the same way.
 * listen: the descriptor or -1. dial: the connected, authenticated
 * descriptor, or -1 (errno set) when nobody listens there. accept_ready:
 * one authenticated connection from a listening descriptor, -1 when none is
 * waiting (non-blocking). The descriptors are blocking after dial/accept. */
int ferry_sock_port_listen(const char *name);
int ferry_sock_port_dial(const char *name);
int ferry_sock_port_accept(int lfd);
/* Whole-buffer blocking I/O on such a descriptor: 0, or -1 on EOF/error. */
int ferry_sock_write_all(int fd, const void *buf, size_t n);
int ferry_sock_read_all(int fd, void *buf, size_t n);

#endif
