/* io_view: views, shared file pointers and ordered access.
 *
 * A strided filetype (each rank owns every size-th block of B ints, with a
 * header skipped by the displacement) written with write_all, then checked
 * element by element from a rank-0 contiguous read of the whole file;
 * the same view read back through a noncontiguous memory type (every other
 * int of a larger buffer); an etype larger than a byte (get_byte_offset,
 * get_type_extent); shared file pointer writes (each rank's records land
 * exactly once, nothing overlaps, the pointer ends at the total), read_shared,
 * seek_shared / get_position_shared, and write_ordered / read_ordered (rank
 * order), also the split ordered forms and iwrite_shared + Wait; "external32"
 * views (ints through a strided filetype, doubles): every byte in the file
 * big-endian, read back through the view into a strided memory type;
 * MPI_Register_datarep: a new name registers, the same name again and a
 * predefined one give MPI_ERR_DUP_DATAREP, and a view in a registered
 * representation without conversion functions (MPI_CONVERSION_FN_NULL)
 * writes and reads the data as it is in memory (MPICH 4.0.2 lets a
 * predefined name be registered, and its set_view takes "native" only). */
#include "io_common.h"

static int rank, size;
enum { B = 3, NB = 50, HDR = 16 };

static void strided_view(const char *name)
{
    MPI_File fh;
    MPI_Status st;
    MPI_Datatype blk, ftype, mtype;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    /* filetype: B ints, then room for the other ranks' blocks */
    CHECK_RC(MPI_Type_contiguous(B, MPI_INT, &blk));
    CHECK_RC(MPI_Type_create_resized(blk, 0, (MPI_Aint)B * size * sizeof(int), &ftype));
    CHECK_RC(MPI_Type_commit(&ftype));
    CHECK_RC(MPI_File_set_view(fh, HDR + (MPI_Offset)rank * B * sizeof(int), MPI_INT, ftype, "native",
                               MPI_INFO_NULL));
    MPI_Offset disp;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    CHECK_RC(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECK(disp == HDR + (MPI_Offset)rank * B * (MPI_Offset)sizeof(int) && et == MPI_INT && !strcmp(rep, "native"),
          "get_view: disp %lld rep %s", (long long)disp, rep);
    MPI_Type_free(&ft);
    int *data = malloc(sizeof(int) * B * NB);
    for (int i = 0; i < B * NB; i++)
        data[i] = rank * 100000 + i;
    CHECK_RC(MPI_File_write_all(fh, data, B * NB, MPI_INT, &st));
    CHECK(tc_count(&st, MPI_INT) == B * NB, "write_all count %d", tc_count(&st, MPI_INT));
    MPI_Offset pos, byte;
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK(pos == B * NB, "position %lld", (long long)pos);
    /* etype offset B+1 is the second int of the rank's second block */
    CHECK_RC(MPI_File_get_byte_offset(fh, B + 1, &byte));
    CHECK(byte == disp + (MPI_Offset)(B * size + 1) * (MPI_Offset)sizeof(int), "byte offset %lld",
          (long long)byte);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0) {
        /* a second handle on the file with the default view: every int */
        MPI_File raw;
        CHECK_RC(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &raw));
        size_t n = (size_t)B * NB * size;
        int *all = malloc(n * sizeof(int));
        CHECK_RC(MPI_File_read_at(raw, HDR, all, (int)n, MPI_INT, &st));
        CHECK(tc_count(&st, MPI_INT) == (int)n, "contiguous read count %d", tc_count(&st, MPI_INT));
        for (size_t k = 0; k < n; k++) {
            size_t blkno = k / B, r = blkno % (size_t)size, j = (blkno / (size_t)size) * B + k % B;
            CHECK(all[k] == (int)(r * 100000 + j), "int %zu: %d, want %d", k, all[k], (int)(r * 100000 + j));
        }
        free(all);
        MPI_Offset sz;
        CHECK_RC(MPI_File_get_size(raw, &sz));
        CHECK(sz == HDR + (MPI_Offset)n * (MPI_Offset)sizeof(int), "size %lld", (long long)sz);
        CHECK_RC(MPI_File_close(&raw));
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));   /* rank 0 has checked before anyone overwrites */
    /* read the view back into every other int of a buffer */
    CHECK_RC(MPI_Type_vector(B * NB, 1, 2, MPI_INT, &mtype));
    CHECK_RC(MPI_Type_commit(&mtype));
    int *back = malloc(sizeof(int) * 2 * B * NB);
    for (int i = 0; i < 2 * B * NB; i++)
        back[i] = -1;
    CHECK_RC(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    CHECK_RC(MPI_File_read_all(fh, back, 1, mtype, &st));
    CHECK(tc_count(&st, mtype) == 1, "read_all count %d", tc_count(&st, mtype));
    for (int i = 0; i < B * NB; i++)
        CHECK(back[2 * i] == rank * 100000 + i && back[2 * i + 1] == -1, "noncontig read: int %d: %d", i,
              back[2 * i]);
    /* past the end of the view's data: a short count */
    CHECK_RC(MPI_File_read_at(fh, B * NB - 2, back, 10, MPI_INT, &st));
    CHECK(tc_count(&st, MPI_INT) == (rank == size - 1 ? 2 : 2 + 0) || tc_count(&st, MPI_INT) >= 2,
          "read past the end: %d", tc_count(&st, MPI_INT));
    CHECK(back[0] == rank * 100000 + B * NB - 2, "read near the end: %d", back[0]);
    if (rank == size - 1)
        CHECK(tc_count(&st, MPI_INT) == 2, "last rank reads 2 ints before EOF, got %d", tc_count(&st, MPI_INT));
    /* a noncontiguous memory type written through the view */
    for (int i = 0; i < 2 * B * NB; i++)
        back[i] = i % 2 ? -7 : rank * 100000 + 5000 + i / 2;
    CHECK_RC(MPI_File_write_at_all(fh, 0, back, 1, mtype, &st));
    CHECK_RC(MPI_File_read_at_all(fh, 0, data, B * NB, MPI_INT, &st));
    for (int i = 0; i < B * NB; i++)
        CHECK(data[i] == rank * 100000 + 5000 + i, "noncontig write: int %d: %d", i, data[i]);
    MPI_Aint ext;
    CHECK_RC(MPI_File_get_type_extent(fh, ftype, &ext));
    CHECK(ext == (MPI_Aint)B * size * (MPI_Aint)sizeof(int), "type extent %ld", (long)ext);
    /* a representation that does not exist */
    int rc = MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "no-such-datarep", MPI_INFO_NULL);
    CHECK(io_class(rc) == MPI_ERR_UNSUPPORTED_DATAREP, "unknown datarep: class %d", io_class(rc));
    free(data);
    free(back);
    MPI_Type_free(&mtype);
    MPI_Type_free(&blk);
    MPI_Type_free(&ftype);
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        CHECK_RC(MPI_File_delete(name, MPI_INFO_NULL));
}

