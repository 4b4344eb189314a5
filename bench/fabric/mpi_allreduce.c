/* SPDX-License-Identifier: Apache-2.0 */
/* The reference for bench/fabric: MPI_Allreduce of fp32 sums at the same sizes and iteration counts as
 * fabric_allreduce, on the same machine, printed in the same columns.
 *   mpirun -np P mpi_allreduce [-b MiB,MiB,...] [-i iterations] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  double sizes[32] = {1, 16, 64};
  int nsizes = 3, iters = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "-b") == 0) {
      nsizes = 0;
      for (char* p = argv[i + 1]; *p && nsizes < 32;) {
        sizes[nsizes++] = strtod(p, &p);
        if (*p == ',') ++p;
      }
    } else if (strcmp(argv[i], "-i") == 0) {
      iters = atoi(argv[i + 1]);
    }
  }
  if (rank == 0) printf("# MPI_Allreduce, %d ranks, fp32 sum, %d iterations per size\n", n, iters);
  for (int k = 0; k < nsizes; ++k) {
    size_t bytes = (size_t)(sizes[k] * 1048576) / 4 * 4, count = bytes / 4;
    float* in = malloc(bytes);
    float* out = malloc(bytes);
    for (size_t i = 0; i < count; ++i) in[i] = (float)(rank + 1 + (int)(i % 5));
    MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double t = (MPI_Wtime() - t0) / iters, worst = 0;
    MPI_Reduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    float want = (float)(n * (n + 1) / 2);
    if (out[0] != want) {
      fprintf(stderr, "rank %d: wrong result %g (expected %g)\n", rank, out[0], want);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    double algbw = (double)bytes / worst / 1e9;
    if (rank == 0) printf("  %14zu %12.1f %12.4f %12.4f\n", bytes, worst * 1e6, algbw, algbw * 2.0 * (n - 1) / n);
    free(in);
    free(out);
  }
  MPI_Finalize();
  return 0;
}
