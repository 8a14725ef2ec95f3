mpicc -o /tmp/mpi_rank_segfault zoo/cpu_raw/mpi_rank_segfault.c && mpirun --allow-run-as-root --oversubscribe -np 2 /tmp/mpi_rank_segfault
# exit_code=139 wall_s=1.3 Open MPI 4.1.4 (Debian 12 openmpi-bin) (cwd: repo root)