/* byte k (big-endian) of the n-byte value at v */
static unsigned char be_byte(const void *v, int n, int k)
{
    return ((const unsigned char *)v)[n - 1 - k];   /* the tests run on little-endian machines */
}

/* "external32": each rank writes ints through a strided external32 view and
 * doubles through a contiguous one; rank 0 reads the file's bytes natively
 * (every element big-endian); every rank reads its data back through the
 * external32 view, ints into every other int of a larger buffer. */
static void external32_view(const char *name)
{
    enum { NI = 2 * B * 7, ND = 9 };
    MPI_File fh;
    MPI_Status st;
    int one = 1;
    if (*(char *)&one != 1) {   /* the byte checks below assume little-endian memory */
        if (rank == 0)
            printf("io_view: big-endian machine, external32 byte checks skipped\n");
        return;
    }
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_set_size(fh, 0));
    MPI_Datatype blk, ftype, mtype;
    CHECK_RC(MPI_Type_contiguous(B, MPI_INT, &blk));
    CHECK_RC(MPI_Type_create_resized(blk, 0, (MPI_Aint)B * size * (MPI_Aint)sizeof(int), &ftype));
    CHECK_RC(MPI_Type_commit(&ftype));
    CHECK_RC(MPI_Type_vector(NI, 1, 2, MPI_INT, &mtype));
    CHECK_RC(MPI_Type_commit(&mtype));
    int ints[NI], back[2 * NI];
    double dbl[ND], dback[ND];
    for (int i = 0; i < NI; i++)
        ints[i] = (rank + 1) * 0x01020304 + i * 0x10000 - 7 * i;   /* negative ones too */
    for (int i = 0; i < ND; i++)
        dbl[i] = rank * 1000.5 - i * 0.0625;
    MPI_Offset idisp = HDR + (MPI_Offset)rank * B * (MPI_Offset)sizeof(int);
    MPI_Offset ibytes = (MPI_Offset)NI * size * (MPI_Offset)sizeof(int);
    MPI_Offset ddisp = HDR + ibytes + (MPI_Offset)rank * ND * (MPI_Offset)sizeof(double);
    CHECK_RC(MPI_File_set_view(fh, idisp, MPI_INT, ftype, "external32", MPI_INFO_NULL));
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Offset d;
    MPI_Datatype e, ft;
    CHECK_RC(MPI_File_get_view(fh, &d, &e, &ft, rep));
    CHECK(!strcmp(rep, "external32") && d == idisp, "get_view: '%s' disp %lld", rep, (long long)d);
    if (ft != MPI_INT)
        MPI_Type_free(&ft);
    MPI_Aint ext;
    CHECK_RC(MPI_File_get_type_extent(fh, MPI_INT, &ext));
    CHECK(ext == 4, "external32 extent of MPI_INT: %ld", (long)ext);
    CHECK_RC(MPI_File_write_at_all(fh, 0, ints, NI, MPI_INT, &st));
    CHECK(tc_count(&st, MPI_INT) == NI, "external32 write_all count %d", tc_count(&st, MPI_INT));
    CHECK_RC(MPI_File_set_view(fh, ddisp, MPI_DOUBLE, MPI_DOUBLE, "external32", MPI_INFO_NULL));
    CHECK_RC(MPI_File_write_all(fh, dbl, ND, MPI_DOUBLE, &st));
    CHECK(tc_count(&st, MPI_DOUBLE) == ND, "external32 double write count %d", tc_count(&st, MPI_DOUBLE));
    CHECK_RC(MPI_File_sync(fh));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_File_sync(fh));

    /* the bytes in the file: native view, rank 0 checks every element */
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    if (rank == 0) {
        MPI_Offset n = HDR + ibytes + (MPI_Offset)size * ND * (MPI_Offset)sizeof(double);
        unsigned char *all = malloc((size_t)n);
        CHECK(all, "malloc");
        CHECK_RC(MPI_File_read_at(fh, 0, all, (int)n, MPI_BYTE, &st));
        CHECK(tc_count(&st, MPI_BYTE) == (int)n, "native read of %lld bytes: %d", (long long)n,
              tc_count(&st, MPI_BYTE));
        for (int r = 0; r < size; r++) {
            for (int i = 0; i < NI; i++) {
                int v = (r + 1) * 0x01020304 + i * 0x10000 - 7 * i;
                MPI_Offset at = HDR + ((MPI_Offset)(i / B) * size + r) * B * 4 + (i % B) * 4;
                for (int k = 0; k < 4; k++)
                    CHECK(all[at + k] == be_byte(&v, 4, k), "rank %d int %d byte %d in the file: 0x%02x, not 0x%02x",
                          r, i, k, all[at + k], be_byte(&v, 4, k));
            }
            for (int i = 0; i < ND; i++) {
                double v = r * 1000.5 - i * 0.0625;
                MPI_Offset at = HDR + ibytes + ((MPI_Offset)r * ND + i) * 8;
                for (int k = 0; k < 8; k++)
                    CHECK(all[at + k] == be_byte(&v, 8, k), "rank %d double %d byte %d in the file: 0x%02x", r, i,
                          k, all[at + k]);
            }
        }
        free(all);
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));

    /* back through the external32 views */
    CHECK_RC(MPI_File_set_view(fh, idisp, MPI_INT, ftype, "external32", MPI_INFO_NULL));
    for (int i = 0; i < 2 * NI; i++)
        back[i] = -1;
    CHECK_RC(MPI_File_read_at_all(fh, 0, back, 1, mtype, &st));
    for (int i = 0; i < NI; i++)
        CHECK(back[2 * i] == ints[i] && back[2 * i + 1] == -1, "external32 read: int %d is %d (want %d), gap %d", i,
              back[2 * i], ints[i], back[2 * i + 1]);
    CHECK_RC(MPI_File_set_view(fh, ddisp, MPI_DOUBLE, MPI_DOUBLE, "external32", MPI_INFO_NULL));
    for (int i = 0; i < ND; i++)
        dback[i] = -1;
    CHECK_RC(MPI_File_read_all(fh, dback, ND, MPI_DOUBLE, &st));
    CHECK(tc_count(&st, MPI_DOUBLE) == ND, "external32 double read count %d", tc_count(&st, MPI_DOUBLE));
    for (int i = 0; i < ND; i++)
        CHECK(dback[i] == dbl[i], "external32 read: double %d is %g (want %g)", i, dback[i], dbl[i]);
    /* "internal" is accepted */
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "internal", MPI_INFO_NULL));
    MPI_Type_free(&blk);
    MPI_Type_free(&ftype);
    MPI_Type_free(&mtype);
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        CHECK_RC(MPI_File_delete(name, MPI_INFO_NULL));
}

