/* ferry_info: what this Ferry build is and how to tune it.
 *   ferry_info          version
 *   ferry_info --env    the table of FERRY_* environment variables */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include "core/config.h"

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--env")) {
        printf("Ferry %s tunables (environment variables):\n\n", FERRY_VERSION_STRING);
        ferry_config_print(stdout);
        return 0;
    }
    printf("Ferry %s: MPI %d.%d, MPICH ABI (libmpi.so.12 / libmpich.so.12)\n", FERRY_VERSION_STRING, MPI_VERSION,
           MPI_SUBVERSION);
    printf("Run 'ferry_info --env' for the FERRY_* tunables.\n");
    return 0;
}
