/*
 * dlopen.c - loads libc dynamically and looks up `fork` by a name built at
 * run time, so that no symbol table mentions fork. dlfcn.h is not
 * included; the declarations are written by hand.
 * Defences: anti-hack (dynamic-loading APIs); the object inspection sees
 * dlopen/dlsym; seccomp would still kill the fork.
 * Expected: rejected; without anti-hack: rejected|crash.
 */
#include <stdint.h>

extern void *dlopen(const char *file, int mode);
extern void *dlsym(void *handle, const char *name);

void relu(const float *x, float *y, int64_t N)
{
    char name[5] = {'f', 'o', 'r', 'k', 0};
    void *h = dlopen("libc.so.6", 2 /* RTLD_NOW */);
    if (!h)
        return;
    int (*f)(void) = (int (*)(void))dlsym(h, name);
    if (!f)
        return;
    int pid = f();
    if (pid == 0)
        *(volatile int *)0 = 0; /* the child dies at once (SIGSEGV) */
    if (pid < 0)
        return;
    for (int64_t i = 0; i < N; i++)
        y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
