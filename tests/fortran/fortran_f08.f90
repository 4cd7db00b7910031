! fortran_f08: a program built with MPICH's mpif90 against the mpi_f08
! module runs on Ferry.
!
! MPICH's mpi_f08 wrappers live in libmpichfort.so.12 and translate the
! Fortran sentinels into C ones before calling Ferry. Some of those C values
! come from variables the C library must fill in (MPIR_C_MPI_UNWEIGHTED,
! MPIR_C_MPI_WEIGHTS_EMPTY); left unset, the wrappers pass NULL. Checked:
!   * MPI_Dist_graph_create_adjacent and MPI_Dist_graph_create with
!     MPI_UNWEIGHTED (a ring in both directions), and with MPI_WEIGHTS_EMPTY
!     for a rank with no edges; MPI_Dist_graph_neighbors with MPI_UNWEIGHTED
!     returns the neighbours, MPI_Dist_graph_neighbors_count says unweighted
!   * the same graph with real weights reads the weights back
!   * MPI_STATUS_IGNORE and a type(MPI_Status) on receive, MPI_IN_PLACE in
!     an allreduce
program fortran_f08
  use mpi_f08
  implicit none
  type(MPI_Comm) :: g
  type(MPI_Status) :: st
  integer :: rank, nprocs, errs, ierr, left, right
  integer :: srcs(2), dsts(2), degs(1), w(2), wout_s(2), wout_d(2)
  integer :: nin, nout, got_s(2), got_d(2), val, buf(2)
  logical :: weighted

  errs = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  left = modulo(rank - 1, nprocs)
  right = modulo(rank + 1, nprocs)

  ! adjacent, unweighted: in from left and right, out to left and right
  srcs = [left, right]
  dsts = [left, right]
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, MPI_UNWEIGHTED, &
       2, dsts, MPI_UNWEIGHTED, MPI_INFO_NULL, .false., g, ierr)
  call check(ierr == MPI_SUCCESS, 'Dist_graph_create_adjacent(MPI_UNWEIGHTED)')
  if (ierr == MPI_SUCCESS) then
    call check_ring(g, .false.)
    call MPI_Comm_free(g, ierr)
  end if

  ! general form, unweighted: each rank names its own two out-edges
  srcs(1) = rank
  degs(1) = 2
  call MPI_Dist_graph_create(MPI_COMM_WORLD, 1, srcs, degs, dsts, MPI_UNWEIGHTED, &
       MPI_INFO_NULL, .false., g, ierr)
  call check(ierr == MPI_SUCCESS, 'Dist_graph_create(MPI_UNWEIGHTED)')
  if (ierr == MPI_SUCCESS) then
    call check_ring(g, .false.)
    call MPI_Comm_free(g, ierr)
  end if

  ! no edges at all: MPI_WEIGHTS_EMPTY
  degs(1) = 0
  call MPI_Dist_graph_create(MPI_COMM_WORLD, 1, srcs, degs, dsts, MPI_WEIGHTS_EMPTY, &
       MPI_INFO_NULL, .false., g, ierr)
  call check(ierr == MPI_SUCCESS, 'Dist_graph_create(MPI_WEIGHTS_EMPTY)')
  if (ierr == MPI_SUCCESS) then
    call MPI_Dist_graph_neighbors_count(g, nin, nout, weighted, ierr)
    call check(nin == 0 .and. nout == 0, 'empty graph has no neighbours')
    call MPI_Comm_free(g, ierr)
  end if

  ! weighted: the weight of edge a->b is 100*a + b
  srcs = [left, right]
  w = [100 * left + rank, 100 * right + rank]
  wout_d = [100 * rank + left, 100 * rank + right]
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, w, &
       2, dsts, wout_d, MPI_INFO_NULL, .false., g, ierr)
  call check(ierr == MPI_SUCCESS, 'Dist_graph_create_adjacent(weights)')
  if (ierr == MPI_SUCCESS) then
    call MPI_Dist_graph_neighbors_count(g, nin, nout, weighted, ierr)
    call check(weighted, 'weighted graph reports weighted')
    call MPI_Dist_graph_neighbors(g, 2, got_s, wout_s, 2, got_d, buf, ierr)
    call check(all(got_s == srcs) .and. all(wout_s == w), 'in-edge weights')
    call check(all(got_d == dsts) .and. all(buf == wout_d), 'out-edge weights')
    call MPI_Comm_free(g, ierr)
  end if

  ! status objects and MPI_IN_PLACE through the f08 wrappers
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, right, 7, val, 1, MPI_INTEGER, left, 7, &
       MPI_COMM_WORLD, st, ierr)
  call check(val == left .and. st%MPI_SOURCE == left .and. st%MPI_TAG == 7, 'Sendrecv status')
  call MPI_Sendrecv(rank, 1, MPI_INTEGER, right, 8, val, 1, MPI_INTEGER, left, 8, &
       MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call check(ierr == MPI_SUCCESS .and. val == left, 'Sendrecv MPI_STATUS_IGNORE')
  val = rank
  call MPI_Allreduce(MPI_IN_PLACE, val, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(val == nprocs * (nprocs - 1) / 2, 'Allreduce MPI_IN_PLACE')

  call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (errs == 0) then
      write(*, '(a,i0,a)') 'fortran_f08: OK (', nprocs, ' ranks)'
    else
      write(*, '(a,i0,a)') 'fortran_f08: FAIL (', errs, ' errors)'
    end if
  end if
  call MPI_Finalize(ierr)

contains

  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(*), intent(in) :: what
    if (.not. cond) then
      errs = errs + 1
      write(*, '(a,i0,2a)') 'rank ', rank, ': FAIL: ', what
    end if
  end subroutine

  ! g is the two-way ring: in-neighbours and out-neighbours are left, right
  subroutine check_ring(g, want_weighted)
    type(MPI_Comm), intent(in) :: g
    logical, intent(in) :: want_weighted
    integer :: nin, nout, s(2), d(2)
    logical :: weighted
    call MPI_Dist_graph_neighbors_count(g, nin, nout, weighted, ierr)
    call check(nin == 2 .and. nout == 2, 'ring degrees')
    call check(weighted .eqv. want_weighted, 'ring weighted flag')
    call MPI_Dist_graph_neighbors(g, 2, s, MPI_UNWEIGHTED, 2, d, MPI_UNWEIGHTED, ierr)
    call check(ierr == MPI_SUCCESS, 'Dist_graph_neighbors(MPI_UNWEIGHTED)')
    ! the order of the in-edges of MPI_Dist_graph_create is not fixed
    call check(any(s == left) .and. any(s == right), 'ring in-neighbours')
    call check(any(d == left) .and. any(d == right), 'ring out-neighbours')
  end subroutine
end program
