/*
 * util/error.c - the thread-local error message behind kevo_error_last().
 * Knows nothing about tasks or kernels.
 */
#include "kevo/common.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char error_message[2048];

const char *kevo_error_last(void)
{
    return error_message;
}

int kevo_error_set(int code, const char *fmt, ...)
{
    /* format aside first: callers may pass kevo_error_last() as an argument */
    char tmp[sizeof(error_message)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    memcpy(error_message, tmp, sizeof(tmp));
    return code;
}

void kevo_error_clear(void)
{
    error_message[0] = '\0';
}

const char *kevo_error_name(int code)
{
    switch (code) {
    case KEVO_OK: return "OK";
    case KEVO_ENOTFOUND: return "ENOTFOUND";
    case KEVO_EINVAL: return "EINVAL";
    case KEVO_ETIMEOUT: return "ETIMEOUT";
    case KEVO_ENOMEM: return "ENOMEM";
    case KEVO_EIO: return "EIO";
    case KEVO_EINFRA: return "EINFRA";
    case KEVO_EINTR: return "EINTR";
    case KEVO_EEXISTS: return "EEXISTS";
    default: return "ERROR";
    }
}
