import sys, time, json, os
import anyio
from benchmarks.upstream import PROMPT, benchmark_client, default_logger_to_devnull, kimi_options, lean_upstream
from benchmarks.inprocess import adapter_request, bare_stream
from colibri_router.adapters import create_kimi_completion
import colibri_router.adapters.pipeline as P
import colibri_router.logs as L
MODE = sys.argv[1]; EXP = sys.argv[2:]
if "noredact" in EXP:
    L.redact = lambda t, *s: t
if "nots" in EXP:
    import structlog
    structlog.processors.TimeStamper.__call__ = lambda self, l, m, e: (e.__setitem__("timestamp", "2026-11-24T00:00:00.000000Z"), e)[1]
if "nolog" in EXP:
    P._log_success = lambda *a: None
if "nosettings" in EXP:
    s = P.load_settings(); P.load_settings = lambda: s
if "nowithin" in EXP:
    import contextlib
    class S:
        cancelled_caught = False
        def __enter__(self): return self
        def __exit__(self, *a): return False
    P.within = lambda s: S()
if "noresult" in EXP:
    import colibri_router.conversation as CV
    cached = {}
    orig_cr = P.Completion.contract_result
    def cr(self):
        if "r" not in cached: cached["r"] = orig_cr(self)
        return cached["r"]
    P.Completion.contract_result = cr
if "noredact2" in EXP:
    import colibri_router.logs as L2
    L2._redact_event = lambda a, b, e: e
if "nowrite" in EXP:
    L._SafeWriteLogger.msg = lambda self, m: None
    for n in ("log","debug","info","warn","warning","fatal","failure","err","error","critical","exception"):
        setattr(L._SafeWriteLogger, n, L._SafeWriteLogger.msg)
if "norender" in EXP:
    L._json_line = lambda l, m, e: "x"
if "stublogger" in EXP:
    class Stub:
        def info(self, *a, **k): pass
    st_ = Stub()
    P.get_logger = lambda *a: st_
if "nogc" in EXP:
    import gc; gc.disable()
if "urlcache" in EXP:
    import functools, httpx, colibri_router.transport as T
    parsed = functools.lru_cache(64)(httpx.URL)
    orig_build = httpx.AsyncClient.build_request
    def build(self, method, url, **kw):
        return orig_build(self, method, parsed(url) if isinstance(url, str) else url, **kw)
    httpx.AsyncClient.build_request = build
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
        N = 3000
        tb = ta = 0.0; rs=[]
        for i in range(N):
            if i % 2:
                t=time.perf_counter(); await bare(); t1=time.perf_counter(); await adapter(); t2=time.perf_counter()
                b, a = t1-t, t2-t1
            else:
                t=time.perf_counter(); await adapter(); t1=time.perf_counter(); await bare(); t2=time.perf_counter()
                a, b = t1-t, t2-t1
            tb += b; ta += a; rs.append(a/b)
        rs.sort()
        print(f"{MODE} {' '.join(EXP) or 'base':12s}: diff {(ta-tb)/N*1e6:5.0f} us  ratio {rs[N//2]:.3f}")
anyio.run(main)
