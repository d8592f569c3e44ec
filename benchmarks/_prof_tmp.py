import asyncio, cProfile, pstats, sys, time
from dataclasses import replace
import anyio
from benchmarks.upstream import PROMPT, benchmark_client, default_logger_to_devnull, kimi_options, lean_upstream
from benchmarks.inprocess import adapter_request, bare_stream
from colibri_router.adapters import create_kimi_completion
import json
MODE = sys.argv[1]  # sse|json
PROF = len(sys.argv) > 2
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
        for _ in range(200):
            await bare(); await adapter()
        N = 3000
        if PROF:
            pr = cProfile.Profile(); pr.enable()
            for _ in range(N): await adapter()
            pr.disable()
            st = pstats.Stats(pr); st.sort_stats('tottime').print_stats(45)
            return
        tb = ta = 0.0
        rs=[]
        for i in range(N):
            t=time.perf_counter(); await bare(); t1=time.perf_counter(); await adapter(); t2=time.perf_counter()
            rs.append((t2-t1)/(t1-t))
            tb += t1-t; ta += t2-t1
        rs.sort()
        print(f"{MODE}: bare {tb/N*1e6:.0f} us adapter {ta/N*1e6:.0f} us  diff {(ta-tb)/N*1e6:.0f} us median ratio {rs[N//2]:.3f}")
anyio.run(main)
