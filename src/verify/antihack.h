/*
 * verify/antihack.h - the static anti-hacking gate, one analyser per
 * candidate language. Internal to src/verify.
 */
#ifndef KEVO_VERIFY_ANTIHACK_H
#define KEVO_VERIFY_ANTIHACK_H

#include "kevo/task.h"
#include "kevo/util.h"

/* Each analyser appends one line per violation ("line N: rule:
 * explanation") to findings and sets *violations. They return negative
 * only when libclang itself cannot run. */

/* C candidates (antihack_c.c). */
int kevo_antihack_c(int *violations, kevo_buf *findings, const kevo_task *task,
                    const char *source);
/* OpenCL C 1.2 candidates (antihack_opencl.c). */
int kevo_antihack_opencl(int *violations, kevo_buf *findings, const kevo_task *task,
                         const char *source);
/* CUDA candidates (antihack_cuda.c). */
int kevo_antihack_cuda(int *violations, kevo_buf *findings, const kevo_task *task,
                       const char *source);

/* The analyser of a backend by name ("c", "opencl", "cuda"); unknown names
 * get the C analyser. */
int kevo_antihack(const char *backend, int *violations, kevo_buf *findings,
                  const kevo_task *task, const char *source);

#endif
