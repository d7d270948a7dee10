!> rdlm for Fortran: `use rdlm` (docs/fortran.md).
!>
!> The C API of include/rdlm.h and rdlm/mpi.h, one procedure per C function, bound to
!> it with ISO_C_BINDING. Every contract is the C one (blocking, thread safety,
!> ordering, errors: read the C function's comment); what differs is said here:
!>  - Handles are derived types (rdlm_ctx, rdlm_lock, ...), one per kind, so handles
!>    of different kinds cannot be mixed. A handle never opened is C's NULL:
!>    calls through it return RDLM_ERR_BAD_HANDLE.
!>  - Calls return the status as integer(c_int), one of the RDLM_* constants below;
!>    rdlm_status_str gives its text as a Fortran string.
!>  - Names are normal Fortran strings; trailing blanks are dropped.
!>  - Timeouts, tokens and counter values are integer(c_int64_t) (re-exported here).
!>    RDLM_TIMEOUT_INFINITE is -1: the bits of C's UINT64_MAX. Tokens stay below 2**63,
!>    so they compare as signed integers.
!>  - Counts (permits, nprocs, k, capacity) are default integers.
!> Thread levels are those of C (rdlm/mpi.h). Built into librdlm_fortran.so.
module rdlm
  use, intrinsic :: iso_c_binding, only: c_int, c_int32_t, c_int64_t, c_char, c_ptr, &
                                         c_null_ptr, c_null_char, c_loc, c_f_pointer
  use rdlm_capi
#ifdef RDLM_HAVE_MPI_F08
  use mpi_f08, only: MPI_Comm
#endif
  implicit none
  private
  public :: c_int, c_int32_t, c_int64_t

  ! Statuses (RDLM_OK, RDLM_ERR_*), RDLM_NAME_MAX, RDLM_SEM_PERMITS_MAX and
  ! RDLM_TIMEOUT_INFINITE, generated from the C headers (gen_constants.c).
  include 'rdlm_constants.inc'

  !> A context (C: rdlm_ctx_h).
  type, public :: rdlm_ctx
    private
    type(c_ptr) :: p = c_null_ptr
  end type rdlm_ctx
  !> An exclusive lock (rdlm_lock_h).
  type, public :: rdlm_lock
    private
    type(c_ptr) :: p = c_null_ptr
  end type rdlm_lock
  !> A reader-writer lock (rdlm_rwlock_h).
  type, public :: rdlm_rwlock
    private
    type(c_ptr) :: p = c_null_ptr
  end type rdlm_rwlock
  !> A 64-bit counter (rdlm_counter_h).
  type, public :: rdlm_counter
    private
    type(c_ptr) :: p = c_null_ptr
  end type rdlm_counter
  !> A counting semaphore (rdlm_sem_h).
  type, public :: rdlm_sem
    private
    type(c_ptr) :: p = c_null_ptr
  end type rdlm_sem
  !> A named barrier (rdlm_barrier_h).
  type, public :: rdlm_barrier
    private
    type(c_ptr) :: p = c_null_ptr
  end type rdlm_barrier

  !> Collective over comm: rdlm_mpi_ctx_create (rdlm/mpi.h). comm is an integer handle
  !> (`use mpi`), or a type(MPI_Comm) (`use mpi_f08`) when the MPI had mpi_f08.
  interface rdlm_mpi_ctx_create
    module procedure mpi_ctx_create_int
#ifdef RDLM_HAVE_MPI_F08
    module procedure mpi_ctx_create_f08
#endif
  end interface rdlm_mpi_ctx_create

  !> Collective over comm: rdlm_mpi_barrier (rdlm/mpi.h), rdlm's barrier over any
  !> intracommunicator (a context cached on it); comm as for rdlm_mpi_ctx_create.
  interface rdlm_mpi_barrier
    module procedure mpi_barrier_int
#ifdef RDLM_HAVE_MPI_F08
    module procedure mpi_barrier_f08
#endif
  end interface rdlm_mpi_barrier

  public :: rdlm_mpi_ctx_create, rdlm_mpi_barrier, rdlm_ctx_create, rdlm_ctx_destroy
  public :: rdlm_lock_open, rdlm_lock_acquire, rdlm_lock_try_acquire, rdlm_lock_release, &
            rdlm_lock_close
  public :: rdlm_rwlock_open, rdlm_rwlock_read_acquire, rdlm_rwlock_read_release, &
            rdlm_rwlock_write_acquire, rdlm_rwlock_write_release, rdlm_rwlock_close
  public :: rdlm_counter_open, rdlm_counter_open_sharded, rdlm_counter_fetch_add, &
            rdlm_counter_read, rdlm_counter_close
  public :: rdlm_sem_open, rdlm_sem_acquire, rdlm_sem_release, rdlm_sem_available, &
            rdlm_sem_close
  public :: rdlm_barrier_open, rdlm_barrier_wait, rdlm_barrier_close
  public :: rdlm_ctx_barrier, rdlm_ctx_barrier_arrive, rdlm_ctx_barrier_wait
  public :: rdlm_fence_check, rdlm_status_str, rdlm_status_name, rdlm_get_version

contains

  ! ---- strings -----------------------------------------------------------------------

  ! A name for C: trailing blanks dropped, NUL appended.
  pure function c_str(s) result(r)
    character(*), intent(in) :: s
    character(kind=c_char, len=len_trim(s) + 1) :: r
    r = trim(s)//c_null_char
  end function c_str

  ! A copy of a constant NUL-terminated C string.
  function f_str(p) result(r)
    type(c_ptr), intent(in) :: p
    character(:), allocatable :: r
    character(kind=c_char), pointer :: chars(:)
    integer :: i

    call c_f_pointer(p, chars, [c_strlen(p)])
    allocate (character(len=size(chars)) :: r)
    do i = 1, size(chars)
      r(i:i) = chars(i)
    end do
  end function f_str

  !> Text of a status (rdlm_status_str): "timed out" for RDLM_ERR_TIMEOUT;
  !> "unknown status" outside the list. Thread-safe.
  function rdlm_status_str(st) result(text)
    integer(c_int), intent(in) :: st
    character(:), allocatable :: text
    text = f_str(c_status_str(st))
  end function rdlm_status_str

  !> Symbolic name of a status (rdlm_status_name): "RDLM_ERR_TIMEOUT"; "RDLM_?" if unknown.
  function rdlm_status_name(st) result(text)
    integer(c_int), intent(in) :: st
    character(:), allocatable :: text
    text = f_str(c_status_name(st))
  end function rdlm_status_name

  !> Library version, "major.minor.patch" (rdlm_get_version).
  function rdlm_get_version() result(text)
    character(:), allocatable :: text
    text = f_str(c_get_version())
  end function rdlm_get_version

  ! ---- contexts ----------------------------------------------------------------------

  ! rdlm_ctx_params_t from the optional arguments. job_c holds the job's C string; it
  ! must outlive the create call (params%job points into it).
  subroutine ctx_params(params, job_c, job, capacity)
    type(ctx_params_t), intent(out) :: params
    character(kind=c_char), allocatable, target, intent(inout) :: job_c(:)
    character(*), intent(in), optional :: job
    integer, intent(in), optional :: capacity

    if (present(job)) then
      job_c = transfer(c_str(job), [c_null_char])
      params%job = c_loc(job_c)
      params%field_mask = ior(params%field_mask, RDLM_CTX_FIELD_JOB)
    end if
    if (present(capacity)) then
      params%capacity = int(capacity, c_int32_t)
      params%field_mask = ior(params%field_mask, RDLM_CTX_FIELD_CAPACITY)
    end if
  end subroutine ctx_params

  !> rdlm_ctx_create (rdlm.h): attach to the node segment of the job. job and capacity,
  !> if present, set the parameters of those names (else $RDLM_JOB, $RDLM_CAPACITY and
  !> the other defaults apply; a distributed context through $RDLM_RENDEZVOUS as in C).
  !> On error ctx is untouched.
  function rdlm_ctx_create(ctx, job, capacity) result(st)
    type(rdlm_ctx), intent(inout) :: ctx
    character(*), intent(in), optional :: job
    integer, intent(in), optional :: capacity
    integer(c_int) :: st
    type(ctx_params_t) :: params
    character(kind=c_char), allocatable, target :: job_c(:)

    call ctx_params(params, job_c, job, capacity)
    st = c_ctx_create(params, ctx%p)
  end function rdlm_ctx_create

  ! rdlm_mpi_ctx_create over an integer (`use mpi`) communicator handle.
  function mpi_ctx_create_int(comm, ctx, job, capacity) result(st)
    integer, intent(in) :: comm
    type(rdlm_ctx), intent(inout) :: ctx
    character(*), intent(in), optional :: job
    integer, intent(in), optional :: capacity
    integer(c_int) :: st
    type(ctx_params_t) :: params
    character(kind=c_char), allocatable, target :: job_c(:)

    call ctx_params(params, job_c, job, capacity)
    st = c_mpi_ctx_create_f(int(comm, c_int), params, ctx%p)
  end function mpi_ctx_create_int

#ifdef RDLM_HAVE_MPI_F08
  ! rdlm_mpi_ctx_create over a `use mpi_f08` communicator, whose MPI_VAL is the integer
  ! handle.
  function mpi_ctx_create_f08(comm, ctx, job, capacity) result(st)
    type(MPI_Comm), intent(in) :: comm
    type(rdlm_ctx), intent(inout) :: ctx
    character(*), intent(in), optional :: job
    integer, intent(in), optional :: capacity
    integer(c_int) :: st

    st = mpi_ctx_create_int(comm%MPI_VAL, ctx, job, capacity)
  end function mpi_ctx_create_f08
#endif

  ! rdlm_mpi_barrier over an integer communicator handle.
  function mpi_barrier_int(comm) result(st)
    integer, intent(in) :: comm
    integer(c_int) :: st
    st = c_mpi_barrier_f(int(comm, c_int))
  end function mpi_barrier_int

#ifdef RDLM_HAVE_MPI_F08
  ! rdlm_mpi_barrier over a `use mpi_f08` communicator.
  function mpi_barrier_f08(comm) result(st)
    type(MPI_Comm), intent(in) :: comm
    integer(c_int) :: st
    st = mpi_barrier_int(comm%MPI_VAL)
  end function mpi_barrier_f08
#endif

  !> rdlm_ctx_destroy (rdlm.h): detach, releasing what the context holds; collective
  !> for a distributed context. Later calls through ctx return RDLM_ERR_BAD_HANDLE,
  !> through its objects' handles RDLM_ERR_CLOSED.
  subroutine rdlm_ctx_destroy(ctx)
    type(rdlm_ctx), intent(in) :: ctx
    call c_ctx_destroy(ctx%p)
  end subroutine rdlm_ctx_destroy

  !> rdlm_ctx_barrier (rdlm.h): barrier over every process of a distributed context;
  !> RDLM_ERR_UNSUPPORTED in a node-only one.
  function rdlm_ctx_barrier(ctx) result(st)
    type(rdlm_ctx), intent(in) :: ctx
    integer(c_int) :: st
    st = c_ctx_barrier(ctx%p)
  end function rdlm_ctx_barrier

  !> rdlm_ctx_barrier_arrive (rdlm.h): the non-blocking half of rdlm_ctx_barrier.
  function rdlm_ctx_barrier_arrive(ctx) result(st)
    type(rdlm_ctx), intent(in) :: ctx
    integer(c_int) :: st
    st = c_ctx_barrier_arrive(ctx%p)
  end function rdlm_ctx_barrier_arrive

  !> rdlm_ctx_barrier_wait (rdlm.h): waits until every process arrived.
  function rdlm_ctx_barrier_wait(ctx) result(st)
    type(rdlm_ctx), intent(in) :: ctx
    integer(c_int) :: st
    st = c_ctx_barrier_wait(ctx%p)
  end function rdlm_ctx_barrier_wait

  ! ---- exclusive locks ---------------------------------------------------------------

  !> rdlm_lock_open (rdlm.h): open (creating if needed) the lock named name; with order
  !> (an RDLM_LOCK_ORDER_*), rdlm_lock_open_params with that order.
  function rdlm_lock_open(ctx, name, lock, order) result(st)
    type(rdlm_ctx), intent(in) :: ctx
    character(*), intent(in) :: name
    type(rdlm_lock), intent(inout) :: lock
    integer(c_int), intent(in), optional :: order
    integer(c_int) :: st
    type(lock_params_t) :: params

    if (.not. present(order)) then
      st = c_lock_open(ctx%p, c_str(name), lock%p)
      return
    end if
    params%field_mask = RDLM_LOCK_FIELD_ORDER
    params%order = order
    st = c_lock_open_params(ctx%p, c_str(name), params, lock%p)
  end function rdlm_lock_open

  !> rdlm_lock_acquire (rdlm.h): acquire exclusively within timeout_ns (0: one try,
  !> RDLM_TIMEOUT_INFINITE). RDLM_OK or RDLM_OWNER_DEAD: held, token (if present) set
  !> to the fencing token; otherwise token is untouched.
  function rdlm_lock_acquire(lock, timeout_ns, token) result(st)
    type(rdlm_lock), intent(in) :: lock
    integer(c_int64_t), intent(in) :: timeout_ns
    integer(c_int64_t), intent(inout), optional :: token
    integer(c_int) :: st
    integer(c_int64_t) :: t

    st = c_lock_acquire(lock%p, timeout_ns, t)
    if (present(token) .and. (st == RDLM_OK .or. st == RDLM_OWNER_DEAD)) token = t
  end function rdlm_lock_acquire

  !> One try without waiting: rdlm_lock_acquire with timeout 0 (RDLM_ERR_BUSY if held,
  !> also by this context: locks are not recursive).
  function rdlm_lock_try_acquire(lock, token) result(st)
    type(rdlm_lock), intent(in) :: lock
    integer(c_int64_t), intent(inout), optional :: token
    integer(c_int) :: st
    st = rdlm_lock_acquire(lock, 0_c_int64_t, token)
  end function rdlm_lock_try_acquire

  !> rdlm_lock_release (rdlm.h): release; RDLM_ERR_NOT_OWNER if not held by this context.
  function rdlm_lock_release(lock) result(st)
    type(rdlm_lock), intent(in) :: lock
    integer(c_int) :: st
    st = c_lock_release(lock%p)
  end function rdlm_lock_release

  !> rdlm_lock_close (rdlm.h): close the handle, releasing the lock if held; later
  !> calls through it return RDLM_ERR_CLOSED.
  function rdlm_lock_close(lock) result(st)
    type(rdlm_lock), intent(in) :: lock
    integer(c_int) :: st
    st = c_lock_close(lock%p)
  end function rdlm_lock_close

  ! ---- reader-writer locks -----------------------------------------------------------

  !> rdlm_rwlock_open (rdlm.h).
  function rdlm_rwlock_open(ctx, name, rw) result(st)
    type(rdlm_ctx), intent(in) :: ctx
    character(*), intent(in) :: name
    type(rdlm_rwlock), intent(inout) :: rw
    integer(c_int) :: st
    st = c_rwlock_open(ctx%p, c_str(name), rw%p)
  end function rdlm_rwlock_open

  !> rdlm_rwlock_read_acquire (rdlm.h): acquire shared within timeout_ns.
  function rdlm_rwlock_read_acquire(rw, timeout_ns) result(st)
    type(rdlm_rwlock), intent(in) :: rw
    integer(c_int64_t), intent(in) :: timeout_ns
    integer(c_int) :: st
    st = c_rwlock_read_acquire(rw%p, timeout_ns)
  end function rdlm_rwlock_read_acquire

  !> rdlm_rwlock_read_release (rdlm.h).
  function rdlm_rwlock_read_release(rw) result(st)
    type(rdlm_rwlock), intent(in) :: rw
    integer(c_int) :: st
    st = c_rwlock_read_release(rw%p)
  end function rdlm_rwlock_read_release

  !> rdlm_rwlock_write_acquire (rdlm.h): acquire exclusive; token as rdlm_lock_acquire.
  function rdlm_rwlock_write_acquire(rw, timeout_ns, token) result(st)
    type(rdlm_rwlock), intent(in) :: rw
    integer(c_int64_t), intent(in) :: timeout_ns
    integer(c_int64_t), intent(inout), optional :: token
    integer(c_int) :: st
    integer(c_int64_t) :: t

    st = c_rwlock_write_acquire(rw%p, timeout_ns, t)
    if (present(token) .and. (st == RDLM_OK .or. st == RDLM_OWNER_DEAD)) token = t
  end function rdlm_rwlock_write_acquire

  !> rdlm_rwlock_write_release (rdlm.h).
  function rdlm_rwlock_write_release(rw) result(st)
    type(rdlm_rwlock), intent(in) :: rw
    integer(c_int) :: st
    st = c_rwlock_write_release(rw%p)
  end function rdlm_rwlock_write_release

  !> rdlm_rwlock_close (rdlm.h): close, releasing what this context holds on it.
  function rdlm_rwlock_close(rw) result(st)
    type(rdlm_rwlock), intent(in) :: rw
    integer(c_int) :: st
    st = c_rwlock_close(rw%p)
  end function rdlm_rwlock_close

  ! ---- counters ----------------------------------------------------------------------

  !> rdlm_counter_open (rdlm.h): a 64-bit signed counter, starting at 0.
  function rdlm_counter_open(ctx, name, counter) result(st)
    type(rdlm_ctx), intent(in) :: ctx
    character(*), intent(in) :: name
    type(rdlm_counter), intent(inout) :: counter
    integer(c_int) :: st
    st = c_counter_open(ctx%p, c_str(name), counter%p)
  end function rdlm_counter_open

  !> rdlm_counter_open_sharded (rdlm.h): one shard per node in a distributed context.
  function rdlm_counter_open_sharded(ctx, name, counter) result(st)
    type(rdlm_ctx), intent(in) :: ctx
    character(*), intent(in) :: name
    type(rdlm_counter), intent(inout) :: counter
    integer(c_int) :: st
    st = c_counter_open_sharded(ctx%p, c_str(name), counter%p)
  end function rdlm_counter_open_sharded

  !> rdlm_counter_fetch_add (rdlm.h): add delta atomically; old (if present) gets the
  !> previous value on RDLM_OK, else is untouched.
  function rdlm_counter_fetch_add(counter, delta, old) result(st)
    type(rdlm_counter), intent(in) :: counter
    integer(c_int64_t), intent(in) :: delta
    integer(c_int64_t), intent(inout), optional :: old
    integer(c_int) :: st
    integer(c_int64_t) :: prev

    st = c_counter_fetch_add(counter%p, delta, prev)
    if (present(old) .and. st == RDLM_OK) old = prev
  end function rdlm_counter_fetch_add

  !> rdlm_counter_read (rdlm.h): value gets the current value on RDLM_OK.
  function rdlm_counter_read(counter, value) result(st)
    type(rdlm_counter), intent(in) :: counter
    integer(c_int64_t), intent(inout) :: value
    integer(c_int) :: st
    st = c_counter_read(counter%p, value)
  end function rdlm_counter_read

  !> rdlm_counter_close (rdlm.h).
  function rdlm_counter_close(counter) result(st)
    type(rdlm_counter), intent(in) :: counter
    integer(c_int) :: st
    st = c_counter_close(counter%p)
  end function rdlm_counter_close

  ! ---- semaphores --------------------------------------------------------------------

  !> rdlm_sem_open (rdlm.h): permits (1..RDLM_SEM_PERMITS_MAX) fixed by the first open;
  !> another value gives RDLM_ERR_MISMATCH.
  function rdlm_sem_open(ctx, name, permits, sem) result(st)
    type(rdlm_ctx), intent(in) :: ctx
    character(*), intent(in) :: name
    integer, intent(in) :: permits
    type(rdlm_sem), intent(inout) :: sem
    integer(c_int) :: st
    st = c_sem_open(ctx%p, c_str(name), int(permits, c_int32_t), sem%p)
  end function rdlm_sem_open

  !> rdlm_sem_acquire (rdlm.h): take k permits at once within timeout_ns.
  function rdlm_sem_acquire(sem, k, timeout_ns) result(st)
    type(rdlm_sem), intent(in) :: sem
    integer, intent(in) :: k
    integer(c_int64_t), intent(in) :: timeout_ns
    integer(c_int) :: st
    st = c_sem_acquire(sem%p, int(k, c_int32_t), timeout_ns)
  end function rdlm_sem_acquire

  !> rdlm_sem_release (rdlm.h): give back k permits this handle holds.
  function rdlm_sem_release(sem, k) result(st)
    type(rdlm_sem), intent(in) :: sem
    integer, intent(in) :: k
    integer(c_int) :: st
    st = c_sem_release(sem%p, int(k, c_int32_t))
  end function rdlm_sem_release

  !> rdlm_sem_available (rdlm.h): available gets the permits free at this instant (a
  !> snapshot) on RDLM_OK.
  function rdlm_sem_available(sem, available) result(st)
    type(rdlm_sem), intent(in) :: sem
    integer, intent(inout) :: available
    integer(c_int) :: st
    integer(c_int32_t) :: n

    st = c_sem_available(sem%p, n)
    if (st == RDLM_OK) available = int(n)
  end function rdlm_sem_available

  !> rdlm_sem_close (rdlm.h): close, giving back the permits it holds.
  function rdlm_sem_close(sem) result(st)
    type(rdlm_sem), intent(in) :: sem
    integer(c_int) :: st
    st = c_sem_close(sem%p)
  end function rdlm_sem_close

  ! ---- named barriers ----------------------------------------------------------------

  !> rdlm_barrier_open (rdlm.h): a reusable barrier of nprocs participants (the same
  !> nprocs everywhere, else RDLM_ERR_MISMATCH).
  function rdlm_barrier_open(ctx, name, nprocs, barrier) result(st)
    type(rdlm_ctx), intent(in) :: ctx
    character(*), intent(in) :: name
    integer, intent(in) :: nprocs
    type(rdlm_barrier), intent(inout) :: barrier
    integer(c_int) :: st
    st = c_barrier_open(ctx%p, c_str(name), int(nprocs, c_int32_t), barrier%p)
  end function rdlm_barrier_open

  !> rdlm_barrier_wait (rdlm.h): arrive and wait within timeout_ns.
  function rdlm_barrier_wait(barrier, timeout_ns) result(st)
    type(rdlm_barrier), intent(in) :: barrier
    integer(c_int64_t), intent(in) :: timeout_ns
    integer(c_int) :: st
    st = c_barrier_wait(barrier%p, timeout_ns)
  end function rdlm_barrier_wait

  !> rdlm_barrier_close (rdlm.h).
  function rdlm_barrier_close(barrier) result(st)
    type(rdlm_barrier), intent(in) :: barrier
    integer(c_int) :: st
    st = c_barrier_close(barrier%p)
  end function rdlm_barrier_close
end module rdlm
