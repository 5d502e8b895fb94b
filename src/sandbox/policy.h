/*
 * sandbox/policy.h - the seccomp policy for untrusted children, compiled
 * once into a BPF program so children can install it between fork and
 * exec without allocating. Internal to src/sandbox.
 */
#ifndef KEVO_SANDBOX_POLICY_H
#define KEVO_SANDBOX_POLICY_H

#include <linux/filter.h>

/* The policy program (borrowed, process lifetime), or NULL with
 * kevo_error_last() set. Thread-safe. */
const struct sock_fprog *kevo_sandbox_policy(void);

#endif
