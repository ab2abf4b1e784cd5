"""A local OpenAI-compatible chat-completions server with simulated models and faults.

Tests, the offline demo and the throughput benchmark talk to it with the real ``openai``
client, so the wire format is the real one: ``POST /v1/chat/completions`` answers with a
``chat.completion`` object, ``GET /v1/models`` lists the simulated models, errors come as
``{"error": {...}}`` with the status codes the client maps to its exception types.

A simulated model is a name and the probability that it answers a question right, or a
replayed one: a subject of a response matrix answering as it did (``--replay``). The
server recognises which pool item a request is about by finding the item's question text
in the request's messages, then draws the answer from a generator seeded by a stable hash
of (server seed, item, model, messages): the same request always gets the same reply, and
distinct requests are independent draws. Faults (429, 500, slow, malformed JSON, dropped
connection) are drawn per request from a separate generator, so a retry can succeed.

Standard library only. Run it in-process with :class:`LocalServer` or as a separate
process with ``python -m synth.local_server`` (prints ``READY <base_url>`` once listening).

The parts, from the inside out:

- ``simulator``: which item a request asks about, right or wrong, and the reply text;
- ``replay``: :func:`read_replay`, the recorded answers replayed models give;
- ``faults``: :class:`FaultPlan`, the per-request fault rates;
- ``records``: :class:`RequestRecord` and the request log;
- ``protocol``: the OpenAI request/response bodies (request in, reply out, no sockets);
- ``handler``: the HTTP server and request handler;
- ``server``: :class:`LocalServer` (serves in a thread) and the command line, :func:`main`.
"""

from synth.local_server.faults import FaultPlan
from synth.local_server.records import OUTCOMES, RequestRecord
from synth.local_server.replay import read_replay
from synth.local_server.server import LocalServer, main

__all__ = ["OUTCOMES", "FaultPlan", "LocalServer", "RequestRecord", "main", "read_replay"]
