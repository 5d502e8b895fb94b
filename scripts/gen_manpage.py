#!/usr/bin/env python3
"""scripts/gen_manpage.py - the man page (kevo.1) and the bash completion
script of kevo, both written from the help text the built `kevo` prints:
`kevo --help`, `kevo CMD --help` for each command it lists, and
`kevo CMD SUB --help` for the subcommands those name, where that prints a
usage of its own. Run by the build (CMakeLists.txt, after kevo is linked),
so the page and the completion can never disagree with the CLI.

It must not do anything but read help: every kevo call runs in a fresh
empty folder with a throwaway HOME, under a timeout, and only output that
starts with "usage: kevo" is believed. The help parser is tolerant on
purpose (the CLI's flag parsing changes): usage lines start with
"usage: kevo" (continued on indented lines starting with "kevo " or "["),
option lines with two spaces then "--" or "-x, --", the description after
two or more spaces or on the next, more indented lines; everything else is
kept as preformatted text.

usage: gen_manpage.py --kevo PATH [--man OUT.1] [--completion OUT]
                      [--datadir DIR] [--version V]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

OPTION_RE = re.compile(r'^ {2}(?:(-[A-Za-z0-9]), )?(--[A-Za-z0-9][A-Za-z0-9_-]*)(.*)$')
PLACEHOLDER_RE = re.compile(r'^[A-Z][A-Z0-9_]*(\.\.\.)?$|[|\[:=<]')
FLAG_RE = re.compile(r'(?<![A-Za-z0-9_-])(--[A-Za-z0-9][A-Za-z0-9_-]*|-[A-Za-z](?=[\s\]|,]|$))')
ENV_RE = re.compile(r'\bKEVO_[A-Z0-9_]+\b')
WORD_RE = re.compile(r'^[a-z][a-z0-9-]*$')


class Kevo:
    """Runs the built kevo for its help only, in a sandbox of a folder."""

    def __init__(self, path):
        self.path = os.path.abspath(path)
        self.tmp = tempfile.mkdtemp(prefix='kevo-gen-man-')
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith('KEVO_') and k != 'XDG_CACHE_HOME'}
        self.env['HOME'] = os.path.join(self.tmp, 'home')
        self.env['KEVO_CACHE'] = 'off'
        self.env['LC_ALL'] = 'C'
        # a sanitizer build's kevo: a leak report is not the help's business
        self.env['ASAN_OPTIONS'] = 'detect_leaks=0'
        os.makedirs(self.env['HOME'])

    def help(self, *args):
        """The help text of `kevo ARGS --help`, or None when it prints none."""
        work = tempfile.mkdtemp(dir=self.tmp)
        try:
            r = subprocess.run([self.path, *args, '--help'], cwd=work, env=self.env,
                               stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=30)
        except (OSError, subprocess.TimeoutExpired) as e:
            print(f'gen_manpage.py: kevo {" ".join(args)} --help: {e}', file=sys.stderr)
            return None
        text = r.stdout if r.stdout.strip() else r.stderr
        if r.returncode != 0 or not text.startswith('usage: kevo'):
            return None
        # the throwaway HOME is the build's business, not the reader's
        return text.replace(self.env['HOME'], '~')

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)


class Help:
    """One help text cut into usage entries, options and the rest."""

    def __init__(self, text):
        self.text = text
        self.usage = []    # one string per synopsis entry ("kevo tasks list DIR...")
        self.options = []  # (short, long, arg, description)
        self.blocks = []   # ('text', [lines]) | ('options', [indices into options])
        lines = text.rstrip('\n').split('\n')
        i = 0
        while i < len(lines):
            line = lines[i]
            stripped = line.strip()
            if line.startswith('usage: kevo') or (self.usage and i > 0 and line.startswith(' ')
                                                  and stripped.startswith('kevo ')
                                                  and self._in_usage(lines, i)):
                self.usage.append(stripped[len('usage: '):] if line.startswith('usage:')
                                  else stripped)
                i += 1
                continue
            if self.usage and line.startswith(' ') and stripped.startswith('[') \
                    and self._in_usage(lines, i):
                self.usage[-1] += ' ' + stripped
                i += 1
                continue
            m = OPTION_RE.match(line)
            if m:
                short, flag, rest = m.group(1), m.group(2), m.group(3)
                arg, desc = split_option(rest)
                indent = len(line) - len(line.lstrip())
                j = i + 1
                while j < len(lines) and lines[j].strip() and \
                        len(lines[j]) - len(lines[j].lstrip()) > indent and \
                        not OPTION_RE.match(lines[j]):
                    desc += ' ' + lines[j].strip()
                    j += 1
                self.options.append((short, flag, arg, desc.strip()))
                if self.blocks and self.blocks[-1][0] == 'options':
                    self.blocks[-1][1].append(len(self.options) - 1)
                else:
                    self.blocks.append(('options', [len(self.options) - 1]))
                i = j
                continue
            if self.blocks and self.blocks[-1][0] == 'text':
                self.blocks[-1][1].append(line)
            else:
                self.blocks.append(('text', [line]))
            i += 1

    def _in_usage(self, lines, i):
        """Whether line i continues the usage block (no blank line since it)."""
        for k in range(i - 1, -1, -1):
            if not lines[k].strip():
                return False
            if lines[k].startswith('usage: kevo'):
                return True
        return False

    def flags(self):
        found = []
        for entry in self.usage:
            found += FLAG_RE.findall(entry)
        for short, flag, _, _ in self.options:
            found += [f for f in (short, flag) if f]
        for kind, body in self.blocks:
            if kind == 'text':  # "commands:" lines such as "  stats [--json]"
                for line in body:
                    if line.startswith('  '):
                        found += FLAG_RE.findall(line)
        return [f for f in unique(found) if f not in ('--help', '-h')]

    def command_list(self):
        """Entries of a "commands:" section: (name, line)."""
        out, inside = [], False
        for line in self.text.split('\n'):
            if line.strip() == 'commands:':
                inside = True
                continue
            if inside:
                if not line.strip():
                    inside = False
                    continue
                m = re.match(r'^  ([a-z][a-z0-9-]*)\b(.*)$', line)
                if m:
                    out.append((m.group(1), m.group(2)))
        return out


def split_option(rest):
    """The text after an option's flag -> (argument, description): the
    argument is the leading placeholder words (NAME, S, a|b, builtin[:SHARE])
    before two spaces; a description may follow one space only."""
    if rest.startswith('  ') or not rest.strip():
        return '', rest.strip()
    parts = re.split(r'\s{2,}', rest.strip(), maxsplit=1)
    head, desc = parts[0], parts[1] if len(parts) > 1 else ''
    words = head.split(' ')
    n = 0
    while n < len(words) and PLACEHOLDER_RE.search(words[n]):
        n += 1
    if n == len(words):
        return head, desc
    return ' '.join(words[:n]), (' '.join(words[n:]) + ' ' + desc).strip()


def unique(items):
    seen, out = set(), []
    for x in items:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out


def subcommands(cmd, h):
    """The subcommands a command's help names: usage entries `kevo CMD SUB ...`
    and the entries of its "commands:" section."""
    subs = []
    for entry in h.usage:
        words = entry.split()
        if len(words) >= 3 and words[0] == 'kevo' and words[1] == cmd and WORD_RE.match(words[2]):
            subs.append(words[2])
    subs += [name for name, _ in h.command_list()]
    return unique(subs)


def sub_flags(cmd, sub, h, own):
    """A subcommand's flags: its own help when it has one, else what its
    parent's help says on its usage entry or "commands:" line."""
    if own:
        return own.flags()
    found = []
    for entry in h.usage:
        words = entry.split()
        if len(words) >= 3 and words[1] == cmd and words[2] == sub:
            found += FLAG_RE.findall(entry)
    lines = h.text.split('\n')
    for i, line in enumerate(lines):
        if re.match(r'^  ' + re.escape(sub) + r'\b', line):
            found += FLAG_RE.findall(line)
            j = i + 1
            while j < len(lines) and re.match(r'^ {4,}', lines[j]):
                found += FLAG_RE.findall(lines[j])
                j += 1
    return [f for f in unique(found) if f not in ('--help', '-h')]


