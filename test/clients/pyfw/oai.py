"""The OpenAI Agents SDK for Python (0.22): the tools converted as the SDK converts them with strict schemas, each call
through the SDK's own MCP invocation (the JSON the model would send, null fill-ins included), over stdio and Streamable
HTTP, and an agent run to the end against the stand-in chat-completions model."""
import asyncio
import json
import logging

from agents import Agent, OpenAIChatCompletionsModel, RunContextWrapper, Runner, set_tracing_disabled
from agents.mcp import MCPServerStdio, MCPServerStreamableHttp
from agents.mcp.util import MCPUtil
from common import BINARY, BUCKET, CALLS, HTTP_TOKEN, HTTP_URL, MODEL_URL, SERVER_ARGS, SERVER_ENV, emit, shown
from openai import AsyncOpenAI

logging.disable(logging.WARNING)
set_tracing_disabled(True)


async def exercise(server):
    out = {}
    tools = {t.name: t for t in await server.list_tools()}
    out["tools"] = sorted(tools)
    agent = Agent(name="probe")
    converted = {name: MCPUtil.to_function_tool(t, server, True, agent) for name, t in tools.items()}
    out["strict"] = sorted(name for name, f in converted.items() if f.strict_json_schema)
    calls = {}
    for label, (name, args) in CALLS.items():
        try:
            value = await MCPUtil.invoke_mcp_tool(server, tools[name], RunContextWrapper(context=None), json.dumps(args))
            calls[label] = {"ok": True, "value": shown(value)}
        except Exception as err:
            calls[label] = {"ok": False, "error": shown(str(err), 600)}
    out["calls"] = calls
    return out


async def main():
    out = {"framework": "openai-agents"}
    async with MCPServerStdio(params={"command": BINARY, "args": SERVER_ARGS, "env": SERVER_ENV}, client_session_timeout_seconds=60) as stdio:
        out["stdio"] = await exercise(stdio)
        if MODEL_URL:
            model = OpenAIChatCompletionsModel(model="gpt-stand-in", openai_client=AsyncOpenAI(base_url=MODEL_URL, api_key="stand-in"))
            agent = Agent(name="storage", instructions="Use the tools.", mcp_servers=[stdio], mcp_config={"convert_schemas_to_strict": True}, model=model)
            try:
                result = await Runner.run(agent, f"What does notes.txt in {BUCKET} say?", max_turns=4)
                out["agent"] = {"ok": True, "answer": shown(result.final_output)}
            except Exception as err:
                out["agent"] = {"ok": False, "error": shown(str(err), 600)}
    if HTTP_URL:
        params = {"url": HTTP_URL, "headers": {"Authorization": f"Bearer {HTTP_TOKEN}"}}
        async with MCPServerStreamableHttp(params=params, client_session_timeout_seconds=60) as http:
            out["http"] = await exercise(http)
    emit(out)


asyncio.run(main())
