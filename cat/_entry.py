"""Entry point of the ``cat`` console script: our own commands, or the system ``cat``.

Named ``cat``, the script hides the system's ``cat`` inside an activated virtual
environment. So every call that is not one of our own commands (``cat file``,
``cat -n x``, ``cat`` reading a pipe, ``cat -``) replaces this process with the next
``cat`` on PATH via ``os.execv``: stdin, stdout, exit codes and signals are then exactly
those of coreutils. That path imports only ``os``, ``signal`` and ``sys``; the typer
application (and with it everything heavy) is imported only for our own commands.
"""

import os
import signal
import sys

OWN_COMMANDS: frozenset[str] = frozenset(
    {"calibrate", "simulate", "validate", "assess", "synth", "demo", "pool", "recalibrate"}
)
"""Sub-commands handled by the ``cat`` application rather than the system ``cat``."""

_OWN_OPTIONS: frozenset[str] = frozenset({"--help", "-h", "--version"})

# Every console script that pip writes for this project imports this module, so these bytes
# near the top of a candidate mean it is another copy of us (another environment, a user
# install); executing it would loop forever instead of reaching coreutils.
_SIGNATURE = b"cat._entry"
_SNIFF_BYTES = 4096

_EXIT_CANNOT_EXECUTE = 126
_EXIT_NOT_FOUND = 127


def is_own_call(args: list[str], *, stdin_is_tty: bool) -> bool:
    """Whether ``cat ARGS`` is for the ``cat`` application rather than the system ``cat``.

    With no arguments, a terminal on stdin means a person asking what the tool does (they
    get our help); a pipe means ``cat`` used as a filter.
    """
    if not args:
        return stdin_is_tty
    return args[0] in OWN_COMMANDS or args[0] in _OWN_OPTIONS


def _own_scripts() -> set[str]:
    """Real paths of the files that are this program, never to be executed as the system cat."""
    own: set[str] = set()
    if sys.argv and sys.argv[0]:
        own.add(os.path.realpath(sys.argv[0]))
    # Under ``python -m cat`` argv[0] is the module's path, so also exclude the console
    # script of the running environment. Only inside a virtual environment: otherwise the
    # interpreter's bin directory may be /usr/bin, whose ``cat`` is the one we want.
    if sys.prefix != sys.base_prefix:
        bin_dirs = {os.path.join(sys.prefix, "Scripts" if os.name == "nt" else "bin")}
        if sys.executable:
            bin_dirs.add(os.path.dirname(sys.executable))
        own.update(os.path.realpath(os.path.join(d, "cat")) for d in bin_dirs)
    return own


def _is_our_script(path: str) -> bool:
    try:
        with open(path, "rb") as file:
            head = file.read(_SNIFF_BYTES)
    except OSError:
        # Executable but unreadable (mode --x): not a Python script, so not us.
        return False
    return _SIGNATURE in head


def find_system_cat(path_var: str | None = None) -> str | None:
    """The first executable ``cat`` on PATH that is not this program, or None."""
    if path_var is None:
        path_var = os.environ.get("PATH", os.defpath)
    own = _own_scripts()
    for directory in path_var.split(os.pathsep):
        # An empty PATH entry means the current directory, as for execvp.
        candidate = os.path.join(directory or os.curdir, "cat")
        if not os.path.isfile(candidate) or not os.access(candidate, os.X_OK):
            continue
        if os.path.realpath(candidate) in own or _is_our_script(candidate):
            continue
        return candidate
    return None


def _pass_through(args: list[str]) -> None:
    system_cat = find_system_cat()
    if system_cat is None:
        print(
            f"cat: no system 'cat' found on PATH to pass {' '.join(args)!r} to",
            file=sys.stderr,
        )
        raise SystemExit(_EXIT_NOT_FOUND)
    # Python ignores SIGPIPE and SIGXFSZ at start-up and ignored signals survive exec;
    # restore the defaults so that `cat big | head` ends silently, as coreutils does.
    for name in ("SIGPIPE", "SIGXFSZ"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    try:
        # argv[0] "cat": coreutils names itself after it in messages, busybox dispatches on it.
        os.execv(system_cat, ["cat", *args])
    except OSError as exc:
        print(f"cat: cannot execute {system_cat}: {exc.strerror}", file=sys.stderr)
        raise SystemExit(_EXIT_CANNOT_EXECUTE) from None


def main() -> None:
    """Run the ``cat`` application, or hand the call to the system ``cat``."""
    args = sys.argv[1:]
    if is_own_call(args, stdin_is_tty=os.isatty(0)):
        from cat.cli.app import run

        run()
        return
    _pass_through(args)
