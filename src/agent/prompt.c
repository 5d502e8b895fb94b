/*
 * agent/prompt.c - prompt templates live in files (prompts/BACKEND/NAME.md),
 * not in C string literals: {{key}} placeholders are replaced by values.
 * The directory is $KEVO_PROMPTS_DIR, else the data directory's prompts/
 * (kevo_data_dir: an install's share/kevo, or the source tree of a build).
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

int kevo_prompt_render(char **out, const char *backend, const char *name,
                       const char *const *keys, const char *const *values, size_t n)
{
    *out = NULL;
    const char *dir = kevo_data_path("KEVO_PROMPTS_DIR", "prompts");
    kevo_buf path = {0}, res = {0};
    char *text = NULL;
    int error = 0;
    if (!dir) {
        error = kevo_error_set(KEVO_EINFRA, "prompt templates: %s", kevo_error_last());
        goto done;
    }
    kevo_buf_printf(&path, "%s/%s/%s.md", dir, backend, name);
    if ((error = kevo_file_read(&text, NULL, path.ptr)) < 0) {
        error = kevo_error_set(KEVO_EINFRA, "prompt template missing: %s", kevo_error_last());
        goto done;
    }
    for (const char *p = text; *p;) {
        const char *open = strstr(p, "{{");
        if (!open) {
            kevo_buf_puts(&res, p);
            break;
        }
        kevo_buf_put(&res, p, (size_t)(open - p));
        const char *close = strstr(open + 2, "}}");
        if (!close) {
            kevo_buf_puts(&res, open);
            break;
        }
        size_t klen = (size_t)(close - open - 2);
        bool found = false;
        for (size_t i = 0; i < n; i++)
            if (strlen(keys[i]) == klen && !strncmp(keys[i], open + 2, klen)) {
                kevo_buf_puts(&res, values[i] ? values[i] : "");
                found = true;
            }
        if (!found)
            kevo_buf_put(&res, open, (size_t)(close + 2 - open));
        p = close + 2;
    }
    *out = kevo_buf_detach(&res);
done:
    free(text);
    kevo_buf_free(&path);
    kevo_buf_free(&res);
    return error;
}
