! The Poisson solve of c_examples/poisson.c from Fortran: 2D Laplacian on an n x n grid, b = 1,
! CG to ||r|| <= 1e-8 ||b||; then again with the preconditioners (Chebyshev of degree 3, block
! Jacobi IC(0), and hypre's BoomerAMG where hypre is found); then a sequence of random right-hand
! sides with the recycling methods, which keep a space from one solve to the next (GCRO-DR's later
! solves take fewer iterations than its first; deflated CG's space, from its first directions, gains
! little on this sequence); then the same right-hand sides at once with block CG; then one of them with
! CG in the reproducible sum order. Run: mpiexec -n 2 ./poisson_f [n] [options]
! Run-time options (PARLOPS_OPTIONS, then the command line) change the first solve, as in poisson.c.
program poisson
  use mpi
  use, intrinsic :: iso_c_binding
  use parlops
  use laplacian_demo
  implicit none
  integer :: ierr
  integer(c_int64_t) :: n
  integer(c_int) :: rank, nranks
  type(c_ptr) :: comm, layout, a, x, b, ksp, m, opts, r, seq
  type(c_ptr) :: bs(0:3), xs(0:3)
  integer(c_int64_t) :: its(0:3)
  integer :: j
  real(c_double) :: rn, bn
  type(parlops_solve_info) :: info, pinfo
  type(parlops_amg_options) :: amg
  integer(c_int) :: st, k
  character(len=16) :: pname
  character(len=32) :: arg

  call MPI_Init(ierr)
  n = 100
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  call check(parlops_comm_create_f(MPI_COMM_WORLD, comm))
  call check(parlops_comm_rank(comm, rank))
  call check(parlops_comm_size(comm, nranks))
  call check(parlops_layout_create(comm, PARLOPS_PARTITION_SCATTER, n * n, int(PARLOPS_DECIDE, c_int64_t), layout))
  call assemble_laplacian(layout, n, a)
  call check(parlops_op_create_vecs(a, x, b))
  call check(parlops_vec_fill(b, parlops_real(1.0d0)))
  call check(parlops_solver_create(comm, PARLOPS_METHOD_CG, ksp))
  call check(parlops_solver_set_operator(ksp, a))
  call check(parlops_solver_set_tolerances(ksp, 1.0d-8, 0.0d0, 1.0d5, 100000_c_int64_t))
  call check(parlops_options_create(comm, opts))
  call check(parlops_options_insert_env(opts, c_null_ptr))
  call check(parlops_options_insert_command_line_f(opts))
  call check(parlops_solver_set_from_options_f(ksp, opts, ''))
  call check(parlops_solver_solve(ksp, b, x))
  call check(parlops_solver_info(ksp, info))
  if (rank == 0) then
    write (*, '(a, i0, a, i0, a, i0, a)') 'Poisson ', n, ' x ', n, ' on ', nranks, ' rank(s), cg'
    write (*, '(a, i0)') 'iterations = ', info%iterations
    write (*, '(a, i0)') 'converged reason = ', info%reason
    write (*, '(a, a)') 'final residual norm = ', trim(fmt_e(info%final_residual_norm))
  end if
  ! the same solve with each preconditioner
  do k = 1, 3
    select case (k)
    case (1)
      pname = 'chebyshev(3)'
      st = parlops_op_create_chebyshev(a, 3_c_int64_t, 0.0d0, 0.0d0, m)
    case (2)
      pname = 'bjacobi-ic0'
      st = parlops_op_create_block_jacobi(a, PARLOPS_LOCAL_IC0, 1.0d0, m)
    case (3)
      pname = 'boomeramg'
      call check(parlops_amg_options_init(amg))
      st = parlops_op_create_boomeramg(a, [amg], m)
      if (st == PARLOPS_ERR_NOT_SUPPORTED) then
        if (rank == 0) write (*, '(a)') 'boomeramg: not available here (hypre not found)'
        cycle
      end if
    end select
    call check(st)
    call check(parlops_solver_set_preconditioner(ksp, m))
    call check(parlops_solver_solve(ksp, b, x))
    call check(parlops_solver_info(ksp, pinfo))
    if (rank == 0) write (*, '(a, a, a, i0)') 'preconditioned by ', trim(pname), ': iterations = ', pinfo%iterations
    if (pinfo%reason <= 0 .or. pinfo%iterations >= info%iterations) error stop 2
    call check(parlops_solver_set_preconditioner(ksp, c_null_ptr))
    call check(parlops_op_destroy(m))
  end do
  ! a sequence of right-hand sides, each from the previous solution, with the recycling methods
  call check(parlops_vec_duplicate(b, r))
  do k = 1, 2
    if (k == 1) then
      pname = 'gcro-dr(30, 10)'
      call check(parlops_solver_create(comm, PARLOPS_METHOD_GCRODR, seq))
      call check(parlops_solver_set_restart(seq, 30_c_int64_t))
      call check(parlops_solver_set_recycle(seq, 10_c_int64_t))
    else
      pname = 'deflated cg (8)'
      call check(parlops_solver_create(comm, PARLOPS_METHOD_CG_DEFLATED, seq))
      call check(parlops_solver_set_recycle(seq, 8_c_int64_t))
    end if
    call check(parlops_solver_set_operator(seq, a))
    call check(parlops_solver_set_tolerances(seq, 1.0d-8, 0.0d0, 1.0d5, 100000_c_int64_t))
    call check(parlops_solver_set_initial_guess_nonzero(seq, logical(.true., c_bool)))
    call check(parlops_vec_fill(x, parlops_real(0.0d0)))
    do j = 0, 3
      call check(parlops_vec_set_random(b, PARLOPS_RANDOM_GAUSSIAN, int(j + 1, c_int64_t)))
      call check(parlops_solver_solve(seq, b, x))
      call check(parlops_solver_info(seq, pinfo))
      ! the true residual
      call check(parlops_op_apply(a, x, r))
      call check(parlops_vec_axpby(r, parlops_real(1.0d0), b, parlops_real(-1.0d0)))
      call check(parlops_vec_norm(r, PARLOPS_NORM_2, 0.0d0, rn))
      call check(parlops_vec_norm(b, PARLOPS_NORM_2, 0.0d0, bn))
      if (pinfo%reason <= 0 .or. rn > 1.0001d-8 * bn) error stop 3
      its(j) = pinfo%iterations
    end do
    if (rank == 0) write (*, '(a, a, a, 4(1x, i0))') 'recycling, ', trim(pname), ': iterations of 4 solves', its
    if (k == 1 .and. any(its(1:3) >= its(0))) error stop 4
    call check(parlops_solver_destroy(seq))
  end do
  ! the same 4 right-hand sides at once: block CG (parlops_solver_solve_many), each column's true
  ! residual, in fewer iterations than CG takes for one column alone
  call check(parlops_solver_create(comm, PARLOPS_METHOD_CG, seq))
  call check(parlops_solver_set_operator(seq, a))
  call check(parlops_solver_set_tolerances(seq, 1.0d-8, 0.0d0, 1.0d5, 100000_c_int64_t))
  do j = 0, 3
    call check(parlops_vec_duplicate(b, bs(j)))
    call check(parlops_vec_duplicate(b, xs(j)))
    call check(parlops_vec_set_random(bs(j), PARLOPS_RANDOM_GAUSSIAN, int(j + 1, c_int64_t)))
  end do
  call check(parlops_solver_solve_many(seq, 4_c_int, bs, xs))
  do j = 0, 3
    call check(parlops_solver_info_column(seq, int(j, c_int64_t), pinfo))
    call check(parlops_op_apply(a, xs(j), r))
    call check(parlops_vec_axpby(r, parlops_real(1.0d0), bs(j), parlops_real(-1.0d0)))
    call check(parlops_vec_norm(r, PARLOPS_NORM_2, 0.0d0, rn))
    call check(parlops_vec_norm(bs(j), PARLOPS_NORM_2, 0.0d0, bn))
    if (pinfo%reason <= 0 .or. rn > 1.0001d-8 * bn) error stop 5
    its(j) = pinfo%iterations
  end do
  if (rank == 0) write (*, '(a, 4(1x, i0))') 'block cg of 4 right-hand sides: iterations', its
  ! the reproducible sum order: the iterates' bits do not depend on the rank count, so neither do the
  ! iterations nor the last residual norm printed (tests/examples.sh compares them at 1-3 ranks)
  call check(parlops_solver_set_sum_order(seq, PARLOPS_SUM_REPRODUCIBLE))
  call check(parlops_vec_fill(x, parlops_real(0.0d0)))
  call check(parlops_solver_solve(seq, bs(1), x))
  call check(parlops_solver_info(seq, pinfo))
  call check(parlops_op_apply(a, x, r))
  call check(parlops_vec_axpby(r, parlops_real(1.0d0), bs(1), parlops_real(-1.0d0)))
  call check(parlops_vec_norm(r, PARLOPS_NORM_2, 0.0d0, rn))
  call check(parlops_vec_norm(bs(1), PARLOPS_NORM_2, 0.0d0, bn))
  if (pinfo%reason <= 0 .or. rn > 1.0001d-8 * bn) error stop 6
  if (rank == 0) write (*, '(a, 1x, i0, a, es25.17)') 'reproducible cg: iterations', pinfo%iterations, &
    ', last residual norm', pinfo%final_residual_norm
  do j = 0, 3
    call check(parlops_vec_destroy(bs(j)))
    call check(parlops_vec_destroy(xs(j)))
  end do
  call check(parlops_solver_destroy(seq))
  call check(parlops_vec_destroy(r))
  call check(parlops_options_destroy(opts))
  call check(parlops_solver_destroy(ksp))
  call check(parlops_vec_destroy(x))
  call check(parlops_vec_destroy(b))
  call check(parlops_op_destroy(a))
  call check(parlops_layout_destroy(layout))
  call check(parlops_comm_destroy(comm))
  call MPI_Finalize(ierr)
  if (info%reason <= 0) error stop 1
end program poisson
