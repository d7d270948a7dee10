! An unmodified Fortran MPI program (use mpi): N calls of MPI_BARRIER, which Open MPI's
! Fortran binding would send straight to PMPI_Barrier; librdlm_pmpi.so defines the
! Fortran symbols (mpi_barrier_ ...) so that it replaces them too.
program barrier_f
  use mpi
  implicit none
  integer :: ierr, rank, size, i, iters
  double precision :: t0, t

  iters = 100
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, size, ierr)
  t0 = MPI_WTIME()
  do i = 1, iters
     call MPI_BARRIER(MPI_COMM_WORLD, ierr)
     if (ierr /= MPI_SUCCESS) stop 1
  end do
  t = MPI_WTIME() - t0
  if (rank == 0) then
     write (*, '(a, i0, a, i0, a, f0.1, a)') 'barrier_f: ', size, ' ranks, ', iters, &
          ' barriers, ', 1.0d6 * t / iters, ' us each'
  end if
  call MPI_FINALIZE(ierr)
end program barrier_f
