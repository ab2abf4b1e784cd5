"""Running the local server: :class:`LocalServer` serves in a daemon thread of the caller's
process; :func:`main` is the command line (``python -m synth.local_server``), which
serves in its own process until SIGTERM or SIGINT."""

from __future__ import annotations

import argparse
import gzip
import json
import math
import signal
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from types import FrameType, TracebackType
from typing import Final

from itempool import PoolFormatError, PoolItem, read_questions
from synth.errors import SynthError
from synth.local_server.batches import BatchFaults, BatchService
from synth.local_server.faults import FaultPlan
from synth.local_server.handler import CompletionsHTTPServer
from synth.local_server.open_answers import JUDGE_MODES
from synth.local_server.protocol import ChatCompletions
from synth.local_server.records import RequestLog, RequestRecord
from synth.local_server.replay import read_replay
from synth.local_server.simulator import THINKING_MODES, Simulator, random_item_params

__all__ = ["LocalServer", "main"]

_NO_FAULTS: Final = FaultPlan()


class LocalServer:
    """An OpenAI-compatible chat-completions server for ``items``, serving in a daemon
    thread.

    ``models`` maps a model name to its probability of answering right; ``replay`` maps
    a replayed model's name to its recorded answers (item id -> 0/1: the key where 1, a
    wrong option where 0, a reply naming no option for an item it lacks; ``read_replay``
    reads them from a response matrix); ``replies`` maps a model's name to the very
    texts it sends (item id -> reply: recorded outputs of a real model); ``thinking`` maps
    a simulated model's name to where it reasons ("inline": a ``<think>`` block in the
    reply; "field": ``reasoning_content``), after weighing a wrong option;
    ``reasoning_gain`` maps a simulated model's name to what it loses (in θ, or in
    probability) when a request does not ask it to think step by step; ``judges`` maps
    a judge model's name to its mode (``synth.local_server.open_answers``); ``faults``
    sets the per-request fault rates; ``seed`` fixes answers and faults; ``log_path`` (optional)
    receives one JSON line per request as it happens. Use as a context manager or call
    :meth:`start` and :meth:`stop`.
    """

    def __init__(
        self,
        items: Sequence[PoolItem],
        models: Mapping[str, float],
        *,
        faults: FaultPlan = _NO_FAULTS,
        seed: int = 0,
        host: str = "127.0.0.1",
        port: int = 0,
        log_path: Path | None = None,
        irt: Mapping[str, tuple[float, float, float]] | None = None,
        judges: Mapping[str, str] | None = None,
        batch_faults: BatchFaults | None = None,
        replay: Mapping[str, Mapping[str, int]] | None = None,
        replies: Mapping[str, Mapping[str, str]] | None = None,
        thinking: Mapping[str, str] | None = None,
        reasoning_gain: Mapping[str, float] | None = None,
    ) -> None:
        self._simulator = Simulator(
            items, models, seed, irt, judges, replay, replies, thinking, reasoning_gain
        )
        self._log = RequestLog()
        self._api = ChatCompletions(self._simulator, faults, self._log)
        #: The Batch API's files and batches (``/v1/files``, ``/v1/batches``).
        self.batches = BatchService(self._api, batch_faults or BatchFaults(), seed)
        self._host = host
        self._port = port
        self._log_path = log_path
        self._server: CompletionsHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._base_url: str | None = None

    def start(self) -> str:
        """Bind (port 0 picks a free port), serve in a daemon thread; the base URL."""
        if self._server is not None:
            raise SynthError("the local server is already running")
        try:
            server = CompletionsHTTPServer((self._host, self._port), self._api, self.batches)
        except OSError as exc:
            raise SynthError(f"cannot listen on {self._host}:{self._port} ({exc})") from exc
        self._log.open(self._log_path)
        self._server = server
        host, port = server.server_address[:2]
        self._base_url = f"http://{_url_host(str(host))}:{port}/v1"
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="synth-local-server",
            daemon=True,
        )
        self._thread.start()
        return self._base_url

    def stop(self) -> None:
        """Stop serving, cut open connections, close the log; safe to call twice."""
        server, thread = self._server, self._thread
        if server is None:
            return
        server.stopping.set()
        server.shutdown()
        server.close_connections()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5.0)
        self._log.close()
        self._server = None
        self._thread = None

    @property
    def base_url(self) -> str:
        """``http://HOST:PORT/v1``, for ``OpenAI(base_url=...)``; only after :meth:`start`."""
        if self._base_url is None:
            raise SynthError("the local server has not been started")
        return self._base_url

    @property
    def records(self) -> list[RequestRecord]:
        """A copy of the request log so far, in arrival order of the outcomes."""
        return self._log.records()

    def p_right(self, model: str, item_id: str) -> float:
        """The probability that simulated ``model`` answers ``item_id`` right: its true
        expected accuracy on a pool is the mean of these (a replayed model: its recorded
        answer, 0 where it has none)."""
        return self._simulator.p_right(model, item_id)

    def completed_keys(self) -> list[str]:
        """The keys of requests answered in full (outcome ``"ok"``), in order."""
        return [r.key for r in self._log.records() if r.outcome == "ok"]

    def __enter__(self) -> LocalServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def parse_models(text: str) -> dict[str, float]:
    models: dict[str, float] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        name, sep, value = part.partition("=")
        try:
            p = float(value)
        except ValueError:
            p = float("nan")
        # The range is the simulator's to check: with --random-items a value is a θ.
        if not sep or not name.strip() or not math.isfinite(p):
            raise argparse.ArgumentTypeError(
                f"expected NAME=PROBABILITY (or NAME=THETA with --random-items), got {part!r}"
            )
        models[name.strip()] = p
    if not models:
        raise argparse.ArgumentTypeError("name at least one model, e.g. m1=0.8,m2=0.5")
    return models


