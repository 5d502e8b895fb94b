/*
 * test_util_machine.c - kevo_machine_get: the id is stable, follows
 * /etc/machine-id and the CPU model (a cloned image on other hardware gets
 * another id), falls back to the hostname; the CPU model comes from
 * "model name", "Hardware" or ARM's implementer/part; the GPU from the
 * NVIDIA driver's information file. Fake /etc and /proc trees under a
 * temporary root (kevo_machine_get_from).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "kevo/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *root;

static int setup(void **state)
{
    (void)state;
    return kevo_mkdtemp(&root, "kevo-test-machine-") < 0 ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    kevo_rmtree(root);
    free(root);
    root = NULL;
    return 0;
}

static void put(const char *rel, const char *text)
{
    char path[4096], dir[4096];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    snprintf(dir, sizeof(dir), "%s", path);
    *strrchr(dir, '/') = '\0';
    assert_int_equal(kevo_mkdirs(dir, 0755), 0);
    assert_int_equal(kevo_file_write(path, text, strlen(text)), 0);
}

static void rm(const char *rel)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    assert_int_equal(remove(path), 0);
}

static void assert_hex_id(const char *id)
{
    assert_int_equal(strlen(id), 32);
    for (const char *p = id; *p; p++)
        assert_true(isxdigit((unsigned char)*p));
}

static void test_machine__x86_with_machine_id(void **state)
{
    (void)state;
    put("etc/machine-id", "3d1219c7c4c5404aaa1f6d2a48adfda4\n");
    put("proc/cpuinfo", "processor\t: 0\nvendor_id\t: AuthenticAMD\n"
                        "model name\t: AMD EPYC 7B13\nflags\t\t: avx2 fma\n\n"
                        "processor\t: 1\nmodel name\t: AMD EPYC 7B13\n");
    kevo_machine a, b;
    assert_int_equal(kevo_machine_get_from(&a, root), 0);
    assert_hex_id(a.id);
    assert_string_equal(a.cpu, "AMD EPYC 7B13");
    assert_string_equal(a.gpu, "");
    assert_true(a.cores >= 1);
    assert_true(a.hostname[0] != '\0');
    /* stable */
    assert_int_equal(kevo_machine_get_from(&b, root), 0);
    assert_string_equal(a.id, b.id);
    /* the same image on other hardware: another id */
    put("proc/cpuinfo", "processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n");
    assert_int_equal(kevo_machine_get_from(&b, root), 0);
    assert_string_equal(b.cpu, "Intel(R) Xeon(R) Platinum 8480+");
    assert_string_not_equal(a.id, b.id);
    /* another machine-id on the same hardware: another id */
    put("proc/cpuinfo", "model name\t: AMD EPYC 7B13\n");
    put("etc/machine-id", "00000000000000000000000000000001\n");
    assert_int_equal(kevo_machine_get_from(&b, root), 0);
    assert_string_not_equal(a.id, b.id);
}

static void test_machine__hostname_fallback_and_arm(void **state)
{
    (void)state;
    /* no machine-id: the hostname (with the CPU) makes the id */
    put("proc/cpuinfo", "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n");
    kevo_machine a, b;
    assert_int_equal(kevo_machine_get_from(&a, root), 0);
    assert_hex_id(a.id);
    assert_string_equal(a.cpu, "CPU implementer 0x41 part 0xd0c");
    assert_int_equal(kevo_machine_get_from(&b, root), 0);
    assert_string_equal(a.id, b.id);
    /* an empty machine-id counts as none */
    put("etc/machine-id", "\n");
    assert_int_equal(kevo_machine_get_from(&b, root), 0);
    assert_string_equal(a.id, b.id);
    /* a machine-id changes it */
    put("etc/machine-id", "3d1219c7c4c5404aaa1f6d2a48adfda4\n");
    assert_int_equal(kevo_machine_get_from(&b, root), 0);
    assert_string_not_equal(a.id, b.id);
    /* "Hardware" wins over the part numbers */
    put("proc/cpuinfo", "CPU part\t: 0xd0c\nHardware\t: BCM2835\n");
    assert_int_equal(kevo_machine_get_from(&b, root), 0);
    assert_string_equal(b.cpu, "BCM2835");
    /* nothing at all */
    rm("proc/cpuinfo");
    assert_int_equal(kevo_machine_get_from(&b, root), 0);
    assert_string_equal(b.cpu, "unknown");
    assert_hex_id(b.id);
}

static void test_machine__nvidia_gpu(void **state)
{
    (void)state;
    put("proc/cpuinfo", "model name\t: Intel(R) Xeon(R) Processor\n");
    put("proc/driver/nvidia/gpus/0000:c1:00.0/information",
        "Model: \t\t NVIDIA H200\nIRQ:   \t\t 17\nGPU UUID: \t GPU-2\n");
    put("proc/driver/nvidia/gpus/0000:41:00.0/information",
        "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 16\n");
    kevo_machine m;
    assert_int_equal(kevo_machine_get_from(&m, root), 0);
    /* the first by bus id */
    assert_string_equal(m.gpu, "NVIDIA H100 80GB HBM3");
}

static void test_machine__this_machine(void **state)
{
    (void)state;
    kevo_machine a, b;
    assert_int_equal(kevo_machine_get(&a), 0);
    assert_int_equal(kevo_machine_get(&b), 0);
    assert_hex_id(a.id);
    assert_string_equal(a.id, b.id);
    assert_true(a.cpu[0] != '\0');
    assert_int_equal(a.cores, kevo_cpu_count());
}

#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_machine__x86_with_machine_id),
        T(test_machine__hostname_fallback_and_arm),
        T(test_machine__nvidia_gpu),
        T(test_machine__this_machine),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
