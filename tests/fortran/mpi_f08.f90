!> rdlm_mpi_ctx_create from `use mpi_f08` (type(MPI_Comm)), on a communicator other
!> than MPI_COMM_WORLD (its ranks in reverse order), so a handle that does not
!> reach C intact fails: every rank takes the lock once, tokens differ across ranks,
!> the context barrier and rdlm_mpi_barrier over it pass. Prints "fortran mpi_f08: ok" on rank 0.
program mpi_f08_ctx
  use mpi_f08
  use rdlm
  use check
  implicit none
  type(MPI_Comm) :: reversed
  type(rdlm_ctx) :: ctx
  type(rdlm_lock) :: lock
  integer(c_int64_t) :: token, lo, hi
  integer :: rank, nranks

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call MPI_Comm_split(MPI_COMM_WORLD, 0, nranks - rank, reversed)
  call expect(rdlm_mpi_ctx_create(reversed, ctx), RDLM_OK, 'mpi_ctx_create(type(MPI_Comm))')
  call expect(rdlm_lock_open(ctx, 'f08.lock', lock), RDLM_OK, 'lock_open')
  call expect(rdlm_lock_acquire(lock, RDLM_TIMEOUT_INFINITE, token), RDLM_OK, 'acquire')
  call expect(rdlm_lock_release(lock), RDLM_OK, 'release')
  call expect(rdlm_ctx_barrier(ctx), RDLM_OK, 'ctx_barrier')
  call expect(rdlm_mpi_barrier(reversed), RDLM_OK, 'rdlm_mpi_barrier(type(MPI_Comm))')
  call MPI_Allreduce(token, lo, 1, MPI_INTEGER8, MPI_MIN, reversed)
  call MPI_Allreduce(token, hi, 1, MPI_INTEGER8, MPI_MAX, reversed)
  call expect_true(nranks == 1 .or. lo /= hi, 'tokens differ across ranks')
  call rdlm_ctx_destroy(ctx)
  call MPI_Comm_free(reversed)
  if (rank == 0) print '(a)', 'fortran mpi_f08: ok'
  call MPI_Finalize()
end program mpi_f08_ctx
