"""A loopback Kimi upstream that costs next to nothing, in its own process: the benchmarks' upstream.

``tests/fake_upstream/`` is for tests: it validates every request like Moonshot does, records it,
scripts replies, generates each SSE stream anew and spends a thread per connection, about 3 ms of
Python CPU per request. Run inside the benchmark process, it also shares the GIL with the client
under test: 100 concurrent bare httpx streams against it take as long as colibri-router's, so a
benchmark would measure the fake. This server answers from bytes computed once at start, on one
asyncio loop, in a process of its own (the benchmark spawns it with ``sys.executable``)::

    python benchmarks/lean_upstream.py [--latency-s 0.2] [--answer TEXT] [--prefix /kimi/v1]

It prints its port on stdout once it listens on 127.0.0.1 (port 0: the system picks), and exits
when its stdin closes (so it cannot outlive the benchmark) or on SIGTERM. Routes::

    POST {prefix}/chat/completions        Kimi's chat.completion.chunk SSE stream if the body says
                                          "stream": true, else the chat.completion JSON body
    POST {prefix}/json/chat/completions   the JSON body whatever the request asks (the adapters
                                          accept a JSON answer to a streamed request)

The stream is the wire shape the fake sends (``kimi_text`` → ``kimi_sse_events``), one HTTP chunk
per event, all in one write. ``--latency-s`` waits (asyncio.sleep) before the first byte of every
answer. HTTP/1.1 keep-alive with Content-Length request bodies is all it parses; no validation.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # the fake's body builders
from fake_upstream import kimi_sse_events, kimi_text, sse_frame

BACKLOG = 1024  # benchmarks open 100+ connections at once


def responses(answer: str) -> tuple[bytes, bytes]:
    """(the SSE answer, the JSON answer) as complete HTTP/1.1 responses."""
    body = kimi_text(answer).body
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(f), f) for f in map(sse_frame, kimi_sse_events(body)))
    sse = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
    sse += b"Transfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n"
    data = json.dumps(body).encode()
    plain = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(data), data)
    return sse, plain


NOT_FOUND = b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n\r\nno route\n"


class CannedUpstream:
    def __init__(self, latency_s: float, answer: str, prefix: str) -> None:
        self.latency_s = latency_s
        self.sse, self.json = responses(answer)
        self.stream_path = f"{prefix}/chat/completions".encode()
        self.json_path = f"{prefix}/json/chat/completions".encode()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One connection: requests one after the other (keep-alive) until the client closes it."""
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                request_line, *lines = head[:-4].split(b"\r\n")
                method, path, _version = request_line.split(b" ", 2)
                headers = {name.strip().lower(): value.strip() for name, _, value in (h.partition(b":") for h in lines)}
                body = await reader.readexactly(int(headers.get(b"content-length", b"0")))
                writer.write(await self.answer(method, path, body))
                await writer.drain()
                if headers.get(b"connection", b"").lower() == b"close":
                    break
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass  # the client hung up (or sent what this does not parse): close
        except asyncio.CancelledError:
            # Shutting down with this connection idle: end quietly. Left cancelled, the task makes
            # Python 3.11's start_server callback print a traceback (task.exception() raises).
            pass
        finally:
            writer.close()

    async def answer(self, method: bytes, path: bytes, body: bytes) -> bytes:
        if method != b"POST" or path not in (self.stream_path, self.json_path):
            return NOT_FOUND
        streamed = path == self.stream_path and json.loads(body).get("stream") is True
        if self.latency_s > 0:
            await asyncio.sleep(self.latency_s)
        return self.sse if streamed else self.json


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="lean_upstream.py", description=__doc__.partition("\n")[0])
    parser.add_argument("--latency-s", type=float, default=0.0, help="wait before every answer (default 0)")
    parser.add_argument("--answer", default="echo: say hi", help="the assistant's text in every answer")
    parser.add_argument("--prefix", default="/kimi/v1", help="path of the base URL (default /kimi/v1)")
    args = parser.parse_args(argv)
    upstream = CannedUpstream(args.latency_s, args.answer, args.prefix.rstrip("/"))
    server = await asyncio.start_server(upstream.serve, "127.0.0.1", 0, backlog=BACKLOG)
    print(server.sockets[0].getsockname()[1], flush=True)
    # Serve until stdin reaches end of file: the benchmark closes it, or dies. Then stop without
    # waiting for idle keep-alive connections; asyncio.run cancels their tasks.
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.buffer.read)
    server.close()


if __name__ == "__main__":
    asyncio.run(main())
