! A distributed sparse matrix from Fortran: each rank assembles its rows of the 2D 5-point Laplacian
! with global (0-based) column indices (laplacian_demo.f90); then the same numbers as
! c_examples/csr_laplacian.c. Run: mpiexec -n 3 ./csr_laplacian_f [n]
program csr_laplacian
  use mpi
  use, intrinsic :: iso_c_binding
  use parlops
  use laplacian_demo
  implicit none
  integer :: ierr
  integer(c_int64_t) :: n, big_n, start, len, r, i, j, k, nloc
  integer(c_int) :: rank, nranks
  type(c_ptr) :: comm, layout, a, x, y, d, px, hopts, amg
  integer(c_int) :: st
  real(c_double) :: novec(1)
  real(c_double), pointer :: xl(:)
  real(c_double) :: ny, nx, ndiag, err
  character(len=32) :: arg

  call MPI_Init(ierr)
  n = 100
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  big_n = n * n
  call check(parlops_comm_create_f(MPI_COMM_WORLD, comm))
  call check(parlops_comm_rank(comm, rank))
  call check(parlops_comm_size(comm, nranks))
  call check(parlops_layout_create(comm, PARLOPS_PARTITION_SCATTER, big_n, int(PARLOPS_DECIDE, c_int64_t), layout))
  call check(parlops_layout_local_range(layout, start, len))
  call assemble_laplacian(layout, n, a)

  call check(parlops_op_create_vecs(a, x, y))
  call check(parlops_vec_duplicate(x, d))
  call check(parlops_vec_local_array(x, px, nloc))
  call c_f_pointer(px, xl, [nloc])
  do k = 1, len
    r = start + k - 1
    i = r / n
    j = mod(r, n)
    xl(k) = sin(3.0d0 * real(i + 1, c_double) / real(n + 1, c_double)) * &
            cos(2.0d0 * real(j + 1, c_double) / real(n + 1, c_double))
  end do
  call check(parlops_op_apply(a, x, y))
  call check(parlops_vec_norm(y, PARLOPS_NORM_2, 0.0d0, ny))
  call check(parlops_op_apply_adjoint(a, y, x))
  call check(parlops_vec_norm(x, PARLOPS_NORM_2, 0.0d0, nx))
  call check(parlops_op_diagonal(a, d))
  call check(parlops_vec_norm(d, PARLOPS_NORM_INF, 0.0d0, ndiag))
  call check(parlops_op_dottest(a, 7_c_int64_t, err))
  if (rank == 0) then
    write (*, '(a, i0, a, i0, a, i0, a, i0)') 'ranks = ', nranks, ', grid = ', n, ' x ', n, ', unknowns = ', big_n
    write (*, '(a, a)') 'norm2(A x) = ', trim(fmt_e(ny))
    write (*, '(a, a)') 'norm2(A^H A x) = ', trim(fmt_e(nx))
    write (*, '(a, a)') 'norminf(diag A) = ', trim(fmt_e(ndiag))
  end if
  ! BoomerAMG with options by hypre's names (hypre is loaded at run time: a build without it says so)
  call check(parlops_hypre_options_create(PARLOPS_HYPRE_BOOMERAMG, hopts))
  call check(parlops_hypre_options_set_int_f(hopts, 'PMaxElmts', 4_c_int64_t))
  call check(parlops_hypre_options_set_real_f(hopts, 'strong_threshold', 0.25d0))
  if (parlops_hypre_options_set_int_f(hopts, 'NoSuchOption', 1_c_int64_t) /= PARLOPS_ERR_INVALID_ARGUMENT) error stop 2
  st = parlops_op_create_boomeramg_with(a, hopts, 0_c_int64_t, novec, amg)
  if (st == PARLOPS_OK) then
    call check(parlops_op_apply(amg, y, x))
    call check(parlops_op_destroy(amg))
  else if (st /= PARLOPS_ERR_NOT_SUPPORTED) then
    call check(st)
  end if
  call check(parlops_hypre_options_destroy(hopts))
  call check(parlops_vec_destroy(x))
  call check(parlops_vec_destroy(y))
  call check(parlops_vec_destroy(d))
  call check(parlops_op_destroy(a))
  call check(parlops_layout_destroy(layout))
  call check(parlops_comm_destroy(comm))
  call MPI_Finalize(ierr)
  if (err >= 1.0d-13) error stop 1
end program csr_laplacian
