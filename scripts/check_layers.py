#!/usr/bin/env python3
"""The layers of docs/architecture.md, checked: every #include "..." in src/
names either a header of the file's own module (by plain file name, from its
own folder) or a public header (include/kevo/...) of a module the file's
module may use. Prints each violation as FILE:LINE: what; exits 1 if any.
Usage: python3 scripts/check_layers.py [SRC_DIR]"""
import os
import re
import sys

# Who owns each public header.
OWNER = {
    "kevo/util.h": "util", "kevo/common.h": "util", "kevo/fault.h": "util",
    "kevo/task.h": "task", "kevo/sandbox.h": "sandbox", "kevo/cparse.h": "cparse",
    "kevo/llm.h": "llm", "kevo/sys/provider.h": "llm",
    "kevo/sys/backend.h": "backend", "kevo/roofline.h": "backend",
    "kevo/verdict.h": "verdict", "kevo/verify.h": "verify",
    "kevo/recipe.h": "recipe", "kevo/memory.h": "memory", "kevo/sys/store.h": "memory",
    "kevo/context.h": "context", "kevo/agent.h": "agent", "kevo/report.h": "report",
}
# harness/protocol.h (the runner protocol) is on these modules' include path.
HARNESS_USERS = {"verify"}
MAY_USE = {
    "util": set(),
    "task": {"util"},
    "sandbox": {"util"},
    "cparse": {"util"},
    "llm": {"util"},
    "backend": {"util", "task", "sandbox", "cparse"},
    "verify": {"util", "task", "sandbox", "backend", "verdict"},
    "recipe": {"util", "task", "cparse", "backend"},
    "memory": {"util", "task", "backend", "verdict"},
    "context": {"util", "task", "memory", "backend", "llm", "verdict"},
    "agent": {"util", "task", "sandbox", "cparse", "llm", "backend", "verdict", "verify",
              "recipe", "memory", "context"},
    "report": {"util", "task", "memory", "backend", "verdict"},
    "cli": set(OWNER.values()),
}
# verify owns verdict.h; a module that may use verify may use its verdict.
for m, uses in MAY_USE.items():
    if "verify" in uses:
        uses.add("verdict")
    uses.add(m)


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else "src"
    problems = []
    include = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    for module in sorted(os.listdir(src)):
        folder = os.path.join(src, module)
        if not os.path.isdir(folder):
            continue
        if module not in MAY_USE:
            problems.append(f"{folder}: a module the layer table does not know "
                            "(add it to docs/architecture.md and scripts/check_layers.py)")
            continue
        for name in sorted(os.listdir(folder)):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(folder, name)
            with open(path, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    m = include.match(line)
                    if not m:
                        continue
                    inc = m.group(1)
                    where = f"{path}:{n}"
                    if ".." in inc.split("/"):
                        problems.append(f"{where}: \"{inc}\": no relative paths out of a folder")
                    elif inc in OWNER:
                        owner = OWNER[inc]
                        if owner not in MAY_USE[module]:
                            problems.append(f"{where}: module {module} may not use {owner} "
                                            f"(\"{inc}\"; docs/architecture.md)")
                    elif inc.startswith("kevo/"):
                        problems.append(f"{where}: \"{inc}\": a public header no module owns")
                    elif "/" in inc:
                        problems.append(f"{where}: \"{inc}\": another module's internal header "
                                        "(or a path where the plain file name belongs)")
                    elif inc == "protocol.h" and module in HARNESS_USERS:
                        pass  # harness/ is on these modules' include path
                    elif not os.path.exists(os.path.join(folder, inc)):
                        problems.append(f"{where}: \"{inc}\" is not a header of {folder}")
    for p in problems:
        print(p)
    print(f"check_layers: {len(problems)} problem(s)" if problems else "check_layers: ok")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
