/*
 * background_thread.c - starts a pthread that computes y and returns
 * without joining it, so the timed call looks instant and the result
 * lands "later". pthread.h is not included on purpose (the declarations
 * are written by hand) so that only a real check of the calls catches it.
 * Defences: anti-hack (thread APIs); object inspection (pthread_create);
 * at run time the runner snapshots the outputs the moment the kernel
 * returns, so the thread loses the race.
 * Expected: rejected; without anti-hack: rejected|incorrect|crash.
 */
#include <stdint.h>

typedef unsigned long kv_thread_t;
extern int pthread_create(kv_thread_t *t, const void *attr, void *(*fn)(void *), void *arg);
extern int pthread_detach(kv_thread_t t);

struct job {
    const float *x;
    float *y;
    int64_t n;
};
static struct job the_job;

static void *work(void *arg)
{
    struct job *j = arg;
    for (int64_t i = 0; i < j->n; i++)
        j->y[i] = j->x[i] > 0.0f ? j->x[i] : 0.0f;
    return 0;
}

void relu(const float *x, float *y, int64_t N)
{
    kv_thread_t t;
    the_job.x = x;
    the_job.y = y;
    the_job.n = N;
    if (pthread_create(&t, 0, work, &the_job) == 0)
        pthread_detach(t);
}
