/*
 * harness/protocol.h - the channel between kevo (parent) and a runner (the
 * small program compiled around one kernel: the reference or a candidate,
 * never both). Shared by kevo's verifier (src/verify/channel.c) and
 * harness/runner.c.
 *
 * The runner's process is the candidate's: everything in it, its pipes and
 * its clock included, is assumed hostile. So the channel carries no data
 * and no result the candidate could forge:
 *   - buffers live in kevo-owned shared memory: fd 5 is a read-only memfd
 *     with the call descriptor (page 0) and the input regions; fd 6 a
 *     memfd (sealed against resizing) with the out/inout regions. kevo
 *     writes the inputs, poisons the outputs and writes the canaries itself
 *     while the runner is stopped (SIGSTOP), and reads the outputs and
 *     checks the canaries itself after stopping it again;
 *   - kevo times every call from outside (SIGCONT + 'X' to the reply), and
 *     subtracts only a channel overhead measured on the reference runner;
 *   - replies are one byte and a parameter index, validated by kevo, and
 *     any byte kevo did not ask for is a protocol violation.
 *
 * Pipes: the runner reads commands on fd 3 and answers on fd 4.
 *   runner -> "KEVORUN2"                      once, after its own lock-down
 *   parent -> u32 nparams, u8 role[n], u8 type[n], u64 offset[n],
 *             u64 length[n]   where each buffer param's region lies in its
 *             memfd (in: fd 5, out/inout: fd 6; page multiples; 0 for
 *             scalars)
 *   runner -> 'r'                             regions mapped
 *   parent -> 'X'   call the kernel once on the descriptor in page 0 of
 *             fd 5; answer 'd' u32 bad (a param a device harness saw
 *             written past its end, UINT32_MAX when none)
 *   parent -> 'N'   no-op, answer 'n' (kevo's measure of the channel)
 *   parent -> 'Q'   exit
 * The runner maps every region between PROT_NONE guard pages; inputs are
 * read-only. A buffer's data ends at most 63 bytes before its region's end
 * (64-byte aligned start); the slack on both sides holds canaries.
 */
#ifndef KEVO_HARNESS_PROTOCOL_H
#define KEVO_HARNESS_PROTOCOL_H

#include <stdint.h>

#define KEVO_RUNNER_HELLO "KEVORUN2"
#define KEVO_RUNNER_CMD_FD 3
#define KEVO_RUNNER_REPLY_FD 4
#define KEVO_RUNNER_IN_FD 5
#define KEVO_RUNNER_OUT_FD 6
#define KEVO_RUNNER_MAX_SETS 64
#define KEVO_RUNNER_MAX_PARAMS 64
#define KEVO_RUNNER_DESC_MAGIC 0x4b45564f43414c4cULL /* "KEVOCALL" */

/* Page 0 of the input memfd, written by kevo before every call. */
typedef struct {
    uint64_t magic;
    uint64_t seq;
    uint64_t data_off[KEVO_RUNNER_MAX_PARAMS]; /* start of the data within its region */
    uint64_t bytes[KEVO_RUNNER_MAX_PARAMS];    /* buffer size (0 for scalars) */
    double scalar[KEVO_RUNNER_MAX_PARAMS];
} kevo_runner_desc;

/* Exit status of a device harness (runner_opencl.c, runner_cuda.cu) that
 * gave up on a device error; its last line on stderr (the runner's log)
 * says why, and kevo shows that line. */
#define KEVO_RUNNER_EXIT_DEVICE 42
/* Roles and types use the numbering of kevo_role / kevo_dtype (kevo/task.h). */
enum { KEVO_RROLE_IN = 0, KEVO_RROLE_OUT = 1, KEVO_RROLE_INOUT = 2, KEVO_RROLE_SCALAR = 3 };
enum { KEVO_RT_F32 = 0, KEVO_RT_F64 = 1, KEVO_RT_I32 = 2, KEVO_RT_I64 = 3, KEVO_RT_U8 = 4 };

#endif
