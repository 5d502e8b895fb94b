/*
 * sandbox/root.h - the minimal read-only root every sandboxed child gets
 * when kevo runs as root: a fresh tmpfs holding only the system's programs
 * and libraries (/usr and its top-level links, read-only), the few /etc
 * files a loader, a compiler or an OpenCL driver reads, /dev/null and
 * friends, a /proc of the child's own PID namespace, /sys read-only, and
 * the child's own work directory (read-write). Nothing else of the host is
 * there: no /root, /home, /tmp, /etc/passwd or /etc/shadow, no other
 * work directory of kevo's. Internal to src/sandbox.
 *
 * The plan is made in the parent (it allocates); the child carries it out
 * between fork and exec with system calls only, in the mount namespace it
 * was cloned with, before it drops its privileges.
 */
#ifndef KEVO_SANDBOX_ROOT_H
#define KEVO_SANDBOX_ROOT_H

typedef struct kevo_root_plan kevo_root_plan;

/* The plan for a child working in `workdir`, which may also read the
 * folders of `ro_paths` (NULL-terminated, may be NULL) at their own paths. */
int kevo_sandbox__root_plan(kevo_root_plan **out, const char *workdir,
                            const char *const *ro_paths);
void kevo_sandbox__root_plan_free(kevo_root_plan *plan);
/* In the child (async-signal-safe): build the root, pivot into it, make it
 * read-only. Returns 0, or -1 when a required step failed (the child must
 * not go on: it would run with the host's file system in view). */
int kevo_sandbox__root_enter(const kevo_root_plan *plan);

#endif
