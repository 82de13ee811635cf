"""Run an unmodified PyTorch script on newch: ``python -m newch.run [--report] SCRIPT [ARGS...]``.

``import torch`` and ``import torchvision`` in the script (and everything it
imports) load newch, through an import hook (``newch.torch_hook``). The script
runs as ``__main__`` with the ``sys.argv``, ``__file__`` and exit code it would
have under ``python SCRIPT``; ``-m module`` runs a module as ``python -m`` does.
``--report`` prints, at the end, every torch name the script touched and whether
newch has it. ``step_end()`` is never required: a PyTorch-style loop stays in
bounded memory because each temporary's bytes return to the arena when the
script drops it.
"""
import os
import runpy
import sys

from . import torch_hook

USAGE = """usage: python -m newch.run [--report] SCRIPT [ARGS...]
       python -m newch.run [--report] -m MODULE [ARGS...]

Runs a PyTorch script with `torch` and `torchvision` resolved to newch.
  --report   print, at the end, every torch name the script used and whether newch has it
"""


def parse(argv):
    """(report, module_or_None, script_or_None, script_args) from the runner's arguments."""
    report = False
    i = 0
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "-m":
        if argv[i] == "--report":
            report = True
        elif argv[i] in ("-h", "--help"):
            raise SystemExit(USAGE)
        else:
            raise SystemExit(f"newch.run: unknown option {argv[i]!r}\n{USAGE}")
        i += 1
    rest = argv[i:]
    if not rest:
        raise SystemExit(USAGE)
    if rest[0] == "-m":
        if len(rest) < 2:
            raise SystemExit(f"newch.run: -m needs a module name\n{USAGE}")
        return report, rest[1], None, rest[2:]
    return report, None, rest[0], rest[1:]


def run(argv=None):
    """Run what ``argv`` names (default ``sys.argv[1:]``); returns nothing, exits as the script does."""
    report, module, script, args = parse(sys.argv[1:] if argv is None else argv)
    torch_hook.install()
    try:
        if module is not None:
            sys.argv = [module] + args          # NOTE: runpy puts the module's path in argv[0]
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        else:
            if not os.path.exists(script):
                raise SystemExit(f"newch.run: can't open file {script!r}: no such file")
            sys.argv = [script] + args
            sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
            runpy.run_path(script, run_name="__main__")
    finally:
        if report:
            print(torch_hook.report(), file=sys.stderr)


def main():
    """Console entry point (``newch-run``)."""
    run()


if __name__ == "__main__":
    main()