def parse_judges(text: str) -> dict[str, str]:
    judges: dict[str, str] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        name, sep, mode = part.partition("=")
        if not sep or not name.strip() or mode.strip() not in JUDGE_MODES:
            raise argparse.ArgumentTypeError(
                f"expected NAME=MODE with a mode among {', '.join(JUDGE_MODES)}, got {part!r}"
            )
        judges[name.strip()] = mode.strip()
    return judges


def _names(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    if not names:
        raise argparse.ArgumentTypeError("name at least one subject, e.g. a,b")
    return names


def _thinking(text: str) -> dict[str, str]:
    """``--thinking NAME=inline|field,...``."""
    modes: dict[str, str] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, sep, mode = part.partition("=")
        if not sep or mode not in THINKING_MODES or not name:
            raise argparse.ArgumentTypeError(f"expected NAME=inline or NAME=field, got {part!r}")
        modes[name] = mode
    return modes


def read_replies(path: Path) -> dict[str, dict[str, str]]:
    """``--replies FILE``: each model's recorded reply per item, from JSON lines of
    ``model``, ``item_id`` and ``reply`` (``.gz`` read as gzip)."""
    opener = gzip.open if path.suffix == ".gz" else open
    replies: dict[str, dict[str, str]] = {}
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                row = json.loads(line)
                try:
                    replies.setdefault(str(row["model"]), {})[str(row["item_id"])] = str(
                        row["reply"]
                    )
                except (KeyError, TypeError) as exc:
                    raise SynthError(
                        f"--replies {path}:{number}: needs model, item_id and reply"
                    ) from exc
    except (OSError, json.JSONDecodeError) as exc:
        raise SynthError(f"--replies {path}: cannot read it ({exc})") from exc
    return replies


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m synth.local_server",
        description="Serve simulated models over an OpenAI-compatible chat-completions API.",
    )
    parser.add_argument("--pool", type=Path, required=True, help="pool folder, or a pool's name")
    parser.add_argument(
        "--models",
        type=parse_models,
        default={},
        help="NAME=P,... (P = right-answer rate); needed unless --replay gives models",
    )
    parser.add_argument(
        "--random-items",
        action="store_true",
        help="items differ as a real benchmark's do: each gets 3PL parameters drawn from "
        "--seed (a ~ lognormal(0, 0.3), b ~ normal(0, 1), c = 1 / options) and the "
        "--models values are abilities θ (e.g. strong=1.5,weak=-0.5)",
    )
    parser.add_argument(
        "--replay",
        type=Path,
        default=None,
        metavar="RESPONSES",
        help="a response matrix (.jsonl or wide .csv, optionally .gz): each subject becomes "
        "a model of its name answering as recorded (1: right, 0: a wrong option, no "
        "answer: a reply naming no option)",
    )
    parser.add_argument(
        "--replay-subjects",
        type=_names,
        default=None,
        metavar="A,B,...",
        help="replay only these subjects of --replay",
    )
    parser.add_argument(
        "--judges",
        type=parse_judges,
        default={},
        help="NAME=MODE,... scripted judges of open answers (MODE: " + ", ".join(JUDGE_MODES) + ")",
    )
    parser.add_argument(
        "--thinking",
        type=_thinking,
        default={},
        metavar="NAME=inline|field,...",
        help="simulated models that reason first, weighing a wrong option: in a <think> "
        "block of the reply (inline) or in the reasoning_content field (field)",
    )
    parser.add_argument(
        "--replies",
        type=Path,
        default=None,
        metavar="FILE",
        help="recorded replies to send word for word: JSON lines of model, item_id, reply",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log", type=Path, default=None, help="append request records here")
    for f in fields(FaultPlan):  # --rate-429 X, ..., --slow-seconds SECONDS
        parser.add_argument(
            "--" + f.name.replace("_", "-"),
            type=float,
            default=f.default,
            metavar="X" if f.metadata["kind"] == "rate" else "SECONDS",
        )
    for f in fields(BatchFaults):  # --batch-line-error-rate X, ..., --batch-max-enqueued N
        parser.add_argument(
            "--batch-" + f.name.replace("_", "-"),
            dest="batch_" + f.name,
            type=type(f.default),
            default=f.default,
            metavar="X" if isinstance(f.default, float) else "N",
            help="Batch API: " + f.metadata["help"],
        )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until SIGTERM or SIGINT; print ``READY <base_url>`` once listening."""
    parser = _parser()
    args = parser.parse_args(argv)
    if not args.models and args.replay is None and args.replies is None:
        parser.error("give --models NAME=P,..., --replay RESPONSES or --replies FILE")
    if args.replay_subjects is not None and args.replay is None:
        parser.error("--replay-subjects picks subjects of --replay RESPONSES: give that too")
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    try:
        faults = FaultPlan(**{f.name: getattr(args, f.name) for f in fields(FaultPlan)})
        batch_faults = BatchFaults(
            **{f.name: getattr(args, "batch_" + f.name) for f in fields(BatchFaults)}
        )
        pool = read_questions(args.pool)
        replay = None
        if args.replay is not None:
            replay = read_replay(args.replay, args.replay_subjects)
        replies = None if args.replies is None else read_replies(args.replies)
        irt = random_item_params(pool.items, args.seed) if args.random_items else None
        server = LocalServer(
            pool.items,
            args.models,
            faults=faults,
            seed=args.seed,
            host=args.host,
            port=args.port,
            log_path=args.log,
            judges=args.judges,
            batch_faults=batch_faults,
            replay=replay,
            replies=replies,
            thinking=args.thinking,
            irt=irt,
        )
        # Handlers first: a SIGTERM right after READY must still stop cleanly.
        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        base_url = server.start()
    except (SynthError, PoolFormatError) as exc:
        # Both messages name the file and the problem: a traceback would add nothing.
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        print(f"READY {base_url}", flush=True)
        # A timed wait keeps the main thread responsive to signals on every platform.
        while not stop.wait(0.5):
            pass
    finally:
        server.stop()
    return 0