# ---------------------------------------------------------------- roff


def roff(text):
    """Escape plain text for roff: backslashes, hyphens, leading dots/quotes."""
    text = text.replace('\\', '\\e').replace('-', '\\-')
    if text.startswith('.') or text.startswith("'"):
        text = '\\&' + text
    return text


def roff_option(short, flag, arg):
    name = (f'\\fB{roff(short)}\\fR, ' if short else '') + f'\\fB{roff(flag)}\\fR'
    return name + (f' \\fI{roff(arg)}\\fR' if arg else '')


def roff_help(h, skip_usage=False):
    out = []
    if h.usage and not skip_usage:
        out += ['.PP', '.nf'] + [roff(u) for u in h.usage] + ['.fi']
    for kind, body in h.blocks:
        if kind == 'text':
            while body and not body[0].strip():
                body = body[1:]
            while body and not body[-1].strip():
                body = body[:-1]
            if not body:
                continue
            out += ['.PP', '.nf'] + [roff(line) if line.strip() else '' for line in body] + ['.fi']
        else:
            for idx in body:
                short, flag, arg, desc = h.options[idx]
                out += ['.TP', roff_option(short, flag, arg), roff(desc)]
    return out


def man_page(version, datadir, top, cmds):
    out = [
        '.\\" kevo.1 - generated by scripts/gen_manpage.py from the help text of kevo;',
        '.\\" edit the help text in src/cli/, not this file.',
        f'.TH KEVO 1 "" "kevo {roff(version)}" "User Commands"',
        '.SH NAME',
        'kevo \\- self\\-evolving kernel optimizer: drafts, verifies, times and remembers compute kernels',
        '.SH SYNOPSIS',
        '.nf',
        '\\fBkevo\\fR \\fIcommand\\fR [\\fIoptions\\fR]',
        '\\fBkevo\\fR \\fB\\-\\-help\\fR | \\fB\\-\\-version\\fR | \\fB\\-\\-data\\-dir\\fR',
    ]
    for name, h, _ in cmds:
        out += [roff(u) for u in h.usage]
    out += ['.fi', '.SH DESCRIPTION',
            'kevo writes compute kernels (with an LLM or its own built\\-in generator), '
            'verifies each through hard gates (anti\\-hacking, compile, correctness, latency, '
            'in a sandbox), and keeps every attempt and its measured outcome in an experience '
            'memory that later attempts draw on. Its commands:']
    for name, summary in top.command_list():
        out += ['.TP', f'\\fB{roff(name)}\\fR', roff(summary.strip())]
    if top.options:
        out += ['.PP', 'Options of \\fBkevo\\fR itself:']
        for short, flag, arg, desc in top.options:
            out += ['.TP', roff_option(short, flag, arg), roff(desc)]
    for name, h, subs in cmds:
        out += ['.SH ' + roff(f'KEVO {name.upper()}')] + roff_help(h)
        for sub, sh in subs:
            if sh:
                out += ['.SS ' + roff(f'kevo {name} {sub}')] + roff_help(sh)
    # every KEVO_* variable a help text names, with the option (or the line)
    # that names it
    env = {}
    helps = [('kevo', top)] + [(f'kevo {n}', h) for n, h, _ in cmds] + \
        [(f'kevo {n} {s}', sh) for n, _, subs in cmds for s, sh in subs if sh]
    for label, h in helps:
        for short, flag, arg, desc in h.options:
            for var in ENV_RE.findall(f'{arg} {desc}'):
                env.setdefault(var, []).append(f'{label} {flag}: {desc}')
        for kind, body in h.blocks:
            if kind == 'text':
                for line in body:
                    for var in ENV_RE.findall(line):
                        env.setdefault(var, []).append(f'{label}: {line.strip()}')
        for entry in h.usage:
            for var in ENV_RE.findall(entry):
                env.setdefault(var, []).append(entry)
    out += ['.SH ENVIRONMENT']
    for var in sorted(env):
        out += ['.TP', f'\\fB{roff(var)}\\fR', '\n.br\n'.join(roff(x) for x in unique(env[var]))]
    out += ['.SH FILES',
            '.TP', f'\\fI{roff(datadir)}\\fR',
            "kevo's data directory: \\fIharness/\\fR (the runners compiled with each candidate), "
            '\\fIprompts/\\fR (the LLM prompt templates), \\fIsuites/\\fR (the benchmark tasks; '
            'a relative suite path missing from the current directory is looked up here, so '
            '\\fBkevo run c/level1\\fR works anywhere). Found as \\fBkevo \\-\\-data\\-dir\\fR '
            'prints: \\fBKEVO_DATA_DIR\\fR, else \\fI../share/kevo\\fR next to the kevo '
            'executable. \\fBKEVO_HARNESS_DIR\\fR, \\fBKEVO_PROMPTS_DIR\\fR and '
            '\\fBKEVO_SUITES_DIR\\fR (the C suite \\fBkevo tasks link\\fR draws on) replace '
            'one folder each.',
            '.TP', '\\fIkevo.db\\fR',
            'the experience memory (SQLite) in the current directory unless \\fB\\-\\-db\\fR '
            'names another.',
            '.TP', '\\fI~/.cache/kevo/\\fR',
            'cached reference outputs, harness builds and peaks (\\fBKEVO_CACHE_DIR\\fR, '
            '\\fBXDG_CACHE_HOME\\fR; \\fBKEVO_CACHE=off\\fR turns caching off).',
            '.SH SEE ALSO',
            f'{roff(datadir)}/docs/ (install.md, architecture.md, task\\-format.md, ...)']
    return '\n'.join(out) + '\n'


