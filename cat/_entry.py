"""Entry point of the ``cat`` console script: our own commands, or the system ``cat``.

Named ``cat``, the script hides the system's ``cat`` inside an activated virtual
environment. So it decides from the arguments (mostly the first), before importing
anything else, whether a call is ours; every other call replaces this process with the next
``cat`` on PATH via ``os.execv``: stdin, stdout, exit codes and signals are then exactly
those of coreutils. The rule:

1. No argument: ours (the help) when stdin is a terminal, else the system ``cat`` (a filter).
2. ``--help``, ``-h``, ``--version``: ours.
3. One of our commands (``cat assess ...``): ours, unless an existing file (anything but a
   folder) has that name in the current folder. Then it goes to the system ``cat``, which
   prints the file, as a coreutils user expects; ``python -m cat COMMAND`` always runs ours.
4. A near miss of one of our commands (edit distance up to 1 for names of up to five
   letters, up to 2 for longer ones, transpositions counting 1; or a prefix of three
   letters or more) that is not an existing path, when no later argument names an existing
   path either: a one-line error, ``did you mean `cat assess`?``, exit code 2. Coreutils
   would only have failed on it (no such file), most likely with a confusing message about
   our options (``cat asses --pool x``: "unrecognized option '--pool'"). With a real file
   among the arguments (``cat notse todo.txt``) the call is a list of files to print, one
   of them mistyped, and goes to the system ``cat``.
5. Everything else (files, ``-``, options such as ``-n``): the system ``cat``, untouched.

The pass-through path imports only ``os``, ``signal`` and ``sys`` (and, for a first word
that is neither a file nor one of ``OWN_COMMANDS``, ``cat.cli.plugins`` to read the names
of the commands other packages add); the typer application (and with it everything
heavy) is imported only for our own commands.
"""

import os
import signal
import sys

OWN_COMMANDS: frozenset[str] = frozenset(
    {
        "calibrate",
        "simulate",
        "validate",
        "assess",
        "synth",
        "pool",
        "recalibrate",
        "leaderboard",
        "export",
        "compare",
    }
)
"""Sub-commands of the ``cat`` application itself; other packages add theirs (``cat demo``
comes from ``catdemo``) through entry points, which ``own_commands`` adds."""

_OWN_OPTIONS: frozenset[str] = frozenset({"--help", "-h", "--version"})

# Shorter prefixes ("sy", "re") are too often the start of a file name.
_MIN_PREFIX = 3
_EXIT_USAGE = 2

# Every console script that pip writes for this project imports this module, so these bytes
# near the top of a candidate mean it is another copy of us (another environment, a user
# install); executing it would loop forever instead of reaching coreutils.
_SIGNATURE = b"cat._entry"
_SNIFF_BYTES = 4096

_EXIT_CANNOT_EXECUTE = 126
_EXIT_NOT_FOUND = 127


def own_commands() -> frozenset[str]:
    """The commands of the ``cat`` application: ``OWN_COMMANDS`` and those that other
    packages add (``cat.cli.plugins``, which reads their names with ``os`` alone)."""
    from cat.cli.plugins import plugin_commands

    return OWN_COMMANDS | frozenset(plugin_commands())


def is_own_call(args: list[str], *, stdin_is_tty: bool, module: bool = False) -> bool:
    """Whether ``cat ARGS`` is for the ``cat`` application rather than the system ``cat``.

    With no arguments, a terminal on stdin means a person asking what the tool does (they
    get our help); a pipe means ``cat`` used as a filter. A command name that is also an
    existing file in the current folder is the file, unless ``module`` (``python -m cat``).
    """
    if not args:
        return stdin_is_tty
    first = args[0]
    if first in _OWN_OPTIONS:
        return True
    if not module and _is_printable_file(first):
        return False
    # Added commands are looked up last: a file or an option never reads their names.
    return first in OWN_COMMANDS or (_could_be_a_command(first) and first in own_commands())


def _is_printable_file(name: str) -> bool:
    # A folder does not count: coreutils can only answer "Is a directory" to it.
    return os.path.exists(name) and not os.path.isdir(name)


def suggest_command(args: list[str]) -> str | None:
    """The command that ``cat ARGS`` most likely meant, when its first argument is a near
    miss of one (rule 4 of the module docstring); None for every call to pass through."""
    if not args:
        return None
    word = args[0]
    if not _could_be_a_command(word) or os.path.lexists(word):
        return None
    if any(os.path.lexists(arg) for arg in args[1:] if arg != "-"):
        return None  # `cat notse file.txt`: a list of files, one of them mistyped
    word = word.lower()
    commands = own_commands()
    prefixed = [c for c in commands if len(word) >= _MIN_PREFIX and c.startswith(word)]
    if len(prefixed) == 1:
        return prefixed[0]
    distance, best = min((_edit_distance(word, c), c) for c in commands)
    return best if distance <= (1 if len(best) <= 5 else 2) else None


def _could_be_a_command(word: str) -> bool:
    # Letters and inner hyphens only: "notes.txt", "./asses", "-n" are never typos of ours.
    return word.isascii() and word[:1].isalpha() and word.replace("-", "").isalpha()


def _edit_distance(a: str, b: str) -> int:
    """Levenshtein distance where swapping two neighbours also counts 1 ("simualte")."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, 1):
        current = [i]
        for j, char_b in enumerate(b, 1):
            cost = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b))
            if i > 1 and j > 1 and char_a == b[j - 2] and a[i - 2] == char_b:
                cost = min(cost, previous2[j - 2] + 1)
            current.append(cost)
        previous2, previous = previous, current
    return previous[-1]


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


def main(*, module: bool = False) -> None:
    """Run the ``cat`` application, or hand the call to the system ``cat``.

    ``module``: called as ``python -m cat``, where a command name always means the command.
    """
    args = sys.argv[1:]
    if is_own_call(args, stdin_is_tty=os.isatty(0), module=module):
        from cat.cli.app import run

        run()
        return
    suggestion = suggest_command(args)
    if suggestion is not None:
        print(
            f"error: {args[0]!r} is neither a file nor a command; did you mean `cat {suggestion}`?",
            file=sys.stderr,
        )
        raise SystemExit(_EXIT_USAGE)
    _pass_through(args)
