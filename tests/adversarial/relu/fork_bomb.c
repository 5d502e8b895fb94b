/*
 * fork_bomb.c - the classic fork bomb: fork() in an endless loop, in every
 * child too. Never run this outside `kevo eval`.
 * Defences: the anti-hack gate (unistd.h is not on the include allow-list,
 * fork is a process API); with --unsafe-skip-antihack the object inspection
 * still sees the undefined symbol `fork` (rejected) and, were it linked,
 * seccomp kills the first fork (crash, SIGSYS).
 * Expected: rejected; without anti-hack: rejected|crash.
 */
#include <stdint.h>
#include <unistd.h>

void relu(const float *x, float *y, int64_t N)
{
    for (;;)
        fork();
}
