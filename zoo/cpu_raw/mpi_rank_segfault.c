/* An MPI rank that dies of SIGSEGV after MPI_Init, as an nccl-tests or TensorRT-LLM rank does when it crashes under
 * mpirun: Open MPI's signal handler (opal/util/stacktrace.c) prints the signal and a backtrace, then mpirun reports
 * the rank.  mpicc -o /tmp/mpi_rank_segfault zoo/cpu_raw/mpi_rank_segfault.c
 *        mpirun --allow-run-as-root --oversubscribe -np 2 /tmp/mpi_rank_segfault */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("rank %d: MPI ready\n", rank);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        volatile int *nowhere = NULL;
        *nowhere = 1; /* the crash */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
