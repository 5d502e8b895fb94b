/*
 * harness/protocol.h - the pipe protocol between kevo (parent) and a runner
 * (the small program compiled around one kernel: the reference or a
 * candidate, never both). Shared by kevo's verifier and harness/runner.c.
 *
 * The runner reads commands on fd 3 and answers on fd 4, native byte order:
 *   runner -> "KEVORUN1"                      once, after its own setup
 *   parent -> u32 nparams, u8 role[n], u8 type[n]
 *   parent -> 'D' u32 set, then per param: u64 nbytes + bytes (in/inout),
 *             u64 nbytes (out), f64 value (scalar)          store a data set
 *   parent -> 'C' u32 set    call once on that set, answer
 *             u8 status, u32 bad_param, i64 ns, then the bytes of every
 *             out/inout param (in param order)
 *   parent -> 'P' u32 set u64 rot   prepare a timed call: inputs rotated by
 *             (rot * (param + 1)) mod count elements (same values, new places,
 *             so results cached across calls never pay); answer 'p'
 *   parent -> 'X' u32 set    call once on the prepared buffers, answer u8 status,
 *             u32 bad_param, i64 ns. kevo times this round trip itself (minus
 *             the pipe's, measured with 'N'): the runner's own clock lives in
 *             the candidate's process and is only a cross-check
 *   parent -> 'N'            no-op, answer 'n' 
 *   parent -> 'Q'            exit
 * status: 0 ok, 1 the kernel wrote outside an output (before its start or
 * past its end: bad_param).
 * Every call first copies the set's inputs into the same working buffers
 * (inputs read-only, outputs poisoned: NaN for floats, 0x5A bytes for
 * integers), so a kernel that caches results by pointer or leaves an output
 * unwritten is caught.
 */
#ifndef KEVO_HARNESS_PROTOCOL_H
#define KEVO_HARNESS_PROTOCOL_H

#define KEVO_RUNNER_HELLO "KEVORUN1"
#define KEVO_RUNNER_CMD_FD 3
#define KEVO_RUNNER_REPLY_FD 4
#define KEVO_RUNNER_MAX_SETS 64
#define KEVO_RUNNER_MAX_PARAMS 64

enum { KEVO_RUNNER_OK = 0, KEVO_RUNNER_OVERRUN = 1 };
/* Exit status of a device harness (runner_opencl.c, runner_cuda.cu) that
 * gave up on a device error; its last line on stderr (the runner's log)
 * says why, and kevo shows that line. */
#define KEVO_RUNNER_EXIT_DEVICE 42
/* Roles and types use the numbering of kevo_role / kevo_dtype (kevo/task.h). */
enum { KEVO_RROLE_IN = 0, KEVO_RROLE_OUT = 1, KEVO_RROLE_INOUT = 2, KEVO_RROLE_SCALAR = 3 };
enum { KEVO_RT_F32 = 0, KEVO_RT_F64 = 1, KEVO_RT_I32 = 2, KEVO_RT_I64 = 3, KEVO_RT_U8 = 4 };

#endif