# ---------------------------------------------------------------- bash


def choices(arg):
    """Values a flag argument spells out: "text|json|csv|html" -> those."""
    arg = arg.strip('[]')
    if '|' in arg and re.match(r'^[a-z0-9_:|-]+$', arg):
        return [a for a in arg.split('|') if a]
    return []


def bash_words(words):
    return ' '.join(words).replace("'", '')


def completion(top, cmds):
    names = [n for n, _ in top.command_list()]
    lines = [
        '# bash completion for kevo - generated by scripts/gen_manpage.py from the',
        '# help text of kevo (commands, subcommands, each command\'s --flags).',
        '_kevo()',
        '{',
        '    local cur=${COMP_WORDS[COMP_CWORD]} prev=""',
        '    (( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD-1]}',
        '    COMPREPLY=()',
        '    if (( COMP_CWORD == 1 )); then',
        f"        COMPREPLY=($(compgen -W '{bash_words(names + top.flags())}' -- \"$cur\"))",
        '        return 0',
        '    fi',
        '    local cmd=${COMP_WORDS[1]} sub="" subs="" flags="" values="" i',
        '    case "$cmd" in',
    ]
    for name, h, subs in cmds:
        if subs:
            lines.append(f"        {name}) subs='{bash_words([s for s, _ in subs])}' ;;")
    lines += [
        '    esac',
        '    for ((i = 2; i < COMP_CWORD; i++)); do',
        '        case " $subs " in *" ${COMP_WORDS[i]} "*) sub=${COMP_WORDS[i]}; break ;; esac',
        '    done',
        '    case "$cmd/$sub" in',
    ]
    for name, h, subs in cmds:
        for sub, _, flags in [(s, sh, f) for s, sh, f in subs_with_flags(name, h, subs)]:
            lines.append(f"        {name}/{sub}) flags='{bash_words(flags)}' ;;")
        lines.append(f"        {name}/*) flags='{bash_words(h.flags())}' ;;")
    lines += ['    esac', '    case "$prev" in']
    values = {}
    for helps in [[top]] + [[h] + [sh for _, sh in subs if sh] for _, h, subs in cmds]:
        for hh in helps:
            for short, flag, arg, _ in hh.options:
                vals = choices(arg)
                if vals:
                    values.setdefault(flag, vals)
            for entry in hh.usage:
                for flag, arg in re.findall(r'(--[a-z][a-z0-9-]*) ([a-z0-9_|:-]+)', entry):
                    if choices(arg):
                        values.setdefault(flag, choices(arg))
    for flag in sorted(values):
        lines.append(f"        {flag}) values='{bash_words(values[flag])}' ;;")
    lines += [
        '    esac',
        '    if [[ -n $values ]]; then',
        '        COMPREPLY=($(compgen -W "$values" -- "$cur"))',
        '    elif [[ $cur == -* ]]; then',
        '        COMPREPLY=($(compgen -W "$flags --help" -- "$cur"))',
        '    elif [[ -n $subs && -z $sub ]]; then',
        '        COMPREPLY=($(compgen -W "$subs" -- "$cur"))',
        '    else',
        '        compopt -o filenames 2>/dev/null',
        '        COMPREPLY=($(compgen -f -- "$cur"))',
    ]
    # commands whose usage takes DIR... (suites or tasks) also take the short
    # paths under the data directory's suites/ (kevo run c/level1)
    suite_cmds = [n for n, h, _ in cmds if any(re.search(r'DIR\.\.\.', u) for u in h.usage)]
    if suite_cmds:
        lines += [
            f'        case "$cmd" in {"|".join(suite_cmds)})',
            '            local data',
            '            data=$("${COMP_WORDS[0]}" --data-dir 2>/dev/null)',
            '            [[ -d $data/suites ]] && COMPREPLY+=($(cd "$data/suites" && compgen -d -- "$cur"))',
            '            ;;',
            '        esac',
        ]
    lines += [
        '    fi',
        '    return 0',
        '}',
        'complete -F _kevo kevo',
    ]
    return '\n'.join(lines) + '\n'


