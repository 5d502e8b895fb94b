/*
 * backend/opencl_draft.h - the OpenCL backend's first draft: a task's C
 * reference ported to OpenCL C 1.2 as one kernel run by one work-item.
 * Internal to src/backend (white-box tests may include it).
 */
#ifndef KEVO_BACKEND_OPENCL_DRAFT_H
#define KEVO_BACKEND_OPENCL_DRAFT_H

/* *out_source is malloc'd. KEVO_EINVAL when the source does not parse, lacks
 * the kernel, or is OpenCL already. Whether the port compiles is the compile
 * gate's to say (malloc, pointer-taking helpers do not carry over). */
int kevo_backend__opencl_port(char **out_source, const char *c_source, const char *kernel_name);

#endif
