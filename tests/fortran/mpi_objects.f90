!> The Fortran module under mpirun (`use mpi`: the communicator as an integer), every
!> object job-wide (run with RDLM_VIRTUAL_NODES=2 UCX_TLS=tcp,self: the cross-node
!> path). Argument: iterations (n).
!>  - lock: every rank takes the lock n times; inside it, the shared counter must not
!>    change between its read and its add (a lost exclusion fails), tokens strictly
!>    increase per rank, and at the end the counter is ranks * n; a lock held by
!>    rank 0 is RDLM_ERR_BUSY to the others' try and RDLM_ERR_TIMEOUT to a 1 ms wait;
!>  - rwlock: every rank reads at once (a context barrier while all hold it), then
!>    writes in turn with increasing tokens;
!>  - semaphore of 2: rank 0 holding both leaves none to the others; at most 2 ranks
!>    inside at once;
!>  - named barrier: nobody passes round r before every rank arrived in it; the split
!>    context barrier refuses a second arrive; rdlm_mpi_barrier on MPI_COMM_WORLD waits
!>    for a late rank 0;
!>  - a bounded-bypass lock is refused (RDLM_ERR_UNSUPPORTED) in a distributed context;
!>  - a closed lock's handle returns RDLM_ERR_CLOSED;
!>  - rdlm_mpi_ctx_create before mpi_init and rdlm_mpi_barrier after mpi_finalize
!>    return RDLM_ERR_INVALID_ARG (the job is not aborted).
!> Prints "fortran mpi: ok" on rank 0, after mpi_finalize.
program mpi_objects
  use mpi
  use rdlm
  use check
  implicit none
  integer(c_int64_t), parameter :: forever = RDLM_TIMEOUT_INFINITE
  type(rdlm_ctx) :: ctx
  type(rdlm_lock) :: lock
  type(rdlm_rwlock) :: rw
  type(rdlm_counter) :: counter, arrived, inside
  type(rdlm_sem) :: sem
  type(rdlm_barrier) :: barrier
  integer(c_int64_t) :: token, prev, value, old, t0, t1, rate
  integer :: rank, nranks, ierr, i, n
  character(len=16) :: arg

  call get_command_argument(1, arg)
  read (arg, *) n
  call expect(rdlm_mpi_ctx_create(MPI_COMM_WORLD, ctx), RDLM_ERR_INVALID_ARG, &
              'mpi_ctx_create before mpi_init')
  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, nranks, ierr)
  call expect(rdlm_mpi_ctx_create(MPI_COMM_WORLD, ctx), RDLM_OK, 'mpi_ctx_create')
  call expect(rdlm_lock_open(ctx, 'f.lock', lock), RDLM_OK, 'lock_open')
  call expect(rdlm_counter_open(ctx, 'f.counter', counter), RDLM_OK, 'counter_open')

  prev = 0
  do i = 1, n
    call expect(rdlm_lock_acquire(lock, forever, token), RDLM_OK, 'lock_acquire')
    call expect_true(token > prev .and. token >= 2_c_int64_t**40, 'token increases')
    prev = token
    call expect(rdlm_counter_read(counter, value), RDLM_OK, 'counter_read')
    call expect(rdlm_counter_fetch_add(counter, 1_c_int64_t, old), RDLM_OK, 'fetch_add')
    call expect_true(old == value, 'counter changed inside the lock')
    call expect(rdlm_lock_release(lock), RDLM_OK, 'lock_release')
  end do
  call expect(rdlm_ctx_barrier(ctx), RDLM_OK, 'ctx_barrier')
  call expect(rdlm_counter_read(counter, value), RDLM_OK, 'counter_read')
  call expect_true(value == int(nranks, c_int64_t) * n, 'counter is ranks * n')

  call expect(rdlm_lock_open(ctx, 'f.bounded', lock, order=RDLM_LOCK_ORDER_BOUNDED), &
              RDLM_ERR_UNSUPPORTED, 'bounded-bypass lock in a distributed context')
  if (rank == 0) call expect(rdlm_lock_acquire(lock, forever), RDLM_OK, 'rank 0 holds')
  call expect(rdlm_ctx_barrier(ctx), RDLM_OK, 'ctx_barrier')
  if (rank /= 0) then
    token = -5
    call expect(rdlm_lock_try_acquire(lock, token), RDLM_ERR_BUSY, 'try while held')
    call expect(rdlm_lock_acquire(lock, 1000000_c_int64_t, token), RDLM_ERR_TIMEOUT, &
                'acquire 1 ms while held')
    call expect_true(token == -5, 'token untouched by a failed acquire')
  end if
  call expect(rdlm_ctx_barrier(ctx), RDLM_OK, 'ctx_barrier')
  if (rank == 0) call expect(rdlm_lock_release(lock), RDLM_OK, 'rank 0 releases')

  call expect(rdlm_rwlock_open(ctx, 'f.rw', rw), RDLM_OK, 'rwlock_open')
  call expect(rdlm_rwlock_read_acquire(rw, forever), RDLM_OK, 'read_acquire')
  call expect(rdlm_ctx_barrier(ctx), RDLM_OK, 'ctx_barrier with every reader in')
  call expect(rdlm_rwlock_read_release(rw), RDLM_OK, 'read_release')
  prev = 0
  do i = 1, 3
    call expect(rdlm_rwlock_write_acquire(rw, forever, token), RDLM_OK, 'write_acquire')
    call expect_true(token > prev, 'rwlock tokens increase')
    prev = token
    call expect(rdlm_rwlock_write_release(rw), RDLM_OK, 'write_release')
  end do

  call expect(rdlm_sem_open(ctx, 'f.sem', 2, sem), RDLM_OK, 'sem_open')
  call expect(rdlm_counter_open(ctx, 'f.inside', inside), RDLM_OK, 'counter_open')
  if (rank == 0) call expect(rdlm_sem_acquire(sem, 2, forever), RDLM_OK, 'sem_acquire 2')
  call expect(rdlm_ctx_barrier(ctx), RDLM_OK, 'ctx_barrier')
  if (rank /= 0) call expect(rdlm_sem_acquire(sem, 1, 0_c_int64_t), RDLM_ERR_BUSY, &
                             'sem_acquire with no permit free')
  call expect(rdlm_ctx_barrier(ctx), RDLM_OK, 'ctx_barrier')
  if (rank == 0) call expect(rdlm_sem_release(sem, 2), RDLM_OK, 'sem_release 2')
  do i = 1, 5
    call expect(rdlm_sem_acquire(sem, 1, forever), RDLM_OK, 'sem_acquire')
    call expect(rdlm_counter_fetch_add(inside, 1_c_int64_t, old), RDLM_OK, 'inside +1')
    call expect_true(old < 2, 'at most 2 ranks inside the semaphore')
    call expect(rdlm_counter_fetch_add(inside, -1_c_int64_t), RDLM_OK, 'inside -1')
    call expect(rdlm_sem_release(sem, 1), RDLM_OK, 'sem_release')
  end do

  call expect(rdlm_barrier_open(ctx, 'f.barrier', nranks, barrier), RDLM_OK, 'barrier_open')
  call expect(rdlm_counter_open(ctx, 'f.arrived', arrived), RDLM_OK, 'counter_open')
  do i = 1, 3
    call expect(rdlm_counter_fetch_add(arrived, 1_c_int64_t), RDLM_OK, 'arrive count')
    call expect(rdlm_barrier_wait(barrier, forever), RDLM_OK, 'barrier_wait')
    call expect(rdlm_counter_read(arrived, value), RDLM_OK, 'counter_read')
    call expect_true(value >= int(nranks, c_int64_t) * i, 'passed before all arrived')
  end do
  call expect(rdlm_ctx_barrier_arrive(ctx), RDLM_OK, 'ctx_barrier_arrive')
  call expect(rdlm_ctx_barrier_arrive(ctx), RDLM_ERR_MISMATCH, 'second arrive')
  call expect(rdlm_ctx_barrier_wait(ctx), RDLM_OK, 'ctx_barrier_wait')
  ! rdlm_mpi_barrier must wait for rank 0, which arrives 50 ms late.
  if (rank == 0) then
    call system_clock(t0, rate)
    do
      call system_clock(t1)
      if (t1 - t0 > rate / 20) exit
    end do
  end if
  call expect(rdlm_counter_fetch_add(arrived, 1_c_int64_t), RDLM_OK, 'arrive count')
  do i = 1, 3
    call expect(rdlm_mpi_barrier(MPI_COMM_WORLD), RDLM_OK, 'rdlm_mpi_barrier')
  end do
  call expect(rdlm_counter_read(arrived, value), RDLM_OK, 'counter_read')
  call expect_true(value == int(nranks, c_int64_t) * 4, 'rdlm_mpi_barrier passed early')

  call expect(rdlm_lock_close(lock), RDLM_OK, 'lock_close')
  call expect(rdlm_lock_acquire(lock, 0_c_int64_t), RDLM_ERR_CLOSED, 'closed lock')
  call rdlm_ctx_destroy(ctx)
  call mpi_finalize(ierr)
  call expect(rdlm_mpi_barrier(MPI_COMM_WORLD), RDLM_ERR_INVALID_ARG, &
              'rdlm_mpi_barrier after mpi_finalize')
  if (rank == 0) print '(a,i0,a,i0,a)', 'fortran mpi: ok (', nranks, ' ranks, ', n, &
                                        ' acquires each)'
end program mpi_objects
