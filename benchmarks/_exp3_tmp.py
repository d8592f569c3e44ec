import sys, json, asyncio
import anyio
from benchmarks.upstream import PROMPT, benchmark_client, default_logger_to_devnull, kimi_options, lean_upstream
from benchmarks.inprocess import adapter_request, bare_stream
from colibri_router.adapters import create_kimi_completion
import asyncio.base_events as BE
count = [0]; sel=[0]
orig = BE.BaseEventLoop._run_once
def counted(self):
    count[0] += 1
    return orig(self)
BE.BaseEventLoop._run_once = counted
MODE=sys.argv[1]
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
        for f in (bare, adapter, bare, adapter):
            for _ in range(50): await f()
            count[0]=0
            for _ in range(500): await f()
            print(f.__name__, count[0]/500)
asyncio.run(main())
