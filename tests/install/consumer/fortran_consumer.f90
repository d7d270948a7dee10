! An external Fortran program built against an installed rdlm from docs/fortran.md
! alone: every rank takes a job-wide lock (tokens must differ across ranks) and adds
! to a counter, then all meet in the context barrier and check the count. Prints
! "fortran consumer: ok" on rank 0; exit 0 on success.
program fortran_consumer
  use mpi
  use rdlm
  implicit none
  type(rdlm_ctx) :: ctx
  type(rdlm_lock) :: lock
  type(rdlm_counter) :: hits
  integer(c_int64_t) :: token, lo, hi, total
  integer(c_int) :: st
  integer :: ierr, rank, nranks

  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, nranks, ierr)
  st = rdlm_mpi_ctx_create(MPI_COMM_WORLD, ctx)
  if (st == RDLM_OK) st = rdlm_lock_open(ctx, 'fortran-consumer', lock)
  if (st == RDLM_OK) st = rdlm_counter_open(ctx, 'fortran-consumer.hits', hits)
  if (st == RDLM_OK) st = rdlm_lock_acquire(lock, 10000000000_c_int64_t, token)
  if (st == RDLM_OK) st = rdlm_counter_fetch_add(hits, 1_c_int64_t)
  if (st == RDLM_OK) st = rdlm_lock_release(lock)
  if (st == RDLM_OK) st = rdlm_ctx_barrier(ctx)
  if (st == RDLM_OK) st = rdlm_counter_read(hits, total)
  if (st /= RDLM_OK) then
    print '(a,i0,2a)', 'fortran consumer, rank ', rank, ': ', rdlm_status_str(st)
    call mpi_abort(MPI_COMM_WORLD, 1, ierr)
  end if
  call rdlm_ctx_destroy(ctx)
  call mpi_allreduce(token, lo, 1, MPI_INTEGER8, MPI_MIN, MPI_COMM_WORLD, ierr)
  call mpi_allreduce(token, hi, 1, MPI_INTEGER8, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (lo /= hi .and. total == nranks) then
      print '(a)', 'fortran consumer: ok'
    else
      print '(a,i0,a,i0)', 'fortran consumer: FAIL tokens ', lo, '..', hi
      call mpi_abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end if
  call mpi_finalize(ierr)
end program fortran_consumer
