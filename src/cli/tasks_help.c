/*
 * cli/tasks_help.c - the help text of `kevo tasks` and its subcommands,
 * printed by each of them (cmd_tasks.c, cmd_tasks_import.c,
 * cmd_tasks_link.c), so it lives below all of them. Text only.
 */
#include "commands.h"

#include <stdio.h>

void kevo_cli_tasks_usage(FILE *f)
{
    fprintf(f, "usage: kevo tasks list DIR...\n"
               "       kevo tasks check DIR... [--timing] [--jobs N]\n"
               "       kevo tasks import kernelbench|torch PATH... --out DIR [--scale S|auto]\n"
               "                         [--tolerance T] [--level L] [--no-link] [--link-from SUITE]\n"
               "       kevo tasks link DIR... [--from SUITE]\n"
               "       kevo tasks adapt KERNEL.c --from TASK_DIR --to TASK_DIR [-o OUT]\n"
               "       kevo tasks new NAME --from FILE.c --function F [--size N=V ...] [--shape P=D,...]\n"
               "\n"
               "list   one line per task: name, level, category, description\n"
               "check  validate each task: task.json, reference builds and runs on every size\n"
               "       set x 3 seeds, true outputs are not near-constant and finite.\n"
               "       --timing also fails tasks whose timed reference call is outside 5..200 ms\n"
               "import PyTorch problem files (KernelBench's form: Model, get_inputs(),\n"
               "       get_init_inputs(), size constants; PATH a file or a folder of them) become\n"
               "       torch tasks in DIR/levelN/<task>/ (docs/torch-tasks.md, Import).\n"
               "       kernelbench: level from the folder name levelN (else --level, default 1);\n"
               "       torch: your own modules, --level (default 1). --scale S in (0, 1] shrinks\n"
               "       the dimension sizes, auto until one forward takes 5..200 ms here;\n"
               "       --tolerance T sets atol = rtol (default 0.01). An existing task folder\n"
               "       is never overwritten (that problem is skipped). kernelbench: then each\n"
               "       imported task is linked (see link) unless --no-link.\n"
               "link   give each torch task naming a KernelBench problem a C draft for the\n"
               "       built-in generator: the C reference of the task under SUITE (default\n"
               "       kevo's suites/c) translating the same problem, adapted to the task's\n"
               "       prototype, kept only when kevo finds it correct against PyTorch\n"
               "adapt  rewrite a kernel of one task for another task of the same function\n"
               "       (the pairing link uses; not checked: kevo eval the result)\n"
               "new    a task of your own C function F: task.json + reference.c from its\n"
               "       prototype (kevo tasks new --help)\n"
               "exit status: 0 all good (import: every problem imported), 1 a task failed\n"
               "(import: some problem skipped), 2 bad usage, 3 infrastructure (import: no\n"
               "torch Python)\n");
}
