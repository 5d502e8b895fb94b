/*
 * report/no_store.h - included last by every file of src/report that must
 * not reach the store (metrics.c, render.c, html*.c): poisons the store's calls, so that a renderer that
 * reaches the store instead of reading its model does not compile. The
 * record types of kevo/memory.h stay usable; only load.c calls the store.
 * Never include this from a header or from load.c / api.c.
 */
#ifndef KEVO_REPORT_NO_STORE_H
#define KEVO_REPORT_NO_STORE_H

#pragma GCC poison kevo_memory_attempt_best kevo_memory_attempt_children
#pragma GCC poison kevo_memory_attempt_get kevo_memory_attempt_list
#pragma GCC poison kevo_memory_attempt_record kevo_memory_attempt_used
#pragma GCC poison kevo_memory_attempts_of_run kevo_memory_attempts_of_task
#pragma GCC poison kevo_memory_export kevo_memory_filter_tasks kevo_memory_import
#pragma GCC poison kevo_memory_item_add kevo_memory_item_add_distilled
#pragma GCC poison kevo_memory_item_get kevo_memory_item_list kevo_memory_item_lookup_api
#pragma GCC poison kevo_memory_item_search kevo_memory_item_sources kevo_memory_open
#pragma GCC poison kevo_memory_open_ex kevo_memory_path kevo_memory_q_get
#pragma GCC poison kevo_memory_q_start_get kevo_memory_q_step kevo_memory_reward_draft
#pragma GCC poison kevo_memory_reward_normalize kevo_memory_reward_refine
#pragma GCC poison kevo_memory_run_begin kevo_memory_run_finish kevo_memory_run_get
#pragma GCC poison kevo_memory_run_list kevo_memory_seed_builtin
#pragma GCC poison kevo_memory_snapshot_begin kevo_memory_snapshot_end
#pragma GCC poison kevo_memory_start_points kevo_memory_stats_get kevo_memory_task_get
#pragma GCC poison kevo_memory_task_list kevo_memory_task_search kevo_memory_task_upsert
#pragma GCC poison kevo_memory_tx_begin kevo_memory_tx_commit kevo_memory_tx_rollback

#endif
