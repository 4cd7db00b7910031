! fortran_mpich: a Fortran program built with MPICH's mpif90 runs on Ferry.
!
! MPICH's Fortran binding library (libmpichfort.so.12) sits on top of
! libmpich.so.12; with Ferry's library in its place it must call Ferry's
! C functions and the internal entry points MPICH's binding uses
! (MPII_Comm_get_attr, MPII_Keyval_set_proxy, MPII_Grequest_set_lang_f77 ...).
! Checked against values computed here:
!   * point-to-point ring and a collective (allreduce, bcast)
!   * predefined attributes read as integers (MPI_COMM_GET_ATTR with
!     ADDRESS_KIND values and the MPI-1 MPI_ATTR_GET with default integers)
!   * a keyval with Fortran copy and delete callbacks: MPI_COMM_DUP copies the
!     attribute through the copy callback (value + 1), MPI_COMM_FREE and
!     MPI_COMM_DELETE_ATTR run the delete callback with the right values
!   * a datatype attribute
!   * a generalized request with Fortran query / free callbacks
!   * MPI_TYPE_CREATE_F90_REAL/COMPLEX pick gfortran's kind for the precision
!     (REAL(10) for 18 digits, REAL(16) for 30): reductions on them add up
module counters
  use mpi
  implicit none
  integer :: copies = 0, deletes = 0, frees = 0, queries = 0
  integer(kind=MPI_ADDRESS_KIND) :: last_deleted = -1
