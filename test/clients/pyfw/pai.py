"""Pydantic AI 2.33 (its MCPToolset, on FastMCP's client and the MCP SDK v2): the tools it lists, each call through
its direct_call_tool (null fill-ins included) over stdio and Streamable HTTP, and an agent run to the end against the
stand-in models: OpenAI chat and Anthropic."""
import asyncio
import logging

from common import ANTHROPIC_URL, BINARY, BUCKET, CALLS, HTTP_TOKEN, HTTP_URL, MODEL_URL, SERVER_ARGS, SERVER_ENV, emit, shown
from fastmcp.client.transports import StdioTransport
from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset

logging.disable(logging.WARNING)


async def exercise(toolset):
    out = {}
    async with toolset:
        out["tools"] = sorted(t.name for t in await toolset.list_tools())
        calls = {}
        for label, (name, args) in CALLS.items():
            try:
                calls[label] = {"ok": True, "value": shown(await toolset.direct_call_tool(name, args))}
            except Exception as err:
                calls[label] = {"ok": False, "error": shown(f"{type(err).__name__}: {err}", 600)}
        out["calls"] = calls
    return out


async def agent_run(toolset, model):
    try:
        result = await Agent(model, toolsets=[toolset]).run(f"What does notes.txt in {BUCKET} say?")
        return {"ok": True, "answer": shown(result.output)}
    except Exception as err:
        return {"ok": False, "error": shown(f"{type(err).__name__}: {err}", 600)}


def stdio():
    return MCPToolset(StdioTransport(command=BINARY, args=SERVER_ARGS, env=SERVER_ENV))


async def main():
    out = {"framework": "pydantic-ai", "stdio": await exercise(stdio())}
    if HTTP_URL:
        out["http"] = await exercise(MCPToolset(HTTP_URL, headers={"Authorization": f"Bearer {HTTP_TOKEN}"}))
    if MODEL_URL:
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        out["agent_openai"] = await agent_run(stdio(), OpenAIChatModel("gpt-stand-in", provider=OpenAIProvider(base_url=MODEL_URL, api_key="stand-in")))
    if ANTHROPIC_URL:
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        out["agent_anthropic"] = await agent_run(stdio(), AnthropicModel("claude-stand-in", provider=AnthropicProvider(base_url=ANTHROPIC_URL, api_key="stand-in")))
    emit(out)


asyncio.run(main())
