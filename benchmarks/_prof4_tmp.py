import cProfile, pstats, anyio, sys
from benchmarks.upstream import PROMPT, benchmark_client, default_logger_to_devnull, kimi_options, lean_upstream
from colibri_router.adapters.kimi import KIMI, DEFAULT_MODEL
from colibri_router.conversation import CompletionRequest, user_prompt, tool_specs
from colibri_router.settings import load_settings
from colibri_router.providers import connect
from colibri_router.wires import codec_for_call
from colibri_router.progress import CallProgress
from colibri_router.transport import exchange
import colibri_router.adapters.pipeline as P
async def main():
    default_logger_to_devnull()
    async with lean_upstream() as up, benchmark_client() as client:
        opts = kimi_options(up.kimi_json_base_url, client)
        settings = load_settings(); conn = connect(KIMI, opts.api_key, opts.base_url)
        mk = lambda: CompletionRequest(model=DEFAULT_MODEL, messages=user_prompt(PROMPT), max_tokens=1024, system=None, tools=tool_specs(()))
        req = mk()
        codec = codec_for_call(KIMI, DEFAULT_MODEL, settings)
        enc = codec.encode(req); url, headers = codec.endpoint(conn.base_url, conn.api_key, req.model)
        body = await exchange(client, url, headers, enc.body, codec=codec, progress=CallProgress("kimi"))
        turn = codec.decode(body, req)
        comp = P.Completion(request=req, turn=turn, latency_ms=3, ttft_ms=None)
        pr = cProfile.Profile(); pr.enable()
        for _ in range(5000):
            r = mk(); e = codec.encode(r); codec.decode(body, r); comp.contract_result(); codec_for_call(KIMI, DEFAULT_MODEL, settings)
        pr.disable()
        pstats.Stats(pr).sort_stats('tottime').print_stats(30)
anyio.run(main)
