/* ferry-tune --p2p (p2p_model.c): measure eager, pipelined and single-copy
 * one-way times between ranks 0 and 1 and write them to `out` for
 * FERRY_P2P_MODEL (quick: few iterations, for tests). Collective over
 * MPI_COMM_WORLD; returns an exit status. */
#ifndef FERRY_TUNE_P2P_MODEL_H
#define FERRY_TUNE_P2P_MODEL_H
#include <stddef.h>
int ferry_tune_p2p(int rank, int size, const char *out, size_t maxbytes, int verbose, int quick);
#endif
