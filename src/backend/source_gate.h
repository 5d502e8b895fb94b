/*
 * backend/source_gate.h - the static anti-hacking gate's analysers, one
 * per candidate language; each backend's source_gate method calls its
 * own. Internal to src/backend (the verifier reaches them through the
 * vtable only).
 */
#ifndef KEVO_BACKEND_SOURCE_GATE_H
#define KEVO_BACKEND_SOURCE_GATE_H

#include "kevo/task.h"
#include "kevo/util.h"

/* Each analyser appends one line per violation ("line N: rule:
 * explanation") to findings and sets *violations. They return negative
 * only when libclang itself cannot run. */

/* C candidates (source_gate_c.c). */
int kevo_backend__gate_c(int *violations, kevo_buf *findings, const kevo_task *task,
                    const char *source);
/* OpenCL C 1.2 candidates (source_gate_opencl.c). */
int kevo_backend__gate_opencl(int *violations, kevo_buf *findings, const kevo_task *task,
                         const char *source);
/* CUDA candidates (source_gate_c.c, as CUDA host code). */
int kevo_backend__gate_cuda(int *violations, kevo_buf *findings, const kevo_task *task,
                       const char *source);

#endif
