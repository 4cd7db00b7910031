/* The universe: the worlds one launcher started (the initial job, and the
 * jobs MPI_Comm_spawn added), and how two groups of it get connected
 * (MPI_Comm_accept / MPI_Comm_connect, which spawn and MPI_Comm_join build
 * on). Processes of other worlds are reached through the socket transport
 * (transport/sock) and named by their uid (runtime.h). */
#ifndef FERRY_UNIVERSE_H
#define FERRY_UNIVERSE_H
#include <stddef.h>

struct ferry_boot_info;
struct ferry_comm;

/* At the end of MPI_Init: set up the socket transport, and when this world
 * was spawned, connect to the parents (collective over MPI_COMM_WORLD). */
void ferry_universe_init(const struct ferry_boot_info *info);
void ferry_universe_finalize(void);
/* The universe's name (world 0's job id), the same in every world of it;
 * this job's id outside a universe. For names of shared objects. */
const char *ferry_universe_name(void);
/* Whether this process belongs to a launcher's universe (Ferry's mpiexec). */
int ferry_universe_ready(void);
/* Join a universe now if this process is in none: a singleton starts an
 * mpiexec of its own that adopts it (boot.h, ferry_boot_adopt). 0 when in
 * one, else -1 with the reason in why. */
int ferry_universe_start(char *why, size_t whylen);
/* The intercommunicator to the parents (NULL: not spawned, or disconnected). */
extern struct ferry_comm *ferry_universe_parent;

/* Ports. open: 0 with the port's name in name[cap], or -1 (errno). close:
 * 0, or -1 when this process did not open that port. */
int ferry_port_open(char *name, size_t cap);
int ferry_port_close(const char *name);

/* Collective over the intracommunicator c: connect c's group with the group
 * that does the opposite (accept against connect) on the same port; root's
 * port argument alone counts. A connecting root gives up after timeout
 * seconds without an accept (< 0: never); accepting waits for ever. Returns
 * MPI_SUCCESS with the new intercommunicator in *out, or an error class with
 * a reason in why. */
int ferry_universe_connect(const char *port, int root, struct ferry_comm *c, int accept, double timeout,
                           struct ferry_comm **out,
                           char *why, size_t whylen);

#endif
