#ifndef FERRY_INIT_H
#define FERRY_INIT_H
int ferry_init(int required, int *provided);
int ferry_finalize(void);
int ferry_is_main_thread(void);

/* The runtime's users (MPI-4): the world model (MPI_Init ... MPI_Finalize)
 * and any number of sessions. The first user brings the runtime up, the
 * last one takes it down; after that it cannot come up again.
 * start: MPI_SUCCESS, or -1 when the runtime was finalized already. */
int ferry_runtime_start(int required, int *provided, int world_model);
void ferry_runtime_stop(int world_model);
/* MPI_Init has been called (and MPI_Finalize, for the second). */
int ferry_world_initialized(void);
int ferry_world_finalized(void);
#endif
