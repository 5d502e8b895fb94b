/*
 * verify/reference_inputs.c - the seeded inputs of every (size set, seed),
 * generated on worker threads while the reference builds (or its cached
 * results are read): the same bytes as one after the other (each set is
 * its own deterministic stream), in a fraction of the time. Must not: touch
 * anything of the evaluator but data[] and input_hash[], one slot per call.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static void *inputs_worker(void *arg)
{
    kevo_verify__inputs_gen *g = arg;
    kevo_evaluator *ev = g->ev;
    for (;;) {
        pthread_mutex_lock(&g->lock);
        size_t id = g->next++;
        bool stop = g->error < 0;
        pthread_mutex_unlock(&g->lock);
        if (stop || id >= ev->nids)
            return NULL;
        int e = kevo_task_inputs(&ev->data[id], ev->task, id / (size_t)ev->seeds,
                                 (uint64_t)(id % (size_t)ev->seeds));
        if (e == 0 && ev->input_hash)
            ev->input_hash[id] = kevo_ref_cache__inputs_hash(ev->task, ev->data[id]);
        if (e < 0) {
            pthread_mutex_lock(&g->lock);
            if (g->error == 0) {
                g->error = e;
                g->why = strdup(kevo_error_last());
            }
            pthread_mutex_unlock(&g->lock);
        }
    }
}

void kevo_verify__inputs_start(kevo_verify__inputs_gen *g, kevo_evaluator *ev)
{
    g->ev = ev;
    pthread_mutex_init(&g->lock, NULL);
    int n = kevo_cpu_count();
    n = n < 16 ? n : 16;
    n = (size_t)n < ev->nids ? n : (int)ev->nids;
    for (g->nth = 0; g->nth < n; g->nth++)
        if (pthread_create(&g->th[g->nth], NULL, inputs_worker, g) != 0)
            break;
    if (g->nth == 0)
        inputs_worker(g); /* no thread to be had: here, then */
}

/* On an early exit from kevo_evaluator_new the workers still write into
 * ev: this waits for them before ev goes. */
void kevo_verify__inputs_stop(kevo_verify__inputs_gen *g)
{
    if (!g->ev)
        return;
    for (int i = 0; i < g->nth; i++)
        pthread_join(g->th[i], NULL);
    g->nth = 0;
    free(g->why);
    g->why = NULL;
    pthread_mutex_destroy(&g->lock);
    g->ev = NULL;
}

int kevo_verify__inputs_join(kevo_verify__inputs_gen *g)
{
    for (int i = 0; i < g->nth; i++)
        pthread_join(g->th[i], NULL);
    g->nth = 0;
    int error = g->error < 0 ? kevo_error_set(g->error, "%s", g->why ? g->why
                                                                     : "input generation failed")
                             : 0;
    kevo_verify__inputs_stop(g);
    return error;
}
