!> The Fortran module without MPI (no mpirun): a node-only context from rdlm_ctx_create
!> and every object kind through it, each result checked against rdlm.h's contract, so
!> a wrong binding (argument passed by value instead of reference, a truncated 64-bit
!> value, a wrong constant or parameter struct, a lost optional argument) fails. Also the handle errors:
!> a handle never opened, a closed one, a destroyed context's. Argument: the version
!> rdlm_get_version must return. Prints "fortran standalone: ok".
program standalone
  use rdlm
  use check
  implicit none
  type(rdlm_ctx) :: ctx, never_ctx
  type(rdlm_lock) :: lock, never
  type(rdlm_rwlock) :: rw
  type(rdlm_counter) :: counter, wrong_kind
  type(rdlm_sem) :: sem
  type(rdlm_barrier) :: barrier
  integer(c_int64_t) :: token, first, value, old, highest
  integer :: available
  character(len=60) :: padded
  character(len=32) :: version

  call get_command_argument(1, version)
  call expect_true(rdlm_get_version() == trim(version), 'rdlm_get_version is '//version)
  call expect_true(rdlm_status_str(RDLM_ERR_TIMEOUT) == 'timed out', 'status_str')
  call expect_true(rdlm_status_name(RDLM_ERR_CLOSED) == 'RDLM_ERR_CLOSED', 'status_name')
  call expect_true(rdlm_status_str(12345_c_int) == 'unknown status', 'unknown status')

  ! The parameters reach C: a bad job name and a capacity below 16 are refused, and
  ! ctx stays unset (a call through it is RDLM_ERR_BAD_HANDLE).
  call expect(rdlm_ctx_create(ctx, job='bad job!'), RDLM_ERR_INVALID_ARG, 'bad job name')
  call expect(rdlm_ctx_create(ctx, job='t-fortran-standalone', capacity=8), &
              RDLM_ERR_INVALID_ARG, 'capacity 8')
  call expect(rdlm_lock_open(ctx, 'l', lock), RDLM_ERR_BAD_HANDLE, 'open on unset ctx')
  call expect(rdlm_ctx_create(ctx, job='t-fortran-standalone', capacity=16), RDLM_OK, &
              'ctx_create')
  call expect(rdlm_lock_open(never_ctx, 'l', lock), RDLM_ERR_BAD_HANDLE, 'never ctx')

  ! Locks: tokens are 64-bit (epoch << 40 | sequence) and grow; not recursive.
  call expect(rdlm_lock_open(ctx, 'f.lock', lock), RDLM_OK, 'lock_open')
  call expect(rdlm_lock_acquire(lock, RDLM_TIMEOUT_INFINITE, first), RDLM_OK, 'acquire')
  call expect_true(first >= 2_c_int64_t**40, 'token has its epoch above bit 40')
  token = -5
  call expect(rdlm_lock_try_acquire(lock, token), RDLM_ERR_BUSY, 'try_acquire held')
  call expect(rdlm_lock_acquire(lock, 1000000_c_int64_t, token), RDLM_ERR_TIMEOUT, &
              'acquire 1 ms')
  call expect_true(token == -5, 'token untouched by a failed acquire')
  call expect(rdlm_lock_release(lock), RDLM_OK, 'release')
  call expect(rdlm_lock_release(lock), RDLM_ERR_NOT_OWNER, 'second release')
  call expect(rdlm_lock_try_acquire(lock, token), RDLM_OK, 'try_acquire free')
  call expect_true(token > first, 'tokens increase')
  call expect(rdlm_lock_close(lock), RDLM_OK, 'lock_close (held)')
  call expect(rdlm_lock_acquire(lock, 0_c_int64_t), RDLM_ERR_CLOSED, 'closed lock')
  call expect(rdlm_lock_release(never), RDLM_ERR_BAD_HANDLE, 'never-opened lock')

  ! Lock order: the first open fixes it; another order named explicitly is refused.
  call expect(rdlm_lock_open(ctx, 'f.fifo', lock, order=RDLM_LOCK_ORDER_FIFO), RDLM_OK, &
              'lock_open FIFO')
  call expect(rdlm_lock_open(ctx, 'f.fifo', lock, order=RDLM_LOCK_ORDER_BOUNDED), &
              RDLM_ERR_KIND_MISMATCH, 'lock_open FIFO as BOUNDED')
  call expect(rdlm_lock_open(ctx, 'f.fifo', lock, order=7_c_int), RDLM_ERR_INVALID_ARG, &
              'lock_open order 7')
  call expect(rdlm_lock_open(ctx, 'f.fifo', lock), RDLM_OK, 'lock_open FIFO, no order')

  ! Names: trailing blanks dropped; RDLM_NAME_MAX bytes at most; one kind per name.
  padded = repeat('n', RDLM_NAME_MAX)
  call expect(rdlm_lock_open(ctx, padded, lock), RDLM_OK, 'name of RDLM_NAME_MAX, padded')
  call expect(rdlm_lock_open(ctx, repeat('n', RDLM_NAME_MAX + 1), lock), &
              RDLM_ERR_NAME_TOO_LONG, 'name too long')
  call expect(rdlm_counter_open(ctx, 'f.fifo', wrong_kind), RDLM_ERR_KIND_MISMATCH, &
              'counter named as an open lock')

  ! Reader-writer lock.
  call expect(rdlm_rwlock_open(ctx, 'f.rw', rw), RDLM_OK, 'rwlock_open')
  call expect(rdlm_rwlock_read_acquire(rw, 0_c_int64_t), RDLM_OK, 'read_acquire')
  call expect(rdlm_rwlock_write_acquire(rw, 0_c_int64_t, token), RDLM_ERR_BUSY, &
              'write_acquire while reading')
  call expect(rdlm_rwlock_read_release(rw), RDLM_OK, 'read_release')
  call expect(rdlm_rwlock_read_release(rw), RDLM_ERR_NOT_OWNER, 'second read_release')
  call expect(rdlm_rwlock_write_acquire(rw, RDLM_TIMEOUT_INFINITE, token), RDLM_OK, &
              'write_acquire')
  call expect_true(token >= 2_c_int64_t**40, 'rwlock token')
  call expect(rdlm_rwlock_read_acquire(rw, 0_c_int64_t), RDLM_ERR_BUSY, 'read while written')
  call expect(rdlm_rwlock_write_release(rw), RDLM_OK, 'write_release')
  call expect(rdlm_rwlock_close(rw), RDLM_OK, 'rwlock_close')

  ! Counter: 64-bit deltas and values.
  call expect(rdlm_counter_open(ctx, 'f.counter', counter), RDLM_OK, 'counter_open')
  call expect(rdlm_counter_fetch_add(counter, 2_c_int64_t**40, old), RDLM_OK, 'fetch_add')
  call expect_true(old == 0, 'counter starts at 0')
  call expect(rdlm_counter_fetch_add(counter, -3_c_int64_t, old), RDLM_OK, 'fetch_add -3')
  call expect_true(old == 2_c_int64_t**40, 'fetch_add returns the previous value')
  call expect(rdlm_counter_read(counter, value), RDLM_OK, 'counter_read')
  call expect_true(value == 2_c_int64_t**40 - 3, 'counter value')

  ! Semaphore of 2 permits.
  call expect(rdlm_sem_open(ctx, 'f.sem', 2, sem), RDLM_OK, 'sem_open')
  call expect(rdlm_sem_open(ctx, 'f.sem', 3, sem), RDLM_ERR_MISMATCH, 'sem_open 3')
  call expect(rdlm_sem_acquire(sem, 2, 0_c_int64_t), RDLM_OK, 'sem_acquire 2')
  call expect(rdlm_sem_acquire(sem, 1, 0_c_int64_t), RDLM_ERR_BUSY, 'sem_acquire empty')
  call expect(rdlm_sem_available(sem, available), RDLM_OK, 'sem_available')
  call expect_true(available == 0, 'no permit free')
  call expect(rdlm_sem_release(sem, 2), RDLM_OK, 'sem_release 2')
  call expect(rdlm_sem_release(sem, 1), RDLM_ERR_NOT_OWNER, 'sem_release unheld')
  call expect(rdlm_sem_available(sem, available), RDLM_OK, 'sem_available')
  call expect_true(available == 2, 'both permits free')
  call expect(rdlm_sem_acquire(sem, 3, 0_c_int64_t), RDLM_ERR_INVALID_ARG, 'k > permits')
  call expect(rdlm_sem_close(sem), RDLM_OK, 'sem_close')

  ! Named barrier of one participant; the context barrier needs a distributed context.
  call expect(rdlm_barrier_open(ctx, 'f.barrier', 1, barrier), RDLM_OK, 'barrier_open')
  call expect(rdlm_barrier_wait(barrier, RDLM_TIMEOUT_INFINITE), RDLM_OK, 'barrier_wait')
  call expect(rdlm_barrier_wait(barrier, 0_c_int64_t), RDLM_OK, 'barrier_wait again')
  call expect(rdlm_barrier_open(ctx, 'f.barrier', 2, barrier), RDLM_ERR_MISMATCH, &
              'barrier_open 2')
  call expect(rdlm_barrier_close(barrier), RDLM_OK, 'barrier_close')
  call expect(rdlm_ctx_barrier(ctx), RDLM_ERR_UNSUPPORTED, 'ctx_barrier node-only')

  ! Fencing on the resource side.
  highest = 0
  call expect(rdlm_fence_check(highest, token), RDLM_OK, 'fence_check')
  call expect_true(highest == token, 'fence_check raised highest')
  call expect(rdlm_fence_check(highest, token - 1), RDLM_ERR_STALE_TOKEN, 'stale token')

  ! After destroy: the context is a bad handle, its objects' handles closed.
  call rdlm_ctx_destroy(ctx)
  call expect(rdlm_lock_open(ctx, 'l', lock), RDLM_ERR_BAD_HANDLE, 'destroyed ctx')
  call expect(rdlm_counter_read(counter, value), RDLM_ERR_CLOSED, 'destroyed ctx counter')
  print '(a)', 'fortran standalone: ok'
end program standalone
