/*
 * verify/antihack.h - the static anti-hacking gate. Internal to src/verify.
 */
#ifndef KEVO_VERIFY_ANTIHACK_H
#define KEVO_VERIFY_ANTIHACK_H

#include "kevo/task.h"
#include "kevo/util.h"

/* Analyse a C candidate with libclang. Appends one line per violation
 * ("line N: rule: explanation") to findings and sets *violations.
 * Returns negative only when libclang itself cannot run. */
int kevo_antihack_c(int *violations, kevo_buf *findings, const kevo_task *task,
                    const char *source);

#endif
