/*
 * fs_include_reference.c - the reference's build folder is a sibling of the
 * candidate's (kevo-eval-*/reference/kernel.c): includes it by a relative
 * path, so the candidate is the reference, read from a place it must not
 * see. Nothing here names the reference literally but the path.
 * Defences: anti-hack (an include that is not an allowed system header);
 * without it, the compiler's minimal root (only /usr, a few /etc files
 * and the candidate's own build folder are in view): the file is not
 * there, so compile_error.
 * Expected: rejected; without anti-hack: compile_error.
 */
#include "../reference/kernel.c"
