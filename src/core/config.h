/* Configuration: every tunable is a FERRY_* environment variable, declared
 * once as data (name, type, default, help) in config.c. `ferry_info --env`
 * (and `mpiexec --help-env`) print that table; nothing else reads getenv for
 * tunables. */
#ifndef FERRY_CONFIG_H
#define FERRY_CONFIG_H
#include <stdio.h>

struct ferry_config {
    long shm_ring;           /* bytes per sender->receiver ring */
    long shm_max_packet;     /* largest packet, header included */
    long eager_max;          /* largest message sent eagerly (-1: derived) */
    long cma;                /* single copy with process_vm_readv: -1 auto, 0 off, 1 required */
    long cma_chunk;          /* bytes per process_vm_readv call */
    long spin;               /* empty progress polls before a waiting rank yields the CPU */
    long verbose;            /* diagnostic output level */
    long shm_backend;        /* enum ferry_shm_backend */
    long oversubscribe;      /* -1 detect, 0 never sleep, 1 always sleep when idle */
};
enum ferry_shm_backend { FERRY_SHM_BACKEND_MEMFD, FERRY_SHM_BACKEND_POSIX };
extern struct ferry_config ferry_cfg;

/* Read FERRY_* from the environment; a malformed value is a fatal error that
 * names the variable. */
void ferry_config_load(void);
/* Print the table of variables with defaults, current values and help. */
void ferry_config_print(FILE *out);

#endif
