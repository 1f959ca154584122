! Building blocks of inverse-problem codes from Fortran (parlops' hIPPYlib and PyLops-MPI entry
! points): the largest eigenvalue of the 2D Laplacian by Lanczos, against its closed form; two random
! vectors orthonormalised and their Gram matrix in one reduction; the block operator [A; I] solved by
! CGLS with its residual history (PyLops-MPI's cost); the proximal gradient and primal-dual methods
! (PyLops-MPI's proximal module) on 1/2 ||x - b||^2 + ||x||_1 / 4, whose minimiser is soft(b, 1/4); the FFT;
! norms within and across rank groups (a mask).
! Run: mpiexec -n 3 ./eigen_f [n]
program eigen
  use mpi
  use, intrinsic :: iso_c_binding
  use parlops
  use laplacian_demo
  implicit none
  integer :: ierr
  integer(c_int64_t) :: n, big_n, steps, hlen
  integer(c_int) :: rank, nranks, ngroups
  type(c_ptr) :: comm, layout, a, id, k, v0, x, b, s, gcomm, glayout, gv, hist
  type(c_ptr) :: ritz(1), vs(2), ops(2), pb, px, py, pf, pg, pdata
  real(c_double), pointer :: bl(:), xl(:), yl(:)
  integer(c_int64_t) :: its, plen
  real(c_double) :: perr, fnorm
  type(c_ptr) :: flay, fop, fx, fy
  integer(c_int64_t) :: fshape(2) = [6_c_int64_t, 4_c_int64_t]
  integer(c_int) :: faxes(2) = [0_c_int, 1_c_int]
  logical(c_bool) :: fflags(2) = [.false._c_bool, .false._c_bool]
  real(c_double) :: ev(1), res(1), exact, gn, pi
  real(c_double), pointer :: h(:)
  type(parlops_scalar) :: g(4), r(4)
  type(parlops_solve_info) :: info
  character(len=32) :: arg

  call MPI_Init(ierr)
  n = 30
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  big_n = n * n
  pi = acos(-1.0d0)
  call check(parlops_comm_create_f(MPI_COMM_WORLD, comm))
  call check(parlops_comm_rank(comm, rank))
  call check(parlops_comm_size(comm, nranks))
  call check(parlops_layout_create(comm, PARLOPS_PARTITION_SCATTER, big_n, int(PARLOPS_DECIDE, c_int64_t), layout))
  call assemble_laplacian(layout, n, a)

  ! Lanczos: the largest eigenvalue is 4 + 4 cos(pi / (n + 1)), simple
  call check(parlops_op_create_vecs(a, v0, ritz(1)))
  call check(parlops_vec_set_random(v0, PARLOPS_RANDOM_UNIFORM, 11_c_int64_t))
  call check(parlops_eig_lanczos(a, v0, min(200_c_int64_t, big_n), 1.0d-10, 1_c_int, PARLOPS_EIG_LARGEST, ev, res, &
                                 ritz, steps))
  exact = 4.0d0 + 4.0d0 * cos(pi / real(n + 1, c_double))
  if (rank == 0) write (*, '(a, i0, a, es10.2)') 'Lanczos: largest eigenvalue in ', steps, ' steps, relative error ', &
    abs(ev(1) - exact) / exact
  if (abs(ev(1) - exact) > 1.0d-8 * exact) error stop 'Lanczos: wrong eigenvalue'

  ! two random vectors orthonormalised: their Gram matrix (one reduction) is the identity
  call check(parlops_vec_duplicate(v0, vs(1)))
  call check(parlops_vec_duplicate(v0, vs(2)))
  call check(parlops_vec_set_random(vs(1), PARLOPS_RANDOM_GAUSSIAN, 1_c_int64_t))
  call check(parlops_vec_set_random(vs(2), PARLOPS_RANDOM_GAUSSIAN, 2_c_int64_t))
  call check(parlops_vec_orthonormalize(comm, 2_c_int, vs, c_null_ptr, r))
  call check(parlops_vec_block_dot(comm, 2_c_int, vs, 2_c_int, vs, g))
  if (abs(g(1)%re - 1.0d0) > 1.0d-12 .or. abs(g(2)%re) > 1.0d-12 .or. abs(g(4)%re - 1.0d0) > 1.0d-12) &
    error stop 'orthonormalize: the Gram matrix is not the identity'
  if (rank == 0) write (*, '(a)') 'orthonormalize: Q^H Q = I'

  ! [A; I] x = [1; 0] by CGLS, with the history of ||b - A x||
  call check(parlops_op_identity(layout, PARLOPS_F64, id))
  ops = [a, id]
  call check(parlops_op_block(comm, PARLOPS_F64, 2_c_int, 1_c_int, ops, k))
  call check(parlops_op_create_vecs(k, x, b))
  call check(parlops_vec_fill(b, parlops_scalar(1.0d0, 0.0d0)))
  call check(parlops_solver_create(comm, PARLOPS_METHOD_CGLS, s))
  call check(parlops_solver_set_operator(s, k))
  call check(parlops_solver_set_tolerances(s, 1.0d-10, 0.0d0, 1.0d5, 1000_c_int64_t))
  call check(parlops_solver_keep_history(s, .true._c_bool))
  call check(parlops_solver_solve(s, b, x))
  call check(parlops_solver_info(s, info))
  call check(parlops_solver_residual_history(s, hist, hlen))
  call c_f_pointer(hist, h, [hlen])
  if (info%reason <= 0 .or. hlen /= info%iterations + 1) error stop 'CGLS on [A; I]: no convergence or history'
  if (rank == 0) write (*, '(a, i0, a, es10.2, a, es10.2)') 'CGLS on [A; I]: ', info%iterations, &
    ' iterations, ||b - A x|| from ', h(1), ' to ', h(hlen)

  ! proximal gradient from x = 0 with tau = 1: one step gives soft(b, 1/4) exactly; primal-dual
  ! with A = I converges to it
  call check(parlops_vec_duplicate(v0, pb))
  call check(parlops_vec_duplicate(v0, px))
  call check(parlops_vec_duplicate(v0, py))
  call check(parlops_vec_set_random(pb, PARLOPS_RANDOM_GAUSSIAN, 5_c_int64_t))
  call check(parlops_prox_create_l2(layout, PARLOPS_F64, 1.0d0, pb, c_null_ptr, 0.0d0, .true._c_bool, pf))
  call check(parlops_prox_create_l1(layout, PARLOPS_F64, 0.25d0, pg))
  call check(parlops_proximal_gradient(pf, pg, 1.0d0, 1.0d0, 1.0d0, 1_c_int64_t, PARLOPS_ACCELERATION_NONE, 0.0d0, &
                                       px, its))
  call check(parlops_vec_local_array(pb, pdata, plen))
  call c_f_pointer(pdata, bl, [plen])
  call check(parlops_vec_local_array(px, pdata, plen))
  call c_f_pointer(pdata, xl, [plen])
  if (any(xl /= sign(max(abs(bl) - 0.25d0, 0.0d0), bl))) error stop 'proximal gradient: not soft(b, 1/4)'
  call check(parlops_vec_fill(px, parlops_scalar(0.0d0, 0.0d0)))
  call check(parlops_primal_dual(pf, pg, id, c_null_ptr, 1.0d0, 0.5d0, 1.0d0, 300_c_int64_t, .true._c_bool, px, py))
  perr = maxval(abs(xl - sign(max(abs(bl) - 0.25d0, 0.0d0), bl)), mask = plen > 0)
  if (plen > 0 .and. perr > 1.0d-8) error stop 'primal-dual: not soft(b, 1/4)'
  if (rank == 0) write (*, '(a, i0, a, es10.2)') 'proximal gradient: soft(b, 1/4) in ', its, &
    ' step; primal-dual (300 iterations): max error ', perr
  ! ADMM (PyLops-MPI's ADMML2) with Op = A = I reaches it too; the L2 through I is L2(b)
  call check(parlops_vec_fill(px, parlops_scalar(0.0d0, 0.0d0)))
  call check(parlops_admm_l2(pg, id, pb, id, 1.0d0, 200_c_int64_t, .false._c_bool, .false._c_bool, 10_c_int64_t, &
                             0.0d0, px, py))
  perr = maxval(abs(xl - sign(max(abs(bl) - 0.25d0, 0.0d0), bl)), mask = plen > 0)
  if (plen > 0 .and. perr > 1.0d-8) error stop 'ADMM: not soft(b, 1/4)'
  call check(parlops_prox_destroy(pf))
  call check(parlops_prox_create_l2_op(id, 1.0d0, pb, c_null_ptr, 0.0d0, .true._c_bool, PARLOPS_METHOD_CGLS, &
                                       10_c_int64_t, 1.0d-24, c_null_ptr, .true._c_bool, pf))
  call check(parlops_prox_apply(pf, 1.0d0, py, px))
  call check(parlops_vec_local_array(py, pdata, plen))
  call c_f_pointer(pdata, yl, [plen])
  perr = maxval(abs(xl - 0.5d0 * (yl + bl)), mask = plen > 0)
  if (plen > 0 .and. perr > 1.0d-13) error stop 'L2 through I: not the prox of L2(b)'
  if (rank == 0) write (*, '(a)') 'ADMM with Op = A = I (200 iterations): soft(b, 1/4); the L2 through I is L2(b)'
  call check(parlops_prox_destroy(pf))
  call check(parlops_prox_destroy(pg))
  call check(parlops_vec_destroy(pb))
  call check(parlops_vec_destroy(px))
  call check(parlops_vec_destroy(py))

  ! the FFT of a 6 x 4 array of ones (axes in C order, from 0): N = 24 at frequency 0, zero elsewhere
  call check(parlops_layout_create_nd(comm, PARLOPS_PARTITION_SCATTER, 2_c_int, fshape, 0_c_int, &
                                      int(PARLOPS_DECIDE, c_int64_t), flay))
  call check(parlops_op_fft(flay, 2_c_int, faxes, PARLOPS_FFT_NORM_NONE, .false._c_bool, fflags, fflags, &
                            PARLOPS_C128, fop))
  call check(parlops_op_create_vecs(fop, fx, fy))
  call check(parlops_vec_fill(fx, parlops_scalar(1.0d0, 0.0d0)))
  call check(parlops_op_apply(fop, fx, fy))
  call check(parlops_vec_norm(fy, PARLOPS_NORM_2, 0.0d0, fnorm))
  if (abs(fnorm - 24.0d0) > 1.0d-12) error stop 'fft: the transform of ones is not 24 at frequency 0'
  call check(parlops_vec_norm(fy, PARLOPS_NORM_1, 0.0d0, perr))
  if (abs(perr - 24.0d0) > 1.0d-12) error stop 'fft: nonzero entries away from frequency 0'
  if (rank == 0) write (*, '(a)') 'fft: the transform of ones is 24 at frequency 0'
  call check(parlops_vec_destroy(fx))
  call check(parlops_vec_destroy(fy))
  call check(parlops_op_destroy(fop))
  call check(parlops_layout_destroy(flay))

  ! rank groups by parity, each holding 10 ones: norms within a group and across groups
  ngroups = min(nranks, 2_c_int)
  call check(parlops_comm_split(comm, mod(rank, 2_c_int), gcomm))
  call check(parlops_layout_create(gcomm, PARLOPS_PARTITION_SCATTER, 10_c_int64_t, int(PARLOPS_DECIDE, c_int64_t), glayout))
  call check(parlops_vec_create(glayout, PARLOPS_F64, PARLOPS_MEMORY_HOST, gv))
  call check(parlops_vec_fill(gv, parlops_scalar(1.0d0, 0.0d0)))
  call check(parlops_vec_norm_groups(comm, gv, PARLOPS_NORM_1, 0.0d0, gn))
  if (abs(gn - 10.0d0 * ngroups) > 1.0d-12) error stop 'rank groups: wrong norm across groups'
  if (rank == 0) write (*, '(a, i0, a)') 'rank groups: ', ngroups, ' groups'

  call check(parlops_vec_destroy(gv))
  call check(parlops_layout_destroy(glayout))
  call check(parlops_comm_destroy(gcomm))
  call check(parlops_solver_destroy(s))
  call check(parlops_vec_destroy(x))
  call check(parlops_vec_destroy(b))
  call check(parlops_op_destroy(k))
  call check(parlops_op_destroy(id))
  call check(parlops_vec_destroy(vs(1)))
  call check(parlops_vec_destroy(vs(2)))
  call check(parlops_vec_destroy(v0))
  call check(parlops_vec_destroy(ritz(1)))
  call check(parlops_op_destroy(a))
  call check(parlops_layout_destroy(layout))
  call check(parlops_comm_destroy(comm))
  call MPI_Finalize(ierr)
end program eigen
