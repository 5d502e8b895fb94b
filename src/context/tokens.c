/*
 * context/tokens.c - token estimates from byte counts. C source runs at
 * about 3.0-3.5 bytes per token and English prose at about 4.7 with the
 * usual BPE vocabularies (measured; DESIGN.md); the estimate rounds up so
 * that a context packed by estimates stays within a real budget.
 */
#include "kevo/context.h"

#include <math.h>
#include <string.h>

#define BYTES_PER_TOKEN_CODE 3.2
#define BYTES_PER_TOKEN_PROSE 4.7

int kevo_tokens_estimate_len(size_t len, double bytes_per_token)
{
    if (len == 0)
        return 0;
    if (!(bytes_per_token > 0))
        bytes_per_token = 1.0;
    double t = ceil((double)len / bytes_per_token);
    return t > 2147483647.0 ? 2147483647 : (int)t;
}

int kevo_tokens_estimate(const char *text, int is_code)
{
    if (!text)
        return 0;
    return kevo_tokens_estimate_len(strlen(text),
                                    is_code ? BYTES_PER_TOKEN_CODE : BYTES_PER_TOKEN_PROSE);
}
