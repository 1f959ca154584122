! The computation of c_examples/vectors.c in Fortran: each rank fills only its part of x and y,
! then global norms, a dot product, y = 2x + y, and a gathered checksum on rank 0. The two main
! programs (vectors.f90 with `use mpi`, vectors_f08.f90 with `use mpi_f08`) pass their communicator
! as an integer handle.
module vectors_demo
  use, intrinsic :: iso_c_binding
  use parlops
  implicit none
contains
  subroutine check(status, what)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= PARLOPS_OK) then
      write (*, '(a, a, a, a)') 'parlops error in ', what, ': ', parlops_last_error_f()
      error stop 1
    end if
  end subroutine check

  function fmt_e(x) result(s)
    real(c_double), intent(in) :: x
    character(len=32) :: s
    integer :: i
    write (s, '(es17.10e2)') x
    s = adjustl(s)
    i = index(s, 'E')
    if (i > 0) s(i:i) = 'e'
  end function fmt_e

  subroutine run_vectors(fcomm, n)
    integer, intent(in) :: fcomm
    integer(c_int64_t), intent(in) :: n
    type(c_ptr) :: comm, layout, x, y, px
    integer(c_int) :: rank, nranks
    integer(c_int64_t) :: start, len, k, i, nloc
    real(c_double), pointer :: xl(:)
    real(c_double), allocatable, target :: yl(:), all(:)
    real(c_double) :: n1, n2, ninf, ny, checksum
    type(parlops_scalar) :: d
    character(len=:), allocatable :: report

    call check(parlops_comm_create_f(int(fcomm, c_int), comm), 'comm_create_f')
    call check(parlops_comm_rank(comm, rank), 'comm_rank')
    call check(parlops_comm_size(comm, nranks), 'comm_size')
    call check(parlops_config_report_f(comm, report), 'config_report')
    if (rank == 0) write (*, '(a)', advance='no') report

    call check(parlops_layout_create(comm, PARLOPS_PARTITION_SCATTER, n, int(PARLOPS_DECIDE, c_int64_t), layout), &
               'layout_create')
    call check(parlops_layout_local_range(layout, start, len), 'layout_local_range')
    call check(parlops_vec_create(layout, PARLOPS_F64, PARLOPS_MEMORY_HOST, x), 'vec_create')
    allocate (yl(max(len, 1_c_int64_t)))
    call check(parlops_vec_create_with_array(layout, PARLOPS_F64, PARLOPS_MEMORY_HOST, c_loc(yl), y), &
               'vec_create_with_array')
    call check(parlops_vec_local_array(x, px, nloc), 'vec_local_array')
    call c_f_pointer(px, xl, [nloc])
    do k = 1, len
      i = start + k - 1 ! global index, from 0 as in C
      xl(k) = sin(0.5d0 * real(i, c_double)) + 1.0d0
      yl(k) = cos(real(i, c_double))
    end do

    call check(parlops_vec_norm(x, PARLOPS_NORM_1, 0.0d0, n1), 'norm1')
    call check(parlops_vec_norm(x, PARLOPS_NORM_2, 0.0d0, n2), 'norm2')
    call check(parlops_vec_norm(x, PARLOPS_NORM_INF, 0.0d0, ninf), 'norminf')
    call check(parlops_vec_dot(x, y, d), 'dot')
    call check(parlops_vec_axpy(y, parlops_real(2.0d0), x), 'axpy')
    call check(parlops_vec_norm(y, PARLOPS_NORM_2, 0.0d0, ny), 'norm2 y')

    if (rank == 0) then
      allocate (all(max(n, 1_c_int64_t)))
      call check(parlops_vec_gather(x, 0, c_loc(all)), 'gather')
      checksum = 0.0d0
      do i = 0, n - 1
        checksum = checksum + real(mod(i, 7_c_int64_t) + 1, c_double) * all(i + 1)
      end do
      write (*, '(a, i0, a, i0)') 'ranks = ', nranks, ', global length = ', n
      write (*, '(a, a)') 'norm1(x) = ', trim(fmt_e(n1))
      write (*, '(a, a)') 'norm2(x) = ', trim(fmt_e(n2))
      write (*, '(a, a)') 'norminf(x) = ', trim(fmt_e(ninf))
      write (*, '(a, a)') 'dot(x, y) = ', trim(fmt_e(d%re))
      write (*, '(a, a)') 'norm2(2x + y) = ', trim(fmt_e(ny))
      write (*, '(a, a)') 'checksum = ', trim(fmt_e(checksum))
    else
      call check(parlops_vec_gather(x, 0, c_null_ptr), 'gather')
    end if

    call check(parlops_vec_destroy(x), 'vec_destroy')
    call check(parlops_vec_destroy(y), 'vec_destroy')
    call check(parlops_layout_destroy(layout), 'layout_destroy')
    call check(parlops_comm_destroy(comm), 'comm_destroy')
  end subroutine run_vectors
end module vectors_demo
