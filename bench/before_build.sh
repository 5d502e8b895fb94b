# bench/before_build.sh - sourced by the benches that time this tree
# against an older commit (attempt_cost.sh, eval_cost.sh): builds BEFORE
# once, in a git worktree under WORK, and reuses it after.
# Needs SRC, BEFORE, WORK and a die function; sets old (the worktree).
mkdir -p "$WORK"
chmod 755 "$WORK" # sandboxed runners (other uids) reach build folders beneath it
old=$WORK/before-$BEFORE
if [ ! -x "$old/build/kevo" ]; then
    echo "$(basename "$0" .sh): building $BEFORE in $old" >&2
    rm -rf "$old"
    git -C "$SRC" worktree add --detach "$old" "$BEFORE" >/dev/null 2>&1 ||
        die "cannot check out $BEFORE into $old"
    cmake -S "$old" -B "$old/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null &&
        cmake --build "$old/build" -j"$(nproc)" --target kevo >/dev/null ||
        die "cannot build $BEFORE"
fi