def subs_with_flags(name, h, subs):
    return [(sub, sh, sub_flags(name, sub, h, sh)) for sub, sh in subs]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--kevo', required=True, help='the built kevo')
    ap.add_argument('--man', help='write the man page here')
    ap.add_argument('--completion', help='write the bash completion script here')
    ap.add_argument('--datadir', default='PREFIX/share/kevo',
                    help='the installed data directory the FILES section names')
    ap.add_argument('--version', default='', help='the version the page names')
    args = ap.parse_args()
    if not os.access(args.kevo, os.X_OK):
        print(f'gen_manpage.py: {args.kevo}: not an executable', file=sys.stderr)
        return 2
    kevo = Kevo(args.kevo)
    try:
        top_text = kevo.help()
        if top_text is None:
            print(f'gen_manpage.py: {args.kevo} --help printed no "usage: kevo" text',
                  file=sys.stderr)
            return 3
        top = Help(top_text)
        names = [n for n, _ in top.command_list()]
        if not names:
            print('gen_manpage.py: kevo --help lists no commands (no "commands:" section)',
                  file=sys.stderr)
            return 3
        cmds = []
        for name in names:
            text = kevo.help(name)
            if text is None:
                print(f'gen_manpage.py: kevo {name} --help printed no "usage: kevo" text',
                      file=sys.stderr)
                return 3
            h = Help(text)
            subs = []
            for sub in subcommands(name, h):
                st = kevo.help(name, sub)
                # only a usage of its own is the subcommand's help (not the parent's again)
                own = Help(st) if st and st != text and re.match(r'^usage: kevo (\S+ )*' + re.escape(name) +
                                                   r'( \[[^]]*\])* ' + re.escape(sub) + r'\b',
                                                   st) else None
                subs.append((sub, own))
            cmds.append((name, h, subs))
        version = args.version
        if not version:
            r = subprocess.run([kevo.path, '--version'], capture_output=True, text=True)
            version = r.stdout.split()[-1] if r.returncode == 0 and r.stdout.split() else ''
        if args.man:
            with open(args.man + '.tmp', 'w') as f:
                f.write(man_page(version, args.datadir, top, cmds))
            os.replace(args.man + '.tmp', args.man)
        if args.completion:
            with open(args.completion + '.tmp', 'w') as f:
                f.write(completion(top, cmds))
            os.replace(args.completion + '.tmp', args.completion)
    finally:
        kevo.close()
    return 0


if __name__ == '__main__':
    sys.exit(main())
