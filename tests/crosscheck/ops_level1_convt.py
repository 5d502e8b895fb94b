"""NumPy definitions of the Level 1 transposed convolutions (suites/c/level1
065..080, KernelBench level1 58, 61, 64, 65, 68-75, 77-79, 81).

Written as a gather, independently of the C references (which scatter): a
transposed convolution is an ordinary correlation of the input spread out
by the stride (stride - 1 zeros between samples), padded by
dilation*(k - 1) on both sides (plus output_padding at the high end), with
the kernel flipped in every spatial axis and its two channel axes swapped;
the result is then cropped by `padding` on both sides. Groups split the
channels into blocks that are convolved separately. Computed in float64.

Hyper-parameters are restated here from the KernelBench problem files,
not read from task.json.
"""
import numpy as np


def conv_transpose(x, w, stride, padding, output_padding, dilation, groups):
    """x (N, C, *I), w (C, OC/groups, *K) as torch's ConvTranspose weight."""
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    nd = x.ndim - 2
    N, C = x.shape[:2]
    ins, ks = x.shape[2:], w.shape[2:]
    ocg = w.shape[1]
    cg = C // groups
    # spread the input by the stride
    spread = np.zeros((N, C) + tuple((i - 1) * s + 1 for i, s in zip(ins, stride)))
    spread[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in stride)] = x
    # pad so that every tap of the dilated kernel sees the full output
    pads = [(0, 0), (0, 0)] + [(d * (k - 1), d * (k - 1) + op)
                               for k, d, op in zip(ks, dilation, output_padding)]
    xp = np.pad(spread, pads)
    full = tuple(xp.shape[2 + a] - dilation[a] * (ks[a] - 1) for a in range(nd))
    wf = w[(slice(None), slice(None)) + (slice(None, None, -1),) * nd]  # flipped taps
    y = np.zeros((N, groups * ocg) + full)
    for g in range(groups):
        xs = xp[:, g * cg:(g + 1) * cg]
        ws = wf[g * cg:(g + 1) * cg]                                     # cg, ocg, *K
        acc = np.zeros((N, ocg) + full)
        for tap in np.ndindex(*ks):
            win = xs[(slice(None), slice(None)) +
                     tuple(slice(t * d, t * d + f) for t, d, f in zip(tap, dilation, full))]
            acc += np.einsum("nc...,co->no...", win, ws[(slice(None), slice(None)) + tap])
        y[:, g * ocg:(g + 1) * ocg] = acc
    crop = tuple(slice(p, f - p) for p, f in zip(padding, full))
    return y[(slice(None), slice(None)) + crop]


def per_axis(v, nd):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * nd


def make(kernel, stride=1, padding=0, output_padding=0, dilation=1, groups=1):
    """A CHECKS entry for a bias-free ConvTranspose{nd}d with these settings;
    nd is the length of `kernel` (a tuple, one size per spatial axis)."""
    nd = len(kernel)
    s, p = per_axis(stride, nd), per_axis(padding, nd)
    op, d = per_axis(output_padding, nd), per_axis(dilation, nd)

    def check(inp, sizes):
        w = inp["w"]
        if tuple(w.shape[2:]) != tuple(kernel):
            raise ValueError(f"weight taps {w.shape[2:]}, KernelBench's kernel is {kernel}")
        if inp["x"].ndim != nd + 2 or w.shape[0] != inp["x"].shape[1] or \
                w.shape[1] * groups != sizes["OC"]:
            raise ValueError(f"x {inp['x'].shape} / w {w.shape} do not fit groups {groups}")
        return {"y": conv_transpose(inp["x"], w, s, p, op, d, groups)}
    return check


CHECKS = {
    # level1/58: kernel (3, 5, 7), defaults otherwise
    "conv_transpose3d_asym_input_asym_kernel": make((3, 5, 7)),
    # level1/61: kernel 3, defaults
    "conv_transpose3d": make((3, 3, 3)),
    # level1/64: kernel 3, defaults
    "conv_transpose1d": make((3,)),
    # level1/65: kernel (3, 7), defaults
    "conv_transpose2d_asym_kernel": make((3, 7)),
    # level1/68: kernel (3, 5, 5), defaults
    "conv_transpose3d_asym_kernel": make((3, 5, 5)),
    # level1/69: kernel (3, 5), defaults
    "conv_transpose2d_asym_input_asym_kernel": make((3, 5)),
    # level1/70: kernel 3, defaults
    "conv_transpose3d_asym_input": make((3, 3, 3)),
    # level1/71: kernel 3, defaults
    "conv_transpose2d_asym_input": make((3, 3)),
    # level1/72: kernel (3, 5, 7), stride 2, padding (1, 2, 3), output_padding 1, groups 4
    "conv_transpose3d_asym_strided_padded_grouped":
        make((3, 5, 7), stride=(2, 2, 2), padding=(1, 2, 3), output_padding=(1, 1, 1), groups=4),
    # level1/73: kernel 3, stride 2, padding 1; groups 1 in the module KernelBench builds:
    # get_init_inputs() gives [in, out, k, stride, padding, groups] positionally, so the
    # groups = 4 lands in Model's (unused) output_padding argument
    "conv_transpose3d_strided_padded": make((3, 3, 3), stride=2, padding=1, groups=1),
    # level1/74: kernel 5, dilation 3
    "conv_transpose1d_dilated": make((5,), dilation=3),
    # level1/75: kernel (3, 5), stride (2, 3), padding (1, 2), dilation (2, 1), groups 4
    "conv_transpose2d_strided_grouped_padded_dilated":
        make((3, 5), stride=(2, 3), padding=(1, 2), dilation=(2, 1), groups=4),
    # level1/77: kernel 3, stride 2, padding 1, dilation 2
    "conv_transpose3d_padded_dilated_strided": make((3, 3, 3), stride=2, padding=1, dilation=2),
    # level1/78: kernel (3, 7), stride 1, padding (1, 3)
    "conv_transpose2d_asym_padded": make((3, 7), stride=(1, 1), padding=(1, 3)),
    # level1/79: kernel 3, stride 2, padding 1, dilation 2
    "conv_transpose1d_padded_strided_dilated": make((3,), stride=2, padding=1, dilation=2),
    # level1/81: kernel 3, stride 5, padding 1, dilation 2
    "conv_transpose2d_dilated_padded_strided": make((3, 3), stride=5, padding=1, dilation=2),
}