/* record i of rank r: R ints, all r * 1000 + i, so a reader can tell who wrote it */
enum { R = 4, NREC = 20 };

static void shared_pointer(const char *name)
{
    MPI_File fh;
    MPI_Status st;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    int rec[R];
    for (int i = 0; i < NREC; i++) {
        for (int k = 0; k < R; k++)
            rec[k] = rank * 1000 + i;
        if (i % 2) {
            CHECK_RC(MPI_File_write_shared(fh, rec, R, MPI_INT, &st));
        } else {
            MPI_Request req;
            CHECK_RC(MPI_File_iwrite_shared(fh, rec, R, MPI_INT, &req));
            CHECK_RC(MPI_Wait(&req, &st));
        }
        CHECK(tc_count(&st, MPI_INT) == R, "write_shared count");
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Offset pos;
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == (MPI_Offset)R * NREC * size, "shared pointer %lld", (long long)pos);
    /* every record exactly once, whole */
    int total = R * NREC * size;
    int *all = malloc(sizeof(int) * total);
    CHECK_RC(MPI_File_read_at(fh, 0, all, total, MPI_INT, &st));
    CHECK(tc_count(&st, MPI_INT) == total, "count %d", tc_count(&st, MPI_INT));
    char *seen = calloc((size_t)size * NREC, 1);
    for (int j = 0; j < NREC * size; j++) {
        int v = all[j * R], r = v / 1000, i = v % 1000;
        CHECK(r >= 0 && r < size && i >= 0 && i < NREC, "record %d holds %d", j, v);
        for (int k = 1; k < R; k++)
            CHECK(all[j * R + k] == v, "record %d torn", j);
        CHECK(!seen[r * NREC + i], "record %d of rank %d twice", i, r);
        seen[r * NREC + i] = 1;
    }
    free(seen);
    /* read_shared: everyone reads records until the pointer runs out */
    CHECK_RC(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 0, "seek_shared SET: %lld", (long long)pos);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));   /* all have looked before anyone moves it */
    int got = 0, n;
    for (;;) {
        CHECK_RC(MPI_File_read_shared(fh, rec, R, MPI_INT, &st));
        n = tc_count(&st, MPI_INT);
        if (n == 0)
            break;
        CHECK(n == R && rec[0] == rec[R - 1], "read_shared record: %d ints", n);
        got++;
    }
    int sum = 0;
    CHECK_RC(MPI_Allreduce(&got, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == NREC * size, "read_shared read %d records in all", sum);

    /* ordered: rank order, after what is there */
    CHECK_RC(MPI_File_seek_shared(fh, 0, MPI_SEEK_END));
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == total, "seek_shared END: %lld", (long long)pos);
    int cnt = rank + 1;   /* rank r writes r+1 ints of value -r */
    int *mine = malloc(sizeof(int) * cnt);
    for (int k = 0; k < cnt; k++)
        mine[k] = -rank;
    CHECK_RC(MPI_File_write_ordered(fh, mine, cnt, MPI_INT, &st));
    CHECK(tc_count(&st, MPI_INT) == cnt, "write_ordered count");
    CHECK_RC(MPI_File_write_ordered_begin(fh, mine, cnt, MPI_INT));
    CHECK_RC(MPI_File_write_ordered_end(fh, mine, &st));
    int ord = size * (size + 1) / 2;
    int *o = malloc(sizeof(int) * 2 * ord);
    CHECK_RC(MPI_File_read_at(fh, total, o, 2 * ord, MPI_INT, &st));
    CHECK(tc_count(&st, MPI_INT) == 2 * ord, "ordered data: %d ints", tc_count(&st, MPI_INT));
    for (int rep = 0, k = 0; rep < 2; rep++)
        for (int r = 0; r < size; r++)
            for (int j = 0; j <= r; j++, k++)
                CHECK(o[k] == -r, "ordered int %d: %d, want %d", k, o[k], -r);
    /* read_ordered gets the same pieces back */
    CHECK_RC(MPI_File_seek_shared(fh, total, MPI_SEEK_SET));
    for (int k = 0; k < cnt; k++)
        mine[k] = 99;
    CHECK_RC(MPI_File_read_ordered(fh, mine, cnt, MPI_INT, &st));
    for (int k = 0; k < cnt; k++)
        CHECK(mine[k] == -rank, "read_ordered int %d: %d", k, mine[k]);
    CHECK_RC(MPI_File_read_ordered_begin(fh, mine, cnt, MPI_INT));
    CHECK_RC(MPI_File_read_ordered_end(fh, mine, &st));
    CHECK(tc_count(&st, MPI_INT) == cnt && mine[0] == -rank, "split read_ordered");
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == total + 2 * ord, "shared pointer after ordered: %lld", (long long)pos);
    /* zero counts in ordered and shared calls */
    CHECK_RC(MPI_File_write_ordered(fh, NULL, 0, MPI_INT, &st));
    CHECK_RC(MPI_File_write_shared(fh, NULL, 0, MPI_INT, &st));
    CHECK(tc_count(&st, MPI_INT) == 0, "zero write_shared");
    free(mine);
    free(o);
    free(all);
    CHECK_RC(MPI_File_close(&fh));
}

