/*
 * tests/fuzz/fuzz_llm_response.c - libFuzzer target over what an LLM server
 * sends back: the chat-completions body parser (kevo_llm_openai_parse, no
 * curl involved), the error-message digest of error bodies, and code
 * extraction both from the parsed content and from the raw bytes taken as
 * a reply. The first byte picks the language and kernel name asked for.
 * Seeds and every crash input ever found live in
 * tests/fuzz/corpus/fuzz_llm_response/.
 */
#include "llm/internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const langs[] = {"c", "cpp", "cuda cu cuh; cpp c++ cxx cc hpp c h",
                                        "opencl cl ocl; c h", NULL};
    static const char *const names[] = {"relu", NULL, "main", "k"};
    unsigned sel = size > 0 ? data[0] : 0;
    const char *lang = langs[sel % 5];
    const char *name = names[(sel / 5) % 4];

    kevo_llm_message msgs[2] = {{KEVO_LLM_SYSTEM, "You write C kernels."},
                                {KEVO_LLM_USER, "Write relu."}};
    kevo_llm_request req;
    kevo_llm_request_init(&req);
    req.messages = msgs;
    req.n_messages = 2;

    kevo_llm_response resp = {0};
    if (kevo_llm_openai_parse(&resp, (const char *)data, size, &req) == 0) {
        /* exactly one of content / failure, as callers rely on */
        if ((resp.content == NULL) == (resp.failure == NULL))
            abort();
        if (resp.tokens_prompt < 0 || resp.tokens_completion < 0)
            abort();
        if (resp.content) {
            char *code = NULL;
            if (kevo_llm_extract_code(&code, resp.content, lang, name) == 0 &&
                (!code || !*code || code[strlen(code) - 1] != '\n'))
                abort();
            free(code);
        }
    }
    kevo_llm_response_clear(&resp);

    free(kevo_llm_openai_error_message((const char *)data, size));

    /* the raw bytes as a reply (a C string: up to the first NUL) */
    char *text = malloc(size + 1);
    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    char *code = NULL;
    int rc = kevo_llm_extract_code(&code, text, lang, name);
    if (rc == 0 && (!code || !*code || code[strlen(code) - 1] != '\n' || strchr(code, '\r')))
        abort();
    if (rc != 0 && code)
        abort();
    free(code);
    (void)kevo_llm_tokens_estimate(text, strlen(text));
    free(text);
    return 0;
}
