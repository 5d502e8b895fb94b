/*
 * report/api.c - the public calls of kevo/report.h that take a store:
 * kevo_report_metrics() (load a run and the tasks' levels, then compute) and kevo_report_html()
 * (load the page's model, then render). Each only checks its arguments
 * and joins a loader of load.c to a computation or renderer that never
 * sees the store; nothing is loaded, computed or rendered here.
 */
#include "model.h"

#include <stdlib.h>

int kevo_report_metrics(kevo_run_metrics **out, kevo_memory *mem, int64_t run_id)
{
    int error = 0;
    kevo_run *run = NULL;
    kevo_attempt_list *list = NULL;
    kevo_memory_task_array *tasks = NULL;
    *out = NULL;
    if ((error = kevo_report__run_load(&run, &list, &run_id, mem, run_id)) < 0 ||
        (error = kevo_report__tasks_load(&tasks, mem)) < 0)
        goto done;
    if ((error = kevo_report__metrics_compute(out, run_id, run, list, tasks)) < 0 ||
        (error = kevo_report__machines_name(*out, mem)) < 0 ||
        (error = kevo_report__roofline_load(*out, tasks)) < 0) {
        kevo_run_metrics_free(*out);
        *out = NULL;
    }
done:
    kevo_memory_task_array_free(tasks);
    kevo_attempt_list_free(list);
    kevo_run_free(run);
    return error;
}

int kevo_report_html(kevo_buf *out, kevo_memory *mem, kevo_run_metrics *const *runs, size_t n)
{
    int error = 0;
    kevo_report__model *model = NULL;
    if (!out || !mem || !runs || n == 0) {
        error = kevo_error_set(KEVO_EINVAL, "report: no run to render");
        goto done;
    }
    if (n > KEVO_REPORT__MAX_RUNS) {
        error = kevo_error_set(KEVO_EINVAL,
                               "report: the HTML report compares at most %d runs, "
                               "not %zu",
                               KEVO_REPORT__MAX_RUNS, n);
        goto done;
    }
    if ((error = kevo_report__model_load(&model, mem, runs, n)) < 0)
        goto done;
    error = kevo_report__html_render(out, model);
done:
    kevo_report__model_free(model);
    return error;
}
