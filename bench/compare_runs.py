#!/usr/bin/env python3
"""Compare the latest `kevo run` in two or more stores, task by task.

    python3 bench/compare_runs.py NAME=STORE.db NAME=STORE.db ...

Reads the attempts of each store's newest run straight from SQLite (the
schema is src/memory/schema.h) and prints, per run:
  * the geometric mean of best speedups, defined as in kevo report
    (kevo_report_geomean in src/report/metrics.c, docs/report.md
    "Definitions"): exp(mean(ln v)) over a set of tasks, v = the task's best
    correct speedup, or 1.0 for a task with no correct kernel or none with a
    measured (positive) speedup: the reference is always there. "final":
    over the tasks of every run, at the shortest run's budget (= kevo
    report's geomean_speedup_all_tasks when the runs share their tasks and
    budget); "solved": over those of them the run solved, at its whole
    budget (= kevo report's geomean_speedup when the runs share their tasks);
  * the paired ratio of the first run to each other: the geometric mean of
    best A / best B over the tasks both solved (= kevo report --compare's
    paired_geomean_ratio);
  * the anytime curve: that geometric mean after 1, 2, ... attempts per
    task, so budgets shorter than the run's are compared too;
  * attempts to the same geometric mean: when each run's anytime geomean
    first reaches the smaller of the final ones;
  * iterations to the same speedup: for each task, the target is 90% of the
    smallest final best over the runs compared (so every run reaches it);
    tasks where that target is under 1.1x have no speedup to reach and are
    left out. The mean attempt index (0 = the draft) at which each run first
    reached the target, and on how many tasks each run got there first.
The first run named is compared with each of the others (ratios).
Only tasks present in every run are compared.
"""
import math
import sqlite3
import sys


def load(path):
    db = sqlite3.connect(path)
    run = db.execute("SELECT max(id) FROM runs").fetchone()[0]
    rows = db.execute(
        "SELECT t.name, a.iteration, a.verdict, a.speedup FROM attempts a "
        "JOIN tasks t ON t.id = a.task_id WHERE a.run_id = ? ORDER BY a.id", (run,)).fetchall()
    db.close()
    tasks, solved = {}, set()
    for name, it, verdict, speedup in rows:
        s = speedup if verdict == "correct" and speedup > 0 else None
        tasks.setdefault(name, {})[it] = s
        if verdict == "correct":
            solved.add(name)
    return tasks, solved


def best_upto(attempts, k):
    """A task's value in geomean() after attempts 0..k: its best correct
    speedup, 1.0 when it has none (kevo_report_best_value)."""
    got = [s for it, s in attempts.items() if it <= k and s is not None]
    return max(got) if got else 1.0


def first_reach(attempts, target):
    for it in sorted(attempts):
        if attempts[it] is not None and attempts[it] >= target:
            return it
    return None


def geomean(xs):
    """The one geometric mean of best speedups (kevo_report_geomean): xs are
    the tasks' values from best_upto; 0 for no task, as kevo report."""
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else 0.0


def main(argv):
    runs, solved = [], {}
    for arg in argv:
        name, _, path = arg.partition("=")
        if not path:
            sys.exit(f"compare_runs.py: '{arg}': expected NAME=STORE.db")
        tasks, solved[name] = load(path)
        runs.append((name, tasks))
    common = sorted(set.intersection(*(set(t) for _, t in runs)))
    if not common:
        sys.exit("compare_runs.py: the runs share no task")
    iters = min(max(max(t[n]) for n in common) for _, t in runs) + 1
    print(f"{len(common)} tasks, {iters} attempts per task (attempt 0 is the draft)")

    # the geomean of the best so far after k + 1 attempts; its last value is
    # the run's final geomean
    curve = {name: [geomean([best_upto(t[n], k) for n in common]) for k in range(iters)]
             for name, t in runs}
    final = {name: c[-1] for name, c in curve.items()}
    for name, t in runs:
        mine = [n for n in common if n in solved[name]]
        on_solved = geomean([best_upto(t[n], math.inf) for n in mine])
        print(f"  {name:8s} final geomean {final[name]:.3f}x (failed tasks at 1.0x); "
              f"over its {len(mine)} solved: {on_solved:.3f}x")
    base = runs[0][0]
    tb = runs[0][1]
    for name, t in runs[1:]:
        print(f"  ratio {base}/{name}: {final[base] / final[name]:.3f}")
        # paired: over the tasks both solved, best A / best B, at the runs'
        # whole budgets (as kevo report --compare)
        both = [n for n in common if n in solved[base] and n in solved[name]]
        if both:
            ratio = (geomean([best_upto(tb[n], math.inf) for n in both]) /
                     geomean([best_upto(t[n], math.inf) for n in both]))
            print(f"  paired geomean ratio {base}/{name} (tasks both solved): {ratio:.3f} "
                  f"over {len(both)} task(s)")
        else:
            print(f"  paired geomean ratio {base}/{name} (tasks both solved): - (none)")

    print("anytime geomean of the best so far, after k attempts:")
    print("  k      " + "".join(f"{name:>10s}" for name, _ in runs))
    for k in range(iters):
        print(f"  {k + 1:<6d} " + "".join(f"{curve[name][k]:9.3f}x" for name, _ in runs))

    # the same speedup at the level of the whole run: after how many attempts
    # each run's anytime geomean first reaches the smaller final geomean
    for name, _ in runs[1:]:
        target = min(final[base], final[name])
        k_base = next(k for k in range(iters) if curve[base][k] >= target * 0.999) + 1
        k_other = next(k for k in range(iters) if curve[name][k] >= target * 0.999) + 1
        print(f"attempts to the geomean {target:.3f}x (the smaller final one): "
              f"{base} {k_base}, {name} {k_other}")

    reach = {name: [] for name, _ in runs}
    first = {name: 0 for name, _ in runs}
    counted = 0
    for n in common:
        target = 0.9 * min(best_upto(t[n], iters - 1) for _, t in runs)
        if target < 1.1:
            continue
        counted += 1
        its = {name: first_reach(t[n], target) for name, t in runs}
        for name, _ in runs:
            reach[name].append(its[name])
        low = min(its.values())
        for name in its:
            if its[name] == low and list(its.values()).count(low) == 1:
                first[name] += 1
    print(f"iterations to the same speedup (90% of the smaller final best, "
          f">= 1.1x), over {counted} tasks:")
    for name, _ in runs:
        xs = reach[name]
        mean = sum(xs) / len(xs) if xs else float("nan")
        print(f"  {name:8s} mean attempt {mean:.2f}, first on {first[name]} task(s)")
    if counted:
        base_mean = sum(reach[base]) / counted
        for name, _ in runs[1:]:
            other = sum(reach[name]) / counted
            print(f"  {base} needs {base_mean - other:+.2f} attempts against {name}")


if __name__ == "__main__":
    main(sys.argv[1:])
