! Which block of an N-D array each rank holds under parlops_op_halo's split (parlops_halo_block),
! gathered and printed by rank 0: the same lines as c_examples/halo_block.c (C order: slowest axis
! first, starts from 0). Run: mpiexec -n 2 ./halo_block_f
program halo_block
  use mpi
  use parlops
  implicit none
  integer :: ierr, rank, nranks, c, r, d, nd
  integer, parameter :: ndims(3) = [2, 3, 2], axis(3) = [1, 2, 2]
  integer(c_int64_t) :: dims(3, 3), grid(3), start(3), shape(3), mine(6), volume, total, v
  integer(c_int64_t), allocatable :: all(:)
  logical :: failed
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  dims(:, 1) = [7_c_int64_t, 5_c_int64_t, 0_c_int64_t]
  dims(:, 2) = [6_c_int64_t, 9_c_int64_t, 4_c_int64_t]
  dims(:, 3) = [11_c_int64_t, 3_c_int64_t, 0_c_int64_t]
  allocate(all(6 * nranks))
  failed = .false.
  do c = 1, 3
    nd = ndims(c)
    grid = 1
    grid(axis(c)) = nranks
    ! start and shape are arrays of ndim entries (the interface declares them so)
    call check(parlops_halo_block(int(nd, c_int), dims(:, c), grid, int(nranks, c_int), &
      int(rank, c_int), start, shape))
    mine(1:nd) = start(1:nd)
    mine(nd + 1:2 * nd) = shape(1:nd)
    call MPI_Gather(mine, 2 * nd, MPI_INTEGER8, all, 2 * nd, MPI_INTEGER8, 0, MPI_COMM_WORLD, ierr)
    if (rank == 0) then
      volume = 0
      total = product(dims(1:nd, c))
      do r = 0, nranks - 1
        write (*, '(a,i0,a,i0,a)', advance='no') 'halo_block case=', c, ' rank=', r, ' start='
        do d = 1, nd
          write (*, '(1x,i0)', advance='no') all(2 * nd * r + d)
        end do
        write (*, '(a)', advance='no') ' shape='
        v = 1
        do d = 1, nd
          write (*, '(1x,i0)', advance='no') all(2 * nd * r + nd + d)
          v = v * all(2 * nd * r + nd + d)
        end do
        write (*, '(a)') ''
        volume = volume + v
      end do
      if (volume /= total) then
        write (*, '(a,i0,a)') 'case ', c, ': the blocks do not tile the array'
        failed = .true.
      end if
    end if
  end do
  if (rank == 0 .and. .not. failed) write (*, '(a,i0,a)') 'ranks = ', nranks, ', the blocks tile every array'
  call MPI_Finalize(ierr)
  if (failed) stop 1

contains

  subroutine check(status)
    integer(c_int), intent(in) :: status
    if (status /= PARLOPS_OK) then
      write (*, '(a)') parlops_status_string_f(status)//': '//parlops_last_error_f()
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end subroutine check
end program halo_block
