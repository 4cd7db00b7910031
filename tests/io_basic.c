/* io_basic: MPI-IO file manipulation and contiguous data access.
 *
 * open errors with MPI_ERRORS_RETURN and their classes (no such file, exists
 * with EXCL, bad amodes, RDONLY+CREATE, NOT_SAME amodes, delete of a missing
 * file), the default file error handler (MPI_ERRORS_RETURN on
 * MPI_FILE_NULL) and a user handler being called with the file handle,
 * write/read back at explicit offsets (every byte checked, from another
 * rank too), individual pointers (seek/get_position/get_byte_offset),
 * collective forms, zero counts, reads past the end of file (short count),
 * set_size/get_size/preallocate, nonblocking + Wait/Test + Get_count,
 * split collectives, atomicity, get_amode/get_group/info, DELETE_ON_CLOSE,
 * APPEND, MPI_COMM_SELF opens, access checks (write on RDONLY). */
#include "io_common.h"

static int rank, size;
enum { N = 1000 };   /* bytes per rank per record */

static int user_eh_calls, user_eh_code;
static MPI_File user_eh_file;
static void user_eh(MPI_File *fh, int *code, ...)
{
    user_eh_calls++;
    user_eh_code = *code;
    user_eh_file = *fh;
}

/* a handler that sets the code the call returns: MPI_SUCCESS, or another */
static int reset_to;
static void reset_eh(MPI_File *fh, int *code, ...)
{
    (void)fh;
    user_eh_calls++;
    user_eh_code = *code;
    *code = reset_to;
}