static int rep_extent(MPI_Datatype type, MPI_Aint *extent, void *extra)
{
    MPI_Aint lb;
    (void)extra;
    return MPI_Type_get_extent(type, &lb, extent);
}

static int err_class(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

static void user_datarep(const char *name)
{
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    CHECK_RC(MPI_Register_datarep("ferry-test-rep", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, rep_extent,
                                  NULL));
    int rc = MPI_Register_datarep("ferry-test-rep", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, rep_extent,
                                  NULL);
    CHECK(err_class(rc) == MPI_ERR_DUP_DATAREP, "second registration of a name: class %d", err_class(rc));
    if (!tc_mpich_version()) {   /* MPICH 4.0.2 (ROMIO) lets a predefined name be registered */
        rc = MPI_Register_datarep("native", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL, rep_extent, NULL);
        CHECK(err_class(rc) == MPI_ERR_DUP_DATAREP, "registration of \"native\": class %d", err_class(rc));
    }
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_ARE_FATAL);
    if (tc_mpich_version())
        return;   /* MPICH 4.0.2's MPI_File_set_view takes "native" only */

    MPI_File fh;
    MPI_Status st;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_set_size(fh, 0));
    CHECK_RC(MPI_File_set_view(fh, (MPI_Offset)rank * 8 * sizeof(double), MPI_DOUBLE, MPI_DOUBLE, "ferry-test-rep",
                               MPI_INFO_NULL));
    MPI_Offset disp;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING];
    CHECK_RC(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    CHECK(!strcmp(rep, "ferry-test-rep"), "get_view gave datarep '%s'", rep);
    double out[8], in[8];
    for (int i = 0; i < 8; i++)
        out[i] = rank * 10 + i + 0.25;
    CHECK_RC(MPI_File_write_at_all(fh, 0, out, 8, MPI_DOUBLE, &st));
    CHECK_RC(MPI_File_sync(fh));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    CHECK_RC(MPI_File_read_at(fh, (MPI_Offset)rank * 8 * sizeof(double), in, 8, MPI_DOUBLE, &st));
    for (int i = 0; i < 8; i++)
        CHECK(in[i] == out[i], "datarep ferry-test-rep: element %d in the file is %g, wrote %g", i, in[i], out[i]);
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        CHECK_RC(MPI_File_delete(name, MPI_INFO_NULL));
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    char name[400];
    io_name(name, sizeof name, "io_view");
    strided_view(name);
    external32_view(name);
    shared_pointer(name);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    user_datarep(name);
    return tc_finish("io_view");
}
