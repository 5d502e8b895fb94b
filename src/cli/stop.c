/*
 * cli/stop.c - Ctrl-C and SIGTERM for the commands that run the agent
 * (kevo run, kevo worker): the first signal sets a flag the agent reads
 * (finish the attempt in flight, then stop), a second leaves at once,
 * erasing a status line first. The store stays consistent either way (one
 * transaction per attempt). Must not do anything but set the flag and
 * leave: a signal handler may only call async-signal-safe functions.
 */
#include "commands.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t status_line_shown;

static void on_signal(int sig)
{
    (void)sig;
    if (stop_requested) { /* second Ctrl-C: leave now */
        if (status_line_shown)
            (void)!write(STDOUT_FILENO, "\r\033[K", 4); /* async-signal-safe */
        _exit(130);
    }
    stop_requested = 1;
}

volatile sig_atomic_t *kevo_cli_stop_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    return &stop_requested;
}

void kevo_cli_stop_status_line(bool shown)
{
    status_line_shown = shown;
}