static void open_errors(const char *name)
{
    MPI_File fh;
    MPI_Errhandler eh;
    CHECK_RC(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "default file errhandler is not MPI_ERRORS_RETURN");
    CHECK_RC(MPI_Errhandler_free(&eh));
    int rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(io_class(rc) == MPI_ERR_NO_SUCH_FILE, "open of a missing file: class %d", io_class(rc));
    CHECK(fh == MPI_FILE_NULL, "fh set on failure");
    rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    CHECK(io_class(rc) == MPI_ERR_AMODE, "RDONLY|CREATE: class %d", io_class(rc));
    rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    CHECK(io_class(rc) == MPI_ERR_AMODE, "RDWR|WRONLY: class %d", io_class(rc));
    rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    CHECK(io_class(rc) == MPI_ERR_AMODE, "no access mode: class %d", io_class(rc));
    if (size > 1) {
        int am = rank == 0 ? MPI_MODE_RDWR | MPI_MODE_CREATE : MPI_MODE_WRONLY | MPI_MODE_CREATE;
        rc = MPI_File_open(MPI_COMM_WORLD, name, am, MPI_INFO_NULL, &fh);
        CHECK(io_class(rc) == MPI_ERR_NOT_SAME, "different amodes: class %d", io_class(rc));
    }
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, MPI_INFO_NULL,
                           &fh));
    CHECK_RC(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "close did not reset the handle");
    rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, MPI_INFO_NULL, &fh);
    CHECK(io_class(rc) == MPI_ERR_FILE_EXISTS, "EXCL on an existing file: class %d", io_class(rc));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        CHECK_RC(MPI_File_delete(name, MPI_INFO_NULL));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    rc = MPI_File_delete(name, MPI_INFO_NULL);
    CHECK(io_class(rc) == MPI_ERR_NO_SUCH_FILE, "delete of a missing file: class %d", io_class(rc));
    /* an invalid handle: MPI_ERR_FILE */
    int v;
    rc = MPI_File_get_amode(MPI_FILE_NULL, &v);
    CHECK(io_class(rc) == MPI_ERR_FILE, "get_amode(MPI_FILE_NULL): class %d", io_class(rc));

    /* a user handler on MPI_FILE_NULL sees open errors */
    CHECK_RC(MPI_File_create_errhandler(user_eh, &eh));
    CHECK_RC(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    user_eh_calls = 0;
    rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(io_class(rc) == MPI_ERR_NO_SUCH_FILE && user_eh_calls == 1 && io_class(user_eh_code) ==
          MPI_ERR_NO_SUCH_FILE && user_eh_file == MPI_FILE_NULL, "user handler on MPI_FILE_NULL: rc %d calls %d",
          rc, user_eh_calls);
    CHECK_RC(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    CHECK_RC(MPI_Errhandler_free(&eh));

    /* the call returns the code as the handler left it */
    CHECK_RC(MPI_File_create_errhandler(reset_eh, &eh));
    CHECK_RC(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    CHECK_RC(MPI_Errhandler_free(&eh));
    int to[2] = {MPI_SUCCESS, MPI_ERR_IO};
    for (int i = 0; i < 2; i++) {
        user_eh_calls = 0;
        reset_to = to[i];
        fh = MPI_FILE_NULL;
        rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
        CHECK(rc == to[i] && user_eh_calls == 1 && io_class(user_eh_code) == MPI_ERR_NO_SUCH_FILE &&
                  fh == MPI_FILE_NULL,
              "handler resetting the code to %d: open returned %d, calls %d", to[i], rc, user_eh_calls);
    }
    CHECK_RC(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
}

static void explicit_offsets(const char *name)
{
    MPI_File fh;
    MPI_Status st;
    unsigned char *buf = malloc(N), *got = malloc((size_t)N * size);
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    int am;
    CHECK_RC(MPI_File_get_amode(fh, &am));
    CHECK(am == (MPI_MODE_RDWR | MPI_MODE_CREATE), "amode %d", am);
    MPI_Group g, wg;
    int res;
    CHECK_RC(MPI_File_get_group(fh, &g));
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    CHECK_RC(MPI_Group_compare(g, wg, &res));
    CHECK(res == MPI_IDENT, "file group differs from the communicator's");
    MPI_Group_free(&g);
    MPI_Group_free(&wg);

    /* the default file errhandler is inherited by new files */
    MPI_Errhandler eh;
    CHECK_RC(MPI_File_get_errhandler(fh, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "new file's errhandler is not MPI_ERRORS_RETURN");
    MPI_Errhandler_free(&eh);

    tc_fill(buf, N, rank, 1);
    CHECK_RC(MPI_File_write_at(fh, (MPI_Offset)rank * N, buf, N, MPI_BYTE, &st));
    CHECK(tc_count(&st, MPI_BYTE) == N, "write count %d", tc_count(&st, MPI_BYTE));
    CHECK_RC(MPI_File_sync(fh));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_File_sync(fh));
    MPI_Offset sz;
    CHECK_RC(MPI_File_get_size(fh, &sz));
    CHECK(sz == (MPI_Offset)N * size, "size %lld", (long long)sz);
    /* every rank reads everything */
    memset(got, 0, (size_t)N * size);
    CHECK_RC(MPI_File_read_at(fh, 0, got, N * size, MPI_BYTE, &st));
    CHECK(tc_count(&st, MPI_BYTE) == N * size, "read count %d", tc_count(&st, MPI_BYTE));
    for (int r = 0; r < size; r++) {
        long long bad = tc_check(got + (size_t)r * N, N, r, 1);
        CHECK(bad < 0, "byte %lld of rank %d's record", bad, r);
    }
    /* past the end: fewer elements, not an error */
    int ints[300];
    CHECK_RC(MPI_File_read_at(fh, (MPI_Offset)N * size - 10 * (int)sizeof(int), ints, 300, MPI_INT, &st));
    CHECK(tc_count(&st, MPI_INT) == 10, "read past EOF: count %d", tc_count(&st, MPI_INT));
    CHECK_RC(MPI_File_read_at(fh, (MPI_Offset)N * size + 100, ints, 300, MPI_INT, &st));
    CHECK(tc_count(&st, MPI_INT) == 0, "read beyond EOF: count %d", tc_count(&st, MPI_INT));
    /* zero counts, also with a NULL buffer */
    CHECK_RC(MPI_File_write_at(fh, 0, NULL, 0, MPI_INT, &st));
    CHECK(tc_count(&st, MPI_INT) == 0, "zero write count");
    CHECK_RC(MPI_File_read_at_all(fh, 0, NULL, 0, MPI_INT, &st));
    CHECK(tc_count(&st, MPI_INT) == 0, "zero read count");
    /* argument errors go to the file's handler (ERRORS_RETURN) */
    int rc = MPI_File_read_at(fh, -1, ints, 1, MPI_INT, &st);
    CHECK(io_class(rc) == MPI_ERR_ARG, "negative offset: class %d", io_class(rc));
    rc = MPI_File_read_at(fh, 0, ints, -1, MPI_INT, &st);
    CHECK(io_class(rc) == MPI_ERR_COUNT, "negative count: class %d", io_class(rc));

    /* collective write at offsets (once everyone has read the records it
     * overwrites), read back by another rank */
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    tc_fill(buf, N, rank, 2);
    CHECK_RC(MPI_File_write_at_all(fh, (MPI_Offset)rank * N, buf, N, MPI_BYTE, &st));
    CHECK(tc_count(&st, MPI_BYTE) == N, "write_at_all count");
    int peer = (rank + 1) % size;
    CHECK_RC(MPI_File_read_at_all(fh, (MPI_Offset)peer * N, got, N, MPI_BYTE, &st));
    CHECK(tc_check(got, N, peer, 2) < 0, "read_at_all of rank %d's record", peer);

    /* set_size / preallocate / get_size */
    CHECK_RC(MPI_File_set_size(fh, 100));
    CHECK_RC(MPI_File_get_size(fh, &sz));
    CHECK(sz == 100, "after set_size(100): %lld", (long long)sz);
    CHECK_RC(MPI_File_preallocate(fh, 5000));
    CHECK_RC(MPI_File_get_size(fh, &sz));
    CHECK(sz == 5000, "after preallocate(5000): %lld", (long long)sz);
    CHECK_RC(MPI_File_preallocate(fh, 10));
    CHECK_RC(MPI_File_get_size(fh, &sz));
    CHECK(sz == 5000, "preallocate must not shrink: %lld", (long long)sz);
    CHECK_RC(MPI_File_read_at(fh, 0, got, 100, MPI_BYTE, &st));
    CHECK(tc_check(got, 100, 0, 2) < 0, "set_size changed the data below it");
    if (size > 1) {
        rc = MPI_File_set_size(fh, rank);
        CHECK(io_class(rc) == MPI_ERR_NOT_SAME, "set_size with different sizes: class %d", io_class(rc));
    }

    /* atomicity */
    int flag = -1;
    CHECK_RC(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 0, "default atomicity %d", flag);
    CHECK_RC(MPI_File_set_atomicity(fh, 1));
    CHECK_RC(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 1, "atomicity after set %d", flag);
    tc_fill(buf, N, rank, 3);
    CHECK_RC(MPI_File_write_at(fh, (MPI_Offset)rank * N, buf, N, MPI_BYTE, &st));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_RC(MPI_File_read_at(fh, (MPI_Offset)peer * N, got, N, MPI_BYTE, &st));
    CHECK(tc_check(got, N, peer, 3) < 0, "atomic mode: rank %d's record", peer);
    CHECK_RC(MPI_File_set_atomicity(fh, 0));

    /* info: hints come back, unknown keys are fine */
    MPI_Info info, used;
    MPI_Info_create(&info);
    MPI_Info_set(info, "access_style", "read_once");
    MPI_Info_set(info, "ferry_unknown_key", "x");
    CHECK_RC(MPI_File_set_info(fh, info));
    CHECK_RC(MPI_File_get_info(fh, &used));
    char val[64];
    CHECK_RC(MPI_Info_get(used, "access_style", 63, val, &flag));
    CHECK(flag && !strcmp(val, "read_once"), "hint not returned");
    MPI_Info_free(&info);
    MPI_Info_free(&used);

    /* a user handler on the file is called with the file */
    CHECK_RC(MPI_File_create_errhandler(user_eh, &eh));
    CHECK_RC(MPI_File_set_errhandler(fh, eh));
    user_eh_calls = 0;
    rc = MPI_File_seek(fh, -5, MPI_SEEK_SET);
    CHECK(rc != MPI_SUCCESS && user_eh_calls == 1 && user_eh_file == fh && io_class(user_eh_code) == MPI_ERR_ARG,
          "user errhandler: rc %d calls %d", rc, user_eh_calls);
    CHECK_RC(MPI_File_call_errhandler(fh, MPI_ERR_IO));
    CHECK(user_eh_calls == 2 && user_eh_code == MPI_ERR_IO, "call_errhandler: calls %d", user_eh_calls);
    CHECK_RC(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    MPI_Errhandler_free(&eh);

    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        CHECK_RC(MPI_File_delete(name, MPI_INFO_NULL));
    free(buf);
    free(got);
}

static void pointers(const char *name)
{
    MPI_File fh;
    MPI_Status st;
    int data[64], back[64];
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh));
    /* each rank gets its own 64-int region through a view displacement;
     * the individual pointer counts etypes (ints) */
    CHECK_RC(MPI_File_set_view(fh, (MPI_Offset)rank * sizeof data, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    for (int i = 0; i < 64; i++)
        data[i] = rank * 1000 + i;
    CHECK_RC(MPI_File_write(fh, data, 10, MPI_INT, &st));
    CHECK_RC(MPI_File_write_all(fh, data + 10, 20, MPI_INT, &st));
    CHECK(tc_count(&st, MPI_INT) == 20, "write_all count");
    MPI_Offset pos, byte;
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK(pos == 30, "position %lld after 30 ints", (long long)pos);
    CHECK_RC(MPI_File_get_byte_offset(fh, pos, &byte));
    CHECK(byte == (MPI_Offset)rank * (MPI_Offset)sizeof data + 30 * 4, "byte offset %lld", (long long)byte);
    MPI_Request req;
    CHECK_RC(MPI_File_iwrite(fh, data + 30, 34, MPI_INT, &req));
    CHECK_RC(MPI_Wait(&req, &st));
    CHECK(req == MPI_REQUEST_NULL && tc_count(&st, MPI_INT) == 34, "iwrite: count %d", tc_count(&st, MPI_INT));
    CHECK_RC(MPI_File_seek(fh, 5, MPI_SEEK_SET));
    CHECK_RC(MPI_File_seek(fh, 5, MPI_SEEK_CUR));
    CHECK_RC(MPI_File_read(fh, back, 4, MPI_INT, &st));
    CHECK(back[0] == rank * 1000 + 10 && back[3] == rank * 1000 + 13, "read after seeks: %d", back[0]);
    CHECK_RC(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    memset(back, 0, sizeof back);
    int flag = 0;
    CHECK_RC(MPI_File_iread_all(fh, back, 64, MPI_INT, &req));
    do
        CHECK_RC(MPI_Test(&req, &flag, &st));
    while (!flag);
    CHECK(tc_count(&st, MPI_INT) == 64, "iread_all count %d", tc_count(&st, MPI_INT));
    for (int i = 0; i < 64; i++)
        CHECK(back[i] == rank * 1000 + i, "int %d: %d", i, back[i]);
    int elems;
    CHECK_RC(MPI_Get_elements(&st, MPI_INT, &elems));
    CHECK(elems == 64, "Get_elements %d", elems);
    /* explicit offsets are relative to the view too */
    CHECK_RC(MPI_File_iread_at(fh, 60, back, 4, MPI_INT, &req));
    CHECK_RC(MPI_Wait(&req, &st));
    CHECK(back[0] == rank * 1000 + 60, "iread_at in the view: %d", back[0]);
    /* split collectives */
    CHECK_RC(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    CHECK_RC(MPI_File_read_all_begin(fh, back, 8, MPI_INT));
    CHECK_RC(MPI_File_read_all_end(fh, back, &st));
    CHECK(tc_count(&st, MPI_INT) == 8 && back[7] == rank * 1000 + 7, "split read_all");
    for (int i = 0; i < 8; i++)
        data[i] = -rank - i;
    CHECK_RC(MPI_File_write_at_all_begin(fh, 0, data, 8, MPI_INT));
    int rc = MPI_File_write_at_all_begin(fh, 0, data, 8, MPI_INT);
    CHECK(rc != MPI_SUCCESS, "a second split collective began");
    CHECK_RC(MPI_File_write_at_all_end(fh, data, &st));
    CHECK(tc_count(&st, MPI_INT) == 8, "split write_at_all count");
    CHECK_RC(MPI_File_read_at_all_begin(fh, 0, back, 8, MPI_INT));
    CHECK_RC(MPI_File_read_at_all_end(fh, back, &st));
    CHECK(back[5] == -rank - 5, "split write/read at: %d", back[5]);
    rc = MPI_File_read_all_end(fh, back, &st);
    CHECK(rc != MPI_SUCCESS, "an end without a begin succeeded");
    /* SEEK_END: the view has 64 ints of this rank's region until the end
     * of the file for the last rank */
    CHECK_RC(MPI_File_seek(fh, 0, MPI_SEEK_END));
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)(size - rank) * 64, "SEEK_END position %lld", (long long)pos);
    CHECK_RC(MPI_File_close(&fh));
    /* DELETE_ON_CLOSE removed it */
    rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(io_class(rc) == MPI_ERR_NO_SUCH_FILE, "DELETE_ON_CLOSE file still there: class %d", io_class(rc));
}

static void self_and_append(const char *base)
{
    char name[512];
    snprintf(name, sizeof name, "%s.self%d", base, rank);
    MPI_File fh;
    MPI_Status st;
    char b[16] = "0123456789abcdef";
    CHECK_RC(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_WRONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    CHECK_RC(MPI_File_write(fh, b, 16, MPI_CHAR, &st));
    int rc = MPI_File_read_at(fh, 0, b, 1, MPI_CHAR, &st);
    CHECK(io_class(rc) == MPI_ERR_ACCESS, "read on WRONLY: class %d", io_class(rc));
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    rc = MPI_File_write_at(fh, 0, b, 1, MPI_CHAR, &st);
    CHECK(io_class(rc) == MPI_ERR_READ_ONLY, "write on RDONLY: class %d", io_class(rc));
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &fh));
    MPI_Offset pos;
    CHECK_RC(MPI_File_get_position(fh, &pos));
    CHECK(pos == 16, "APPEND: individual pointer %lld", (long long)pos);
    CHECK_RC(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 16, "APPEND: shared pointer %lld", (long long)pos);
    CHECK_RC(MPI_File_write(fh, b, 4, MPI_CHAR, &st));
    MPI_Offset sz;
    CHECK_RC(MPI_File_get_size(fh, &sz));
    CHECK(sz == 20, "APPEND write: size %lld", (long long)sz);
    CHECK_RC(MPI_File_close(&fh));
    CHECK_RC(MPI_File_delete(name, MPI_INFO_NULL));
}

int main(int argc, char **argv)
{
    tc_init(&argc, &argv, &rank, &size);
    char name[400];
    io_name(name, sizeof name, "io_basic");
    open_errors(name);
    explicit_offsets(name);
    pointers(name);
    self_and_append(name);
    return tc_finish("io_basic");
}
