! The same with the mpi_f08 module: MPI_Barrier is mpi_barrier_f08_, with an optional
! ierror argument (left out here).
program barrier_f08
  use mpi_f08
  implicit none
  integer :: rank, size, i, iters

  iters = 100
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  do i = 1, iters
     call MPI_Barrier(MPI_COMM_WORLD)
  end do
  if (rank == 0) then
     write (*, '(a, i0, a, i0, a)') 'barrier_f08: ', size, ' ranks, ', iters, ' barriers'
  end if
  call MPI_Finalize()
end program barrier_f08
