!> The C functions of rdlm.h and rdlm/mpi.h as Fortran sees them: bind(C) interfaces,
!> handles as type(c_ptr) passed by value, outputs by reference; rdlm_ctx_params_t as
!> an interoperable type. For the module rdlm (rdlm.F90) only, which wraps them in
!> typed handles and Fortran strings; not installed.
module rdlm_capi
  use, intrinsic :: iso_c_binding, only: c_int, c_int32_t, c_int64_t, c_char, c_ptr, &
                                         c_null_ptr, c_size_t
  implicit none
  public

  ! rdlm_ctx_params_t, field for field.
  type, bind(C) :: ctx_params_t
    integer(c_int64_t) :: field_mask = 0
    type(c_ptr) :: job = c_null_ptr
    integer(c_int32_t) :: capacity = 0
    integer(c_int32_t) :: rank = 0
    integer(c_int32_t) :: size = 0
    type(c_ptr) :: rendezvous = c_null_ptr
  end type ctx_params_t

  ! rdlm_lock_params_t.
  type, bind(C) :: lock_params_t
    integer(c_int64_t) :: field_mask = 0
    integer(c_int) :: order = 0
  end type lock_params_t

  interface
    function c_ctx_create(params, ctx) bind(C, name='rdlm_ctx_create') result(st)
      import :: ctx_params_t, c_ptr, c_int
      type(ctx_params_t), intent(in) :: params
      type(c_ptr), intent(inout) :: ctx
      integer(c_int) :: st
    end function
    function c_mpi_ctx_create_f(comm, params, ctx) bind(C, name='rdlm_mpi_ctx_create_f') &
        result(st)
      import :: ctx_params_t, c_ptr, c_int
      integer(c_int), value :: comm
      type(ctx_params_t), intent(in) :: params
      type(c_ptr), intent(inout) :: ctx
      integer(c_int) :: st
    end function
    function c_mpi_barrier_f(comm) bind(C, name='rdlm_mpi_barrier_f') result(st)
      import :: c_int
      integer(c_int), value :: comm
      integer(c_int) :: st
    end function
    subroutine c_ctx_destroy(ctx) bind(C, name='rdlm_ctx_destroy')
      import :: c_ptr
      type(c_ptr), value :: ctx
    end subroutine
    ! rdlm_lock_open, rdlm_rwlock_open, rdlm_counter_open, rdlm_counter_open_sharded:
    ! one shape, bound once per C name.
    function c_lock_open(ctx, name, h) bind(C, name='rdlm_lock_open') result(st)
      import :: c_ptr, c_char, c_int
      type(c_ptr), value :: ctx
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), intent(inout) :: h
      integer(c_int) :: st
    end function
    function c_lock_open_params(ctx, name, params, h) bind(C, name='rdlm_lock_open_params') &
        result(st)
      import :: c_ptr, c_char, c_int, lock_params_t
      type(c_ptr), value :: ctx
      character(kind=c_char), intent(in) :: name(*)
      type(lock_params_t), intent(in) :: params
      type(c_ptr), intent(inout) :: h
      integer(c_int) :: st
    end function
    function c_rwlock_open(ctx, name, h) bind(C, name='rdlm_rwlock_open') result(st)
      import :: c_ptr, c_char, c_int
      type(c_ptr), value :: ctx
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), intent(inout) :: h
      integer(c_int) :: st
    end function
    function c_counter_open(ctx, name, h) bind(C, name='rdlm_counter_open') result(st)
      import :: c_ptr, c_char, c_int
      type(c_ptr), value :: ctx
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), intent(inout) :: h
      integer(c_int) :: st
    end function
    function c_counter_open_sharded(ctx, name, h) &
        bind(C, name='rdlm_counter_open_sharded') result(st)
      import :: c_ptr, c_char, c_int
      type(c_ptr), value :: ctx
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), intent(inout) :: h
      integer(c_int) :: st
    end function
    ! rdlm_sem_open, rdlm_barrier_open: a name and a count.
    function c_sem_open(ctx, name, n, h) bind(C, name='rdlm_sem_open') result(st)
      import :: c_ptr, c_char, c_int, c_int32_t
      type(c_ptr), value :: ctx
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int32_t), value :: n
      type(c_ptr), intent(inout) :: h
      integer(c_int) :: st
    end function
    function c_barrier_open(ctx, name, n, h) bind(C, name='rdlm_barrier_open') result(st)
      import :: c_ptr, c_char, c_int, c_int32_t
      type(c_ptr), value :: ctx
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int32_t), value :: n
      type(c_ptr), intent(inout) :: h
      integer(c_int) :: st
    end function
    ! Acquires that return a token.
    function c_lock_acquire(h, timeout, token) bind(C, name='rdlm_lock_acquire') result(st)
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: h
      integer(c_int64_t), value :: timeout
      integer(c_int64_t), intent(inout) :: token
      integer(c_int) :: st
    end function
    function c_rwlock_write_acquire(h, timeout, token) &
        bind(C, name='rdlm_rwlock_write_acquire') result(st)
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: h
      integer(c_int64_t), value :: timeout
      integer(c_int64_t), intent(inout) :: token
      integer(c_int) :: st
    end function
    ! Calls that take a handle and a timeout.
    function c_rwlock_read_acquire(h, timeout) bind(C, name='rdlm_rwlock_read_acquire') &
        result(st)
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: h
      integer(c_int64_t), value :: timeout
      integer(c_int) :: st
    end function
    function c_barrier_wait(h, timeout) bind(C, name='rdlm_barrier_wait') result(st)
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: h
      integer(c_int64_t), value :: timeout
      integer(c_int) :: st
    end function
    ! Calls that take a handle only.
    function c_lock_release(h) bind(C, name='rdlm_lock_release') result(st)
      import :: c_ptr, c_int
      type(c_ptr), value :: h
      integer(c_int) :: st
    end function
    function c_lock_close(h) bind(C, name='rdlm_lock_close') result(st)
      import :: c_ptr, c_int
      type(c_ptr), value :: h
      integer(c_int) :: st
    end function
    function c_rwlock_read_release(h) bind(C, name='rdlm_rwlock_read_release') result(st)
      import :: c_ptr, c_int
      type(c_ptr), value :: h
      integer(c_int) :: st
    end function
    function c_rwlock_write_release(h) bind(C, name='rdlm_rwlock_write_release') result(st)
      import :: c_ptr, c_int
      type(c_ptr), value :: h
      integer(c_int) :: st
    end function
    function c_rwlock_close(h) bind(C, name='rdlm_rwlock_close') result(st)
      import :: c_ptr, c_int
      type(c_ptr), value :: h
      integer(c_int) :: st
    end function
    function c_counter_close(h) bind(C, name='rdlm_counter_close') result(st)
      import :: c_ptr, c_int
      type(c_ptr), value :: h
      integer(c_int) :: st
    end function
    function c_sem_close(h) bind(C, name='rdlm_sem_close') result(st)
      import :: c_ptr, c_int
      type(c_ptr), value :: h
      integer(c_int) :: st
    end function
    function c_barrier_close(h) bind(C, name='rdlm_barrier_close') result(st)
      import :: c_ptr, c_int
      type(c_ptr), value :: h
      integer(c_int) :: st
    end function
    function c_ctx_barrier(h) bind(C, name='rdlm_ctx_barrier') result(st)
      import :: c_ptr, c_int
      type(c_ptr), value :: h
      integer(c_int) :: st
    end function
    function c_ctx_barrier_arrive(h) bind(C, name='rdlm_ctx_barrier_arrive') result(st)
      import :: c_ptr, c_int
      type(c_ptr), value :: h
      integer(c_int) :: st
    end function
    function c_ctx_barrier_wait(h) bind(C, name='rdlm_ctx_barrier_wait') result(st)
      import :: c_ptr, c_int
      type(c_ptr), value :: h
      integer(c_int) :: st
    end function
    ! Counters and semaphores.
    function c_counter_fetch_add(h, delta, old) bind(C, name='rdlm_counter_fetch_add') &
        result(st)
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: h
      integer(c_int64_t), value :: delta
      integer(c_int64_t), intent(inout) :: old
      integer(c_int) :: st
    end function
    function c_counter_read(h, val) bind(C, name='rdlm_counter_read') result(st)
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: h
      integer(c_int64_t), intent(inout) :: val
      integer(c_int) :: st
    end function
    function c_sem_acquire(h, k, timeout) bind(C, name='rdlm_sem_acquire') result(st)
      import :: c_ptr, c_int, c_int32_t, c_int64_t
      type(c_ptr), value :: h
      integer(c_int32_t), value :: k
      integer(c_int64_t), value :: timeout
      integer(c_int) :: st
    end function
    function c_sem_release(h, k) bind(C, name='rdlm_sem_release') result(st)
      import :: c_ptr, c_int, c_int32_t
      type(c_ptr), value :: h
      integer(c_int32_t), value :: k
      integer(c_int) :: st
    end function
    function c_sem_available(h, avail) bind(C, name='rdlm_sem_available') result(st)
      import :: c_ptr, c_int, c_int32_t
      type(c_ptr), value :: h
      integer(c_int32_t), intent(inout) :: avail
      integer(c_int) :: st
    end function
    ! No handle.
    function rdlm_fence_check(highest, token) bind(C, name='rdlm_fence_check') result(st)
      !> rdlm_fence_check (rdlm.h): highest is the resource's integer(c_int64_t), 0 at
      !> first; lock-free, no context needed.
      import :: c_int, c_int64_t
      integer(c_int64_t), intent(inout) :: highest
      integer(c_int64_t), value :: token
      integer(c_int) :: st
    end function
    function c_status_str(st) bind(C, name='rdlm_status_str') result(text)
      import :: c_int, c_ptr
      integer(c_int), value :: st
      type(c_ptr) :: text
    end function
    function c_status_name(st) bind(C, name='rdlm_status_name') result(text)
      import :: c_int, c_ptr
      integer(c_int), value :: st
      type(c_ptr) :: text
    end function
    function c_get_version() bind(C, name='rdlm_get_version') result(text)
      import :: c_ptr
      type(c_ptr) :: text
    end function
    function c_strlen(s) bind(C, name='strlen') result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function
  end interface
end module rdlm_capi
