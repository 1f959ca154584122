! parlops from a `use mpi_f08` program: the communicator crosses as comm%MPI_VAL.
! Run: mpiexec -n 3 ./vectors_f08 [global_length]
program vectors_f08
  use mpi_f08
  use vectors_demo
  implicit none
  integer(c_int64_t) :: n
  character(len=32) :: arg
  call MPI_Init()
  n = 1000
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) n
  end if
  call run_vectors(MPI_COMM_WORLD%MPI_VAL, n)
  call MPI_Finalize()
end program vectors_f08
