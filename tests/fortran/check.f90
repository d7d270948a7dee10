!> Checks shared by the Fortran tests: a failed check prints one "FAILED" line and
!> stops the program with a non-zero exit (mpirun then ends the job).
module check
  use rdlm
  implicit none
  private
  public :: expect, expect_true

contains

  !> Stop unless st is want; what names the call.
  subroutine expect(st, want, what)
    integer(c_int), intent(in) :: st, want
    character(*), intent(in) :: what

    if (st /= want) then
      print '(7a)', 'FAILED: ', what, ': ', rdlm_status_name(st), ' (', &
        rdlm_status_str(st), '), want '//rdlm_status_name(want)
      error stop 1
    end if
  end subroutine expect

  !> Stop unless ok; what says what should have held.
  subroutine expect_true(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what

    if (.not. ok) then
      print '(2a)', 'FAILED: ', what
      error stop 1
    end if
  end subroutine expect_true
end module check
