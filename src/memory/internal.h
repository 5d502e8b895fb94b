/*
 * memory/internal.h - what the files of src/memory share: the kevo_memory
 * handle, uids, clocks, deep copies of records and list accumulators.
 * Not for other modules.
 */
#ifndef KEVO_MEMORY_INTERNAL_H
#define KEVO_MEMORY_INTERNAL_H

#include "kevo/memory.h"
#include "kevo/sys/store.h"

struct kevo_memory {
    kevo_store *store;
    char *path;
    uint64_t uid_seq;
};

/* A fresh 32-hex-digit uid (time, pid, a counter and `salt`). */
void kevo_memory_uid_new(kevo_memory *mem, char out[33], const void *salt, size_t len);
/* Wall-clock Unix time in milliseconds. */
int64_t kevo_memory_now_ms(void);

/* Deep copies whose strings are malloc'd; *_clear frees the strings (and
 * arrays) but not the struct. */
int kevo_attempt_copy(kevo_attempt *dst, const kevo_attempt *src);
void kevo_attempt_clear(kevo_attempt *a);
int kevo_item_copy(kevo_item *dst, const kevo_item *src);
void kevo_item_clear(kevo_item *it);
int kevo_run_copy(kevo_run *dst, const kevo_run *src);
void kevo_run_clear(kevo_run *r);
int kevo_memory_task_copy(kevo_memory_task *dst, const kevo_memory_task *src);
void kevo_memory_task_clear(kevo_memory_task *t);

/* Store callbacks that append deep copies to a heap list (`arg` is the
 * list pointer; lists start zeroed and calloc'd by the caller). */
int kevo_attempt_list_append_cb(void *arg, const kevo_attempt *a);
int kevo_item_list_append_cb(void *arg, const kevo_item *it, double score);

/* Run `store` method calls in a transaction: begin, then on error roll back
 * and keep the error, on success commit. */
int kevo_memory_tx_end(kevo_memory *mem, int error);

/* Defaults given NULL. */
const kevo_learn_config *kevo_learn_config_or_default(const kevo_learn_config *cfg,
                                                      kevo_learn_config *storage);

/* Distillation (distill.c): the deterministic experience text of an
 * attempt and the title/body of a trace. Strings are the caller's. */
int kevo_distill_experience(char **out_title, char **out_body, const kevo_attempt *a,
                            const kevo_attempt *parent, const char *category);
int kevo_distill_trace(char **out_title, char **out_body, const kevo_attempt *a);

#endif