contains
  subroutine copy_fn(oldcomm, keyval, extra, val_in, val_out, flag, ierr)
    integer :: oldcomm, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: extra, val_in, val_out
    logical :: flag
    copies = copies + 1
    val_out = val_in + 1 + extra
    flag = .true.
    ierr = MPI_SUCCESS
  end subroutine
  subroutine delete_fn(comm, keyval, val, extra, ierr)
    integer :: comm, keyval, ierr
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    deletes = deletes + 1
    last_deleted = val
    ierr = MPI_SUCCESS
  end subroutine
  subroutine query_fn(extra, status, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: status(MPI_STATUS_SIZE), ierr
    queries = queries + 1
    call MPI_STATUS_SET_ELEMENTS(status, MPI_BYTE, int(extra), ierr)
    call MPI_STATUS_SET_CANCELLED(status, .false., ierr)
    status(MPI_SOURCE) = MPI_UNDEFINED
    status(MPI_TAG) = 42
    ierr = MPI_SUCCESS
  end subroutine
  subroutine free_fn(extra, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    integer :: ierr
    frees = frees + 1
    ierr = MPI_SUCCESS
  end subroutine
  subroutine cancel_fn(extra, complete, ierr)
    integer(kind=MPI_ADDRESS_KIND) :: extra
    logical :: complete
    integer :: ierr
    ierr = MPI_SUCCESS
  end subroutine
end module

program fortran_mpich
  use mpi
  use counters
  implicit none
  integer :: ierr, rank, size, to, from, i, errs, keyval, tkeyval, dup, req, cnt, tag
  integer :: st(MPI_STATUS_SIZE), ival
  integer(kind=MPI_ADDRESS_KIND) :: aval, extra
  logical :: flag
  double precision :: sbuf(100), rbuf(100)
  integer :: sum
  integer, parameter :: xk = selected_real_kind(18), qk = selected_real_kind(30)
  integer :: xtype
  real(kind=xk) :: xin(2), xout(2)
  complex(kind=xk) :: xcin, xcout
  real(kind=qk) :: qin(2), qout(2)

  errs = 0
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
  call MPI_COMM_SET_ERRHANDLER(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)

  ! ring exchange and collectives
  to = mod(rank + 1, size)
  from = mod(rank + size - 1, size)
  do i = 1, 100
    sbuf(i) = rank * 1000 + i
  end do
  call MPI_SENDRECV(sbuf, 100, MPI_DOUBLE_PRECISION, to, 7, rbuf, 100, MPI_DOUBLE_PRECISION, from, 7, &
                    MPI_COMM_WORLD, st, ierr)
  call MPI_GET_COUNT(st, MPI_DOUBLE_PRECISION, cnt, ierr)
  if (cnt /= 100 .or. st(MPI_SOURCE) /= from .or. st(MPI_TAG) /= 7) call fail('ring status')
  do i = 1, 100
    if (rbuf(i) /= from * 1000 + i) call fail('ring data')
  end do
  call MPI_ALLREDUCE(rank + 1, sum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (sum /= size * (size + 1) / 2) call fail('allreduce')
  ival = 0
  if (rank == 0) ival = 12345
  call MPI_BCAST(ival, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (ival /= 12345) call fail('bcast')

  ! predefined attributes as integers
  call MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_TAG_UB, aval, flag, ierr)
  if (.not. flag .or. aval < 32767) call fail('MPI_TAG_UB via MPI_COMM_GET_ATTR')
  call MPI_ATTR_GET(MPI_COMM_WORLD, MPI_TAG_UB, ival, flag, ierr)
  if (.not. flag .or. ival /= aval) call fail('MPI_TAG_UB via MPI_ATTR_GET')
  call MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_HOST, aval, flag, ierr)
  if (.not. flag .or. aval /= MPI_PROC_NULL) call fail('MPI_HOST')
  call MPI_COMM_GET_ATTR(MPI_COMM_WORLD, MPI_LASTUSEDCODE, aval, flag, ierr)
  if (.not. flag .or. aval < MPI_ERR_LASTCODE) call fail('MPI_LASTUSEDCODE')

  ! a keyval with Fortran callbacks
  extra = 10
  call MPI_COMM_CREATE_KEYVAL(copy_fn, delete_fn, keyval, extra, ierr)
  aval = 1000 + rank
  call MPI_COMM_SET_ATTR(MPI_COMM_WORLD, keyval, aval, ierr)
  aval = -1
  call MPI_COMM_GET_ATTR(MPI_COMM_WORLD, keyval, aval, flag, ierr)
  if (.not. flag .or. aval /= 1000 + rank) call fail('user attribute value')
  call MPI_COMM_DUP(MPI_COMM_WORLD, dup, ierr)
  if (copies /= 1) call fail('copy callback not called once')
  call MPI_COMM_GET_ATTR(dup, keyval, aval, flag, ierr)
  if (.not. flag .or. aval /= 1000 + rank + 1 + 10) call fail('copied attribute value')
  call MPI_COMM_FREE(dup, ierr)
  if (deletes /= 1 .or. last_deleted /= 1000 + rank + 11) call fail('delete callback at MPI_COMM_FREE')
  call MPI_COMM_DELETE_ATTR(MPI_COMM_WORLD, keyval, ierr)
  if (deletes /= 2 .or. last_deleted /= 1000 + rank) call fail('delete callback at MPI_COMM_DELETE_ATTR')
  call MPI_COMM_GET_ATTR(MPI_COMM_WORLD, keyval, aval, flag, ierr)
  if (flag) call fail('attribute still set after delete')
  call MPI_COMM_FREE_KEYVAL(keyval, ierr)

  ! a datatype attribute (predefined null callbacks)
  call MPI_TYPE_CREATE_KEYVAL(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, tkeyval, extra, ierr)
  aval = 77
  call MPI_TYPE_SET_ATTR(MPI_INTEGER, tkeyval, aval, ierr)
  aval = 0
  call MPI_TYPE_GET_ATTR(MPI_INTEGER, tkeyval, aval, flag, ierr)
  if (.not. flag .or. aval /= 77) call fail('datatype attribute')
  call MPI_TYPE_DELETE_ATTR(MPI_INTEGER, tkeyval, ierr)
  call MPI_TYPE_FREE_KEYVAL(tkeyval, ierr)

  ! a generalized request with Fortran callbacks
  extra = 12
  call MPI_GREQUEST_START(query_fn, free_fn, cancel_fn, extra, req, ierr)
  call MPI_GREQUEST_COMPLETE(req, ierr)
  call MPI_WAIT(req, st, ierr)
  call MPI_GET_COUNT(st, MPI_BYTE, cnt, ierr)
  tag = st(MPI_TAG)
  if (queries /= 1 .or. frees /= 1) call fail('generalized request callbacks')
  if (cnt /= 12 .or. tag /= 42) call fail('generalized request status')

  ! MPI_TYPE_CREATE_F90_REAL/COMPLEX name gfortran's kinds: precision 18 is
  ! REAL(10) (x87 extended in 16 bytes), precision 30 is REAL(16) (quad);
  ! same size, different arithmetic, so a sum shows which one MPI assumed
  call MPI_TYPE_CREATE_F90_REAL(18, MPI_UNDEFINED, xtype, ierr)
  xin = [real(rank + 1, xk) / 3, real(size - rank, xk)]
  call MPI_ALLREDUCE(xin, xout, 2, xtype, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS .or. abs(xout(1) - real(size * (size + 1) / 2, xk) / 3) > 1e-15_xk .or. &
      xout(2) /= real(size * (size + 1) / 2, xk)) call fail('MPI_SUM on MPI_TYPE_CREATE_F90_REAL(18)')
  call MPI_TYPE_CREATE_F90_COMPLEX(18, MPI_UNDEFINED, xtype, ierr)
  xcin = cmplx(rank + 1, 2 * rank, xk)
  call MPI_ALLREDUCE(xcin, xcout, 1, xtype, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS .or. xcout /= cmplx(size * (size + 1) / 2, size * (size - 1), xk)) &
      call fail('MPI_SUM on MPI_TYPE_CREATE_F90_COMPLEX(18)')
  call MPI_TYPE_CREATE_F90_REAL(30, MPI_UNDEFINED, xtype, ierr)
  qin = [real(rank + 1, qk) / 3, real(size - rank, qk)]
  call MPI_ALLREDUCE(qin, qout, 2, xtype, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (ierr /= MPI_SUCCESS .or. qout(1) /= real(size, qk) / 3 .or. qout(2) /= real(size, qk)) &
      call fail('MPI_MAX on MPI_TYPE_CREATE_F90_REAL(30)')
  call MPI_TYPE_CREATE_F90_REAL(34, MPI_UNDEFINED, xtype, ierr)   ! no such kind
  if (ierr == MPI_SUCCESS) call fail('MPI_TYPE_CREATE_F90_REAL(34) succeeded')

  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(a,i0,a)', 'fortran_mpich: OK (', size, ' ranks)'
  call MPI_FINALIZE(ierr)

contains
  subroutine fail(what)
    character(len=*) :: what
    integer :: e
    print '(a,i0,2a)', 'FAIL [rank ', rank, '] ', what
    call MPI_ABORT(MPI_COMM_WORLD, 1, e)
  end subroutine
end program
