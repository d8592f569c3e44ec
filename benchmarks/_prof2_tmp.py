import sys, time, json
import anyio
from benchmarks.upstream import PROMPT, benchmark_client, default_logger_to_devnull, kimi_options, lean_upstream
from benchmarks.inprocess import adapter_request, bare_stream
from colibri_router.adapters import create_kimi_completion
import colibri_router.adapters.pipeline as P
MODE = sys.argv[1]
acc = {"ex": 0.0}
orig = P.exchange
async def timed(*a, **k):
    t = time.perf_counter()
    try:
        return await orig(*a, **k)
    finally:
        acc["ex"] += time.perf_counter() - t
P.exchange = timed
async def main():
    default_logger_to_devnull()
    async with lean_upstream() as up, benchmark_client() as client:
        base = up.kimi_base_url if MODE == "sse" else up.kimi_json_base_url
        opts = kimi_options(base, client)
        req = await adapter_request(opts)
        async def bare():
            if MODE == "sse":
                await bare_stream(client, req)
            else:
                r = await client.post(req.url, headers=req.headers, content=req.content); json.loads(r.content)
        async def adapter():
            await create_kimi_completion(PROMPT, opts)
        for _ in range(300):
            await bare(); await adapter()
        N = 4000; acc["ex"] = 0
        tb = ta = 0.0
        for i in range(N):
            t=time.perf_counter(); await bare(); t1=time.perf_counter(); await adapter(); t2=time.perf_counter()
            tb += t1-t; ta += t2-t1
        print(f"{MODE}: bare {tb/N*1e6:.0f} adapter {ta/N*1e6:.0f} diff {(ta-tb)/N*1e6:.0f} | exchange {acc['ex']/N*1e6:.0f} (vs bare {(acc['ex']-tb)/N*1e6:+.0f}) outside {(ta-acc['ex'])/N*1e6:.0f}")
anyio.run(main)
