/* Pack / Unpack throughput of vector types against memcpy of the same number
 * of bytes (not a test; run by hand: dt_bench [MiB of packed data]).
 * Vector of n blocks of B bytes at stride 2B, for several B, and a
 * struct {int; double} vector (two small blocks per element). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double best(double t, double b) { return t < b ? t : b; }

static void run(const char *name, MPI_Datatype t, int count, size_t bytes, char *src, char *packed, int reps)
{
    double tp = 1e9, tu = 1e9, tm = 1e9;
    for (int r = 0; r < reps; r++) {
        int pos = 0;
        double t0 = MPI_Wtime();
        MPI_Pack(src, count, t, packed, (int)bytes, &pos, MPI_COMM_WORLD);
        double t1 = MPI_Wtime();
        pos = 0;
        MPI_Unpack(packed, (int)bytes, &pos, src, count, t, MPI_COMM_WORLD);
        double t2 = MPI_Wtime();
        memcpy(src, packed, bytes);
        __asm__ volatile("" ::"r"(src) : "memory");
        double t3 = MPI_Wtime();
        tp = best(tp, t1 - t0);
        tu = best(tu, t2 - t1);
        tm = best(tm, t3 - t2);
    }
    double g = (double)bytes / 1e9;
    printf("%-28s %8.2f GB/s pack %8.2f GB/s unpack %8.2f GB/s memcpy  (pack/memcpy %.0f%%)\n", name, g / tp, g / tu,
           g / tm, 100.0 * tm / tp);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 64;
    size_t bytes = mib << 20;
    char *src = malloc(2 * bytes + 64), *packed = malloc(bytes);
    memset(src, 1, 2 * bytes + 64);
    memset(packed, 2, bytes);
    static const int bls[] = {4, 8, 16, 24, 64, 256, 4096};
    for (size_t i = 0; i < sizeof bls / sizeof bls[0]; i++) {
        int b = bls[i];
        MPI_Datatype v;
        MPI_Type_vector((int)(bytes / (size_t)b), b, 2 * b, MPI_BYTE, &v);
        MPI_Type_commit(&v);
        char name[64];
        snprintf(name, sizeof name, "vector, %d-byte blocks", b);
        run(name, v, 1, bytes, src, packed, 5);
        MPI_Type_free(&v);
    }
    /* doubles, stride 2: MPI_Type_vector(n, 1, 2, MPI_DOUBLE), count 1 */
    MPI_Datatype v;
    MPI_Type_vector((int)(bytes / 8), 1, 2, MPI_DOUBLE, &v);
    MPI_Type_commit(&v);
    run("vector(n,1,2,MPI_DOUBLE)", v, 1, bytes, src, packed, 5);
    MPI_Type_free(&v);
    /* struct {int; double} with padding: two blocks per element */
    int bl[2] = {1, 1};
    MPI_Aint d[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, st;
    MPI_Type_create_struct(2, bl, d, ty, &st);
    MPI_Type_commit(&st);
    run("struct{int;double} x n", st, (int)(bytes / 12), bytes / 12 * 12, src, packed, 5);
    MPI_Type_free(&st);
    free(src);
    free(packed);
    MPI_Finalize();
    return 0;
}
