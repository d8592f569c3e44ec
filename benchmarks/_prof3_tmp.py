import sys, time, json, io
import anyio
from benchmarks.upstream import PROMPT, benchmark_client, default_logger_to_devnull, kimi_options, lean_upstream
import colibri_router.adapters.pipeline as P
from colibri_router.adapters.kimi import KIMI, DEFAULT_MODEL
from colibri_router.conversation import CompletionRequest, user_prompt, tool_specs
from colibri_router.settings import load_settings
from colibri_router.providers import connect
from colibri_router.wires import codec_for_call
from colibri_router.retry import Deadline, with_retries, RetryPolicy
from colibri_router.progress import CallProgress
from colibri_router.deadlines import within
from colibri_router.transport import exchange, _JSON
def bench(name, fn, n=20000):
    for _ in range(500): fn()
    t=time.perf_counter()
    for _ in range(n): fn()
    print(f"{name:28s} {(time.perf_counter()-t)/n*1e6:6.2f} us")
async def abench(name, fn, n=20000):
    for _ in range(500): await fn()
    t=time.perf_counter()
    for _ in range(n): await fn()
    print(f"{name:28s} {(time.perf_counter()-t)/n*1e6:6.2f} us")
async def main():
    default_logger_to_devnull()
    async with lean_upstream() as up, benchmark_client() as client:
        opts = kimi_options(up.kimi_json_base_url, client)
        settings = load_settings()
        conn = connect(KIMI, opts.api_key, opts.base_url)
        bench("load_settings", load_settings)
        bench("connect", lambda: connect(KIMI, opts.api_key, opts.base_url, key_option="x"))
        mk = lambda: CompletionRequest(model=DEFAULT_MODEL, messages=user_prompt(PROMPT), max_tokens=1024, system=None, tools=tool_specs(()))
        bench("request", mk)
        req = mk()
        bench("codec_for_call", lambda: codec_for_call(KIMI, DEFAULT_MODEL, settings))
        codec = codec_for_call(KIMI, DEFAULT_MODEL, settings)
        bench("deadline+progress", lambda: (Deadline.after(300.0), CallProgress("kimi")))
        bench("clamp", lambda: P._clamp_temperature(req, codec.dialect))
        bench("encode", lambda: codec.encode(req))
        enc = codec.encode(req)
        bench("endpoint", lambda: codec.endpoint(conn.base_url, conn.api_key, req.model))
        bench("json body encode", lambda: _JSON.encode(enc.body).encode())
        d = Deadline.after(300)
        async def scope():
            with within(d.remaining()) as s:
                pass
        await abench("within scope", scope)
        async def nothing(): return 1
        async def retries():
            await with_retries(lambda: nothing(), policy=RetryPolicy(), sleep=anyio.sleep, deadline=d)
        await abench("with_retries", retries)
        url, headers = codec.endpoint(conn.base_url, conn.api_key, req.model)
        body = await exchange(client, url, headers, enc.body, codec=codec, progress=CallProgress("kimi"))
        bench("decode", lambda: codec.decode(body, req))
        turn = codec.decode(body, req)
        bench("log line", lambda: P._log_success("Kimi", turn, 3, None))
        comp = P.Completion(request=req, turn=turn, latency_ms=3, ttft_ms=None)
        bench("contract_result", comp.contract_result)
        bench("Completion()", lambda: P.Completion(request=req, turn=turn, latency_ms=3, ttft_ms=None))
anyio.run(main)
