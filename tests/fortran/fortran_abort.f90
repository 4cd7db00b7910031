! fortran_abort: what a Fortran rank wrote to a file-redirected stdout reaches
! the file when the job is killed because another rank called MPI_ABORT
! (ScaLAPACK's BLACS tester ends that way, and lost all of rank 0's report).
!
! gfortran buffers preconnected units that are regular files; MPICH's hydra
! starts ranks with GFORTRAN_UNBUFFERED_PRECONNECTED=y, and so does Ferry's
! mpiexec. Every rank writes one line, then the last rank aborts while the
! others wait in a barrier that never completes. The ctest counts the
! distinct lines in the file.
program fortran_abort
  use mpi
  implicit none
  integer :: rank, nranks, ierr
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  write (*, '(A,I0,A)') 'fortran_abort: rank ', rank, ' before the abort'
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  if (rank == nranks - 1) call MPI_ABORT(MPI_COMM_WORLD, 5, ierr)
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  write (*, '(A)') 'FAIL: a barrier completed after MPI_ABORT'
  call MPI_FINALIZE(ierr)
end program fortran_abort
