! parlops from a `use mpi` program. Run: mpiexec -n 3 ./vectors_f [global_length]
program vectors
  use mpi
  use vectors_demo
  implicit none
  integer :: ierr
  integer(c_int64_t) :: n
  character(len=32) :: arg
  call MPI_Init(ierr)
  n = 1000
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  call run_vectors(MPI_COMM_WORLD, n)
  call MPI_Finalize(ierr)
end program vectors
