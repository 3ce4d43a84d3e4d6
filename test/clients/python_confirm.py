"""The official Python SDK (`mcp` 2.x) as a 2025-era remote client that can be
asked: over Streamable HTTP (the initialize handshake), a ClientSession with an
elicitation callback that answers every form as told. Calls delete_objects
with confirm: true and prints one JSON object: the questions it was asked and
the call's structuredContent. Run by test/e2e/legacy-confirm.test.ts:
  python python_confirm.py '{"url":…,"token":…,"bucket":…,"prefix":…,"answer":"accept"|"decline"}'"""
import asyncio
import json
import sys

import httpx2
from mcp import ClientSession, types
from mcp.client.streamable_http import streamable_http_client

cfg = json.loads(sys.argv[1])
asked = []


async def answer(context, params):
    asked.append(params.message)
    if cfg["answer"] == "accept":
        return types.ElicitResult(action="accept", content={"confirm": True})
    return types.ElicitResult(action="decline")


async def main():
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {cfg['token']}"}) as http:
        async with streamable_http_client(cfg["url"], http_client=http) as streams:
            async with ClientSession(streams[0], streams[1], elicitation_callback=answer) as session:
                init = await session.initialize()
                result = await session.call_tool(
                    "delete_objects", {"bucket_name": cfg["bucket"], "prefix": cfg["prefix"], "confirm": True}
                )
                print(json.dumps({
                    "protocol": init.protocol_version,
                    "asked": asked,
                    "structured": result.structured_content,
                    "is_error": result.is_error,
                }))


asyncio.run(main())
