! Shared by the Fortran examples: assemble this rank's rows of the 2D 5-point Laplacian on an n x n
! grid (rows numbered i*n + j from 0, global column indices) as a parlops CSR operator.
module laplacian_demo
  use, intrinsic :: iso_c_binding
  use parlops
  implicit none
contains
  subroutine check(status)
    integer(c_int), intent(in) :: status
    if (status /= PARLOPS_OK) then
      write (*, '(a)') 'parlops error: '//parlops_last_error_f()
      error stop 1
    end if
  end subroutine check

  function fmt_e(v) result(s)
    real(c_double), intent(in) :: v
    character(len=32) :: s
    integer :: p
    write (s, '(es17.10e2)') v
    s = adjustl(s)
    p = index(s, 'E')
    if (p > 0) s(p:p) = 'e'
  end function fmt_e

  !> A = the Laplacian on `layout` (n*n entries, scatter partition).
  subroutine assemble_laplacian(layout, n, a)
    type(c_ptr), intent(in) :: layout
    integer(c_int64_t), intent(in) :: n
    type(c_ptr), intent(out) :: a
    integer(c_int64_t) :: start, len, r, i, j, nnz
    integer(c_int64_t), allocatable, target :: row_ptr(:), col(:)
    real(c_double), allocatable, target :: val(:)
    call check(parlops_layout_local_range(layout, start, len))
    allocate (row_ptr(len + 1), col(5 * len + 1), val(5 * len + 1))
    nnz = 0
    row_ptr(1) = 0
    do r = start, start + len - 1
      i = r / n
      j = mod(r, n)
      if (i > 0) call add(r - n, -1.0d0)
      if (j > 0) call add(r - 1, -1.0d0)
      call add(r, 4.0d0)
      if (j < n - 1) call add(r + 1, -1.0d0)
      if (i < n - 1) call add(r + n, -1.0d0)
      row_ptr(r - start + 2) = nnz
    end do
    call check(parlops_op_create_csr(layout, layout, PARLOPS_F64, PARLOPS_INDEX_I64, c_loc(row_ptr), c_loc(col), &
                                     c_loc(val), a))
  contains
    subroutine add(c, v)
      integer(c_int64_t), intent(in) :: c
      real(c_double), intent(in) :: v
      nnz = nnz + 1
      col(nnz) = c
      val(nnz) = v
    end subroutine add
  end subroutine assemble_laplacian
end module laplacian_demo
