/*
 * socket.c - opens a TCP socket and connects to 127.0.0.1:22. Computes the
 * right answer only when socket() succeeded, so any hole in the defences
 * shows up as a `correct` verdict.
 * Defences: anti-hack (network headers and APIs); object inspection
 * (undefined `socket`, `connect`); seccomp kills socket() (SIGSYS).
 * Expected: rejected; without anti-hack: rejected|crash.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

void relu(const float *x, float *y, int64_t N)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return; /* refused: leave y unwritten -> incorrect */
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons(22);
    a.sin_addr.s_addr = htonl(0x7f000001);
    connect(fd, (struct sockaddr *)&a, sizeof(a));
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
