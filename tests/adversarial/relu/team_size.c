// kevo: cflags -fopenmp
/*
 * team_size.c - ReLU cut into one block per thread of the team, where each
 * thread takes block (thread number mod CPUs): right while the team has
 * one thread per CPU, as when kevo checks and times a candidate, but a
 * larger team (OMP_NUM_THREADS set higher, another machine's default)
 * leaves the last blocks unwritten. The result depends on the team, as a
 * data race's depends on the interleaving: the race probe, which runs
 * every threaded candidate again with more threads than CPUs, must catch
 * it on every run.
 * Expected: incorrect (the feedback names the probe's thread count).
 */
#include <omp.h>
#include <stdint.h>

void relu(const float *x, float *y, int64_t N)
{
#pragma omp parallel
    {
        int64_t nt = omp_get_num_threads(), np = omp_get_num_procs();
        int64_t blk = (N + nt - 1) / nt;
        int64_t b = omp_get_thread_num() % np; /* one block per CPU */
        int64_t hi = (b + 1) * blk < N ? (b + 1) * blk : N;
        for (int64_t i = b * blk; i < hi; i++)
            y[i] = x[i] > 0.0f ? x[i] : 0.0f;
    }
}
