"""LangChain (langchain-mcp-adapters 0.3.2, langchain 1.4, langchain-openai 1.6): the tools as the adapters convert
them and as LangChain converts those for OpenAI (strict and not), each call through the tool's own ainvoke (as a tool
call, so content and artifact both show; null and "" fill-ins included) over stdio and Streamable HTTP, and a
create_agent run to the end against the stand-in chat model."""
import asyncio
import logging

from common import BINARY, BUCKET, CALLS, HTTP_TOKEN, HTTP_URL, MODEL_URL, SERVER_ARGS, SERVER_ENV, emit, shown
from langchain_core.utils.function_calling import convert_to_openai_tool
from langchain_mcp_adapters.client import MultiServerMCPClient

logging.disable(logging.WARNING)


async def exercise(client, server):
    out = {}
    tools = {t.name: t for t in await client.get_tools(server_name=server)}
    out["tools"] = sorted(tools)
    converted = {}
    for strict in (True, False):
        ok = []
        for name, tool in tools.items():
            try:
                convert_to_openai_tool(tool, strict=strict)
                ok.append(name)
            except Exception:
                pass
        converted["strict" if strict else "plain"] = sorted(ok)
    out["converted"] = converted
    calls = {}
    for i, (label, (name, args)) in enumerate(CALLS.items()):
        try:
            message = await tools[name].ainvoke({"type": "tool_call", "id": f"call_{i}", "name": name, "args": args})
            calls[label] = {"ok": True, "value": shown(message.content), "artifact": shown(getattr(message, "artifact", None), 600), "status": getattr(message, "status", None)}
        except Exception as err:
            calls[label] = {"ok": False, "error": shown(f"{type(err).__name__}: {err}", 600)}
    out["calls"] = calls
    return out, list(tools.values())


async def main():
    servers = {"s3": {"command": BINARY, "args": SERVER_ARGS, "env": SERVER_ENV, "transport": "stdio"}}
    if HTTP_URL:
        servers["s3http"] = {"url": HTTP_URL, "transport": "streamable_http", "headers": {"Authorization": f"Bearer {HTTP_TOKEN}"}}
    client = MultiServerMCPClient(servers)
    out = {"framework": "langchain"}
    out["stdio"], tools = await exercise(client, "s3")
    if HTTP_URL:
        out["http"], _ = await exercise(client, "s3http")
    if MODEL_URL:
        from langchain.agents import create_agent
        from langchain_openai import ChatOpenAI

        try:
            agent = create_agent(ChatOpenAI(model="gpt-stand-in", base_url=MODEL_URL, api_key="stand-in"), tools)
            state = await agent.ainvoke({"messages": [{"role": "user", "content": f"What does notes.txt in {BUCKET} say?"}]})
            out["agent"] = {"ok": True, "answer": shown(state["messages"][-1].content)}
        except Exception as err:
            out["agent"] = {"ok": False, "error": shown(f"{type(err).__name__}: {err}", 600)}
    emit(out)


asyncio.run(main())
