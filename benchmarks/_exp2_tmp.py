import sys, time, json
import anyio, httpx
from benchmarks.upstream import PROMPT, benchmark_client, default_logger_to_devnull, kimi_options, lean_upstream
from benchmarks.inprocess import adapter_request
from colibri_router.adapters.kimi import KIMI, DEFAULT_MODEL
from colibri_router.conversation import CompletionRequest, user_prompt, tool_specs
from colibri_router.settings import load_settings
from colibri_router.providers import connect
from colibri_router.wires import codec_for_call
from colibri_router.transport import _JSON, json_object
pc = time.perf_counter
async def main():
    default_logger_to_devnull()
    async with lean_upstream() as up, benchmark_client() as client:
        opts = kimi_options(up.kimi_json_base_url, client)
        sreq = await adapter_request(opts)
        settings = load_settings(); conn = connect(KIMI, opts.api_key, opts.base_url)
        req = CompletionRequest(model=DEFAULT_MODEL, messages=user_prompt(PROMPT), max_tokens=1024, system=None, tools=tool_specs(()))
        codec = codec_for_call(KIMI, DEFAULT_MODEL, settings)
        enc = codec.encode(req); url, headers = codec.endpoint(conn.base_url, conn.api_key, req.model)
        A = [0.0]*4; B=[0.0]*4
        async def ours(acc):
            t0=pc()
            payload = _JSON.encode(enc.body).encode()
            rh = {**headers, "content-type": "application/json", "accept": "text/event-stream, application/x-ndjson"}
            request = client.build_request("POST", url, headers=rh, content=payload)
            t1=pc()
            response = await client.send(request, stream=True)
            t2=pc()
            ct = response.headers.get("content-type", "")
            raw = await response.aread()
            json_object(raw, codec, response.status_code)
            t3=pc()
            await response.aclose()
            t4=pc()
            for i,(x,y) in enumerate(((t0,t1),(t1,t2),(t2,t3),(t3,t4))): acc[i]+=y-x
        async def bare(acc):
            t0=pc()
            request = client.build_request("POST", sreq.url, headers=sreq.headers, content=sreq.content)
            t1=pc()
            response = await client.send(request)
            t2=pc()
            json.loads(response.content)
            t3=pc()
            acc[1]+=t2-t1; acc[0]+=t1-t0; acc[2]+=t3-t2
        for _ in range(300):
            await ours([0]*4); await bare([0]*4)
        N=4000
        for i in range(N):
            if i%2: await ours(A); await bare(B)
            else: await bare(B); await ours(A)
        print("ours", [round(x/N*1e6,1) for x in A], round(sum(A)/N*1e6,1))
        print("bare", [round(x/N*1e6,1) for x in B], round(sum(B)/N*1e6,1))
anyio.run(main)
