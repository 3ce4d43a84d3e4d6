"""Drives the compiled server through the official Python SDK (`mcp` 2.x), as a
Python agent framework built on it does: over stdio and over Streamable HTTP,
list the tools, then call them with what such clients send. Prints one JSON
object: per scenario, the CallToolResult as the SDK parsed it. Run by
test/e2e/python-sdk.test.ts:  python python_sdk.py '{"binary":…,"env":{…},"bucket":…,"url":…,"token":…}'"""
import asyncio
import json
import sys

import httpx2
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

cfg = json.loads(sys.argv[1])
bucket = cfg["bucket"]
SCENARIOS = {
    "text": ("get_object", {"bucket_name": bucket, "object_key": "notes.txt"}),
    "binary": ("get_object", {"bucket_name": bucket, "object_key": "blob.bin"}),
    "unknown": ("get_object", {"bucket_name": bucket, "object_key": "notes.txt", "wait_for_previous": True}),
    # What a framework that makes every parameter required fills in.
    "filled": ("get_object", {"bucket_name": bucket, "object_key": "notes.txt", "version_id": "", "mode": "read", "local_path": "", "max_content_size": 1048576, "overwrite": False, "offset": 0, "include_binary": False}),
    "page": ("list_objects", {"bucket_name": bucket, "max_keys": 1, "prefix": "", "delimiter": "", "continuation_token": ""}),
}


def dump(result):
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


async def drive(session):
    out = {"protocol": None}
    init = await session.initialize()
    out["protocol"] = init.protocol_version if hasattr(init, "protocol_version") else init.protocolVersion
    tools = await session.list_tools()
    out["tools"] = sorted(t.name for t in tools.tools)
    for name, (tool, args) in SCENARIOS.items():
        out[name] = dump(await session.call_tool(tool, args))
    return out


async def drive_client(client):
    async with client:
        tools = await client.list_tools()
        return {
            "protocol": client.protocol_version,
            "tools": sorted(t.name for t in tools.tools),
            "text": dump(await client.call_tool(*SCENARIOS["text"])),
            "unknown": dump(await client.call_tool(*SCENARIOS["unknown"])),
        }


async def main():
    results = {}
    params = StdioServerParameters(command=cfg["binary"], args=[], env=cfg["env"])
    async with stdio_client(params) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            results["stdio"] = await drive(session)
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {cfg['token']}"}) as http:
        async with streamable_http_client(cfg["url"], http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                results["http"] = await drive(session)
    # The high-level Client in each way it settles the protocol: probing with server/discover (auto, its default),
    # the initialize handshake (legacy), and 2026-07-28 adopted without a probe.
    for mode in ("auto", "legacy", "2026-07-28"):
        results[f"stdio-{mode}"] = await drive_client(Client(params, mode=mode))
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {cfg['token']}"}) as http:
            results[f"http-{mode}"] = await drive_client(Client(streamable_http_client(cfg["url"], http_client=http), mode=mode))
    print(json.dumps(results))


asyncio.run(main())
